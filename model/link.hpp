// PCIe link generation, width and state, and what sysfs says about them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/port_settings.hpp"
#include "model/result.hpp"

namespace pcieval {

// Generation of a link, named after its per-lane transfer rate (PCIE-FACTS 1).
enum class PcieGen : std::uint8_t {
  kGen1 = 1,  // 2.5 GT/s
  kGen2 = 2,  // 5.0 GT/s
  kGen3 = 3,  // 8.0 GT/s
  kGen4 = 4,  // 16.0 GT/s
  kGen5 = 5,  // 32.0 GT/s
  kGen6 = 6,  // 64.0 GT/s
  kGen7 = 7,  // 128.0 GT/s
};

inline constexpr int kMaxPcieGen = 7;

[[nodiscard]] double transfer_rate_gts(PcieGen gen);
[[nodiscard]] int generation_number(PcieGen gen);
// "Gen4".
[[nodiscard]] std::string to_string(PcieGen gen);
// 1..7; anything else is an error.
[[nodiscard]] Result<PcieGen> gen_from_number(int number);
// Exact per-lane rate in GT/s (2.5, 5, 8, 16, 32, 64, 128).
[[nodiscard]] Result<PcieGen> gen_from_gts(double rate_gts);

// Parses the text of sysfs current_link_speed / max_link_speed, old and new
// kernels: "16.0 GT/s PCIe" (>= 5.7), "16 GT/s" and "2.5 GT/s" (<= 5.6), with
// or without the trailing newline. "Unknown" and "Unknown speed" are errors
// that say the kernel could not decode the link speed.
[[nodiscard]] Result<PcieGen> parse_sysfs_link_speed(std::string_view text);

// Widths the spec defines: x1 x2 x4 x8 x12 x16 x32.
[[nodiscard]] bool is_valid_link_width(int lanes);

// One state of a link: a generation and a number of lanes.
struct LinkState {
  PcieGen gen = PcieGen::kGen1;
  int width = 1;

  bool operator==(const LinkState&) const = default;
};

// "Gen4 x16".
[[nodiscard]] std::string to_string(const LinkState& state);

// "Gen3 x16, Gen4 x8 or Gen5 x4": the links a number fits, in a reason.
[[nodiscard]] std::string join_states(const std::vector<LinkState>& states);

// A link trains no higher than the lower capability of its two ends, in speed
// and in width independently (a Gen5 x8 port and a Gen4 x16 card give Gen4 x8).
[[nodiscard]] LinkState lower_of(const LinkState& a, const LinkState& b);

// The words every reading of a port without link registers ends with.
inline constexpr std::string_view kNoLinkAttributes = "exposes no PCIe link attributes";

// What one port reports about its own link: capability (LnkCap, sysfs max_*)
// and negotiated state (LnkSta, sysfs current_*), kept as separate fields.
struct PortLinkReading {
  Reading<PcieGen> max_speed = make_error("not read");
  Reading<int> max_width = make_error("not read");
  Reading<PcieGen> current_speed = make_error("not read");
  Reading<int> current_width = make_error("not read");
  // Schema 1.7. The port's payload sizes, ASPM and ACS (issue 28): an error
  // saying why when they were not read (kSettingsNeedRoot for an
  // unprivileged live read), never a guess that they are off.
  Reading<PortSettings> settings = make_error("not read");

  // A port whose four readings all succeeded.
  [[nodiscard]] static PortLinkReading known(const LinkState& capable, const LinkState& negotiated);
  // A port none of whose readings could be taken, for the one reason given.
  [[nodiscard]] static PortLinkReading unknown(const Error& reason);
  // A port with no link registers at all (`who` names it: "0000:00:01.0"): a
  // conventional PCI bridge, a guest's emulated bridge. Each reading says
  // "<who> exposes no PCIe link attributes" (kNoLinkAttributes), words that
  // survive a results document's round trip.
  [[nodiscard]] static PortLinkReading without_link(const std::string& who);

  // True when every reading failed because the port has no link registers
  // (without_link): such an end reads nothing and contradicts nothing. Any
  // other failed reading is a reading that is missing or broken.
  [[nodiscard]] bool has_no_link() const;

  // Both halves known, or the first reason one is not.
  [[nodiscard]] Reading<LinkState> capable() const;
  [[nodiscard]] Reading<LinkState> negotiated() const;
};

}  // namespace pcieval
