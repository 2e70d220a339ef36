// The bandwidth budget of a PCIe link, computed from first principles
// (PCIE-FACTS.md sections 1 and 2), never looked up from measured numbers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/link.hpp"
#include "model/measurement.hpp"
#include "model/path.hpp"
#include "model/result.hpp"

namespace pcieval {

enum class LineCode {
  k8b10b,     // Gen1, Gen2
  k128b130b,  // Gen3 to Gen5
  kFlit,      // Gen6 and later: 256-byte flits, 1b/1b, 236 bytes of TLP area
};

[[nodiscard]] LineCode line_code_of(PcieGen gen);
[[nodiscard]] std::string_view to_string(LineCode code);  // "8b/10b", "128b/130b", "flit"
// Fraction of line bits that carry TLP bytes: 0.8, 128/130, or 236/256 in flit
// mode (the flit's DLLP, CRC and FEC bytes are charged here, not per TLP).
[[nodiscard]] double encoding_efficiency(LineCode code);

struct BudgetOptions {
  // Max_Payload_Size programmed in DevCtl (128..4096, a power of two); 256 is
  // what most root complexes and GPUs settle on.
  int max_payload_bytes = 256;
  // GPUs address host memory with 64-bit addresses: 4-DW request headers.
  bool address_64bit = true;
  bool ecrc = false;  // TLP digest, rarely enabled
};

// One direction of a link, in parts, so every step can be checked against
// the sources. All rates are per direction; the link is full duplex.
struct LinkBudget {
  LinkState link;
  double rate_gts_per_lane = 0;
  LineCode line_code = LineCode::k128b130b;
  double encoding_efficiency = 0;
  // rate x lanes x encoding / 8: the byte rate before any protocol overhead.
  double raw_gbps = 0;

  int payload_bytes = 0;  // the max payload size used below
  // Posted memory writes (device-to-host DMA): header + framing + ECRC per TLP.
  int write_overhead_bytes = 0;
  double write_efficiency = 0;  // payload / (payload + overhead)
  double write_gbps = 0;        // raw_gbps x write_efficiency
  // Completions with data (host-to-device DMA reads), MPS-sized: the best case.
  int completion_overhead_bytes = 0;
  double read_efficiency = 0;
  double read_gbps = 0;
  // Not charged yet: DLLPs (Ack, UpdateFC) and SKP ordered sets, 0.9 % to 9.8 %
  // depending on the estimate (PCIE-FACTS 2.4); the validator's floors absorb it.
};

// The smallest Max_Payload_Size programmed (DevCtl) on any end of `links`,
// when every end with link registers had its settings read and gives it;
// nullopt otherwise, never a guess: a budget then assumes BudgetOptions'
// 256 bytes, as every budget did before the settings were read. One end
// programmed at 128 bytes caps every TLP the path carries, whatever the
// others allow.
[[nodiscard]] std::optional<int> programmed_payload_bytes(const PciPath& links);

// BudgetOptions with the payload programmed on `links` where it was read.
[[nodiscard]] BudgetOptions budget_options_for(const PciPath& links);

// "max payload 128 bytes, as programmed on the path" where `links`' payload
// was read; "" where the budget assumes 256 bytes (what a reason said before
// the settings were read, so that those reasons stay as they were).
[[nodiscard]] std::string payload_note(const PciPath& links);

// REQUIRES nothing: a width or payload size the spec does not define is an error.
[[nodiscard]] Result<LinkBudget> link_budget(const LinkState& link, const BudgetOptions& options = {});

// The budget of a copy the probe key names: a peer write (p2p_write_*) is a
// stream of posted writes (write_gbps), a peer read (p2p_read_*) gets its data
// back as completions (read_gbps); other keys as direction_budget_gbps.
[[nodiscard]] Result<double> probe_budget_gbps(const LinkBudget& budget, std::string_view probe, Direction direction);

// The budget a copy in `direction` is held to: device-to-host copies are the
// GPU's posted writes (write_gbps); host-to-device copies are the GPU's reads,
// whose data returns as completions (read_gbps). Host-to-host copies cross no
// PCIe link: an error.
[[nodiscard]] Result<double> direction_budget_gbps(const LinkBudget& budget, Direction direction);

// How far a measured rate may sit above its budget before the budget itself
// is wrong. The budget charges no DLLP or SKP overhead (0.9 % to 9.8 %,
// PCIE-FACTS 2.4), so no real copy reaches it: the best healthy figures of
// PCIE-FACTS 3 sit at 0.95 of it (H100 Gen5 x16, nvbandwidth 55.3 of 58.45
// GB/s). 3 % over leaves room for a tool's timing and rounding; a number
// beyond it did not cross the link the budget is for (a faster or wider link,
// an emulated port's made-up state, NVLink-C2C).
inline constexpr double kAboveBudgetSlack = 1.03;

// What a device's whole path should carry: the lower of every link's expected
// state, in speed and width separately (a Gen5 x16 GPU behind a Gen4 x16
// switch uplink gets Gen4 x16). An error when the path is empty or any link's
// expected state is unknown.
[[nodiscard]] Result<LinkState> path_expected_state(const PciPath& path);

}  // namespace pcieval
