// Judges measured copy bandwidth against the budget of the link the GPU's path
// should train to, and says which links a low number fits.
#pragma once

#include <optional>
#include <vector>

#include "model/evidence.hpp"
#include "model/link.hpp"
#include "model/measurement.hpp"
#include "model/verdict.hpp"

namespace pcieval {

struct BandwidthRuleOptions {
  // bandwidth_low below this fraction of the budget. Derived from PCIE-FACTS
  // section 3 against this project's budget (reads for h2d, posted writes for
  // d2h, MPS 256): healthy GPUs reach 0.95 (H100 Gen5 x16, nvbandwidth CE
  // 55.3 of 58.45 h2d), 0.88 (A100 Gen4, bandwidthTest 25.7 of 29.22) and 0.83
  // (P100 Gen3, 12.15 of 14.61); Azure's per-SKU acceptance floors sit at 0.82
  // (H100, 48) and 0.72 (A100, 21). 0.75 passes every healthy figure there
  // and fails the platform-limited A100 PCIe host (17.3 h2d, 0.59).
  double floor_fraction = 0.75;
  int min_trials = 3;
  // A spread above this (coefficient of variation of the trials) means the
  // median cannot be trusted: something else used the link or the host.
  double max_cv = 0.10;
};

// One verdict per judged measurement: the copy-engine probes h2d_ce and
// d2h_ce of one GPU alone, from pinned memory (the numbers a link budget is
// for). Subject: the GPU's address, so the table shows it on the GPU's row.
// - bandwidth_too_noisy (inconclusive): fewer trials than min_trials, or CV
//   above max_cv;
// - bandwidth_below_budget (bandwidth_low): the median under floor x budget;
//   the reason names the links the number fits and the likely causes the
//   evidence supports (registers already downgraded, a remote host buffer, a
//   host ceiling below the budget, or, with registers at full state, a
//   silent downgrade or a platform limit);
// - bandwidth_at_budget (pass) otherwise.
// Also one verdict per group_ce total (subject "port <bdf>", a switch upstream
// port): judged the same way against the lower of the shared uplink's budget
// and the sum of the GPUs' own budgets. GPUs directly under a root port share
// no PCIe link and are not judged.
// A measurement whose GPU or path budget is unknown gets no verdict: the link
// verdict of that GPU is already inconclusive.
[[nodiscard]] std::vector<Verdict> judge_bandwidth(const Evidence& evidence, const BandwidthRuleOptions& options);

// The measurements a link budget is for: h2d_ce and d2h_ce of one GPU alone,
// from pinned memory. Bandwidth verdicts, compare and --baseline use these.
[[nodiscard]] bool is_link_budget_measurement(const Measurement& m);

// What a GPU's copies in one direction are held to: the budget of the state
// its whole path should train to (path_expected_state), reads for h2d and
// posted writes for d2h. nullopt when the GPU is not in the evidence or a
// link of its path is unknown.
struct PathBudget {
  const DeviceRecord* device = nullptr;
  LinkState link;
  double budget_gbps = 0;
};
[[nodiscard]] std::optional<PathBudget> gpu_path_budget(const Evidence& evidence, const PciAddress& gpu,
                                                        Direction direction);

// Link states (generation 1..6, width 1..16) whose budget in `direction`
// holds `measured_gbps` between floor_fraction x budget and the budget itself
// (3 % over it allowed for the model's rounding), no faster or wider than
// `ceiling`, highest budget first.
[[nodiscard]] std::vector<LinkState> links_that_fit(double measured_gbps, Direction direction, const LinkState& ceiling,
                                                    double floor_fraction);

}  // namespace pcieval
