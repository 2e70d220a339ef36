// Judges measured copy bandwidth against the budget of the link the GPU's path
// should train to, and says which links a low number fits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/link.hpp"
#include "model/measurement.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"
#include "validate/expectation.hpp"

namespace pcieval {

// One verdict per judged measurement: the copy-engine probes h2d_ce and
// d2h_ce of one GPU alone, from pinned memory (the numbers a link budget is
// for). Subject: the GPU's address, so the table shows it on the GPU's row.
// Thresholds come from `profile` as resolved for that GPU (thresholds.hpp).
// - probe_failed (inconclusive), instead of any other verdict of that
//   measurement: its copied data was not verified (Measurement::verified
//   false), so its number proves nothing; the engine reports such a copy as a
//   probe failure, and validate of a document that holds one agrees;
// - gpu_busy_before_run (inconclusive), once per GPU instead of its copy
//   verdicts: NVML read the GPU busier than max_gpu_utilization_percent
//   before the probes, so another job shared the link;
// - bandwidth_too_noisy (inconclusive): fewer trials than min_trials, or CV
//   above max_cv;
// - bandwidth_below_budget (bandwidth_low): the median under floor x budget;
//   the reason names the links the number fits and the likely causes the
//   evidence supports (registers already downgraded, a remote host buffer, a
//   host ceiling below the budget, or, with registers at full state, a
//   silent downgrade or a platform limit);
// - bandwidth_in_warning_band (pass): at or above the floor but under
//   warn_fraction x budget;
// - bandwidth_at_budget (pass) otherwise.
// Also one verdict per group_ce total (subject "port <bdf>", a switch upstream
// port): judged the same way against the lower of the shared uplink's budget
// and the sum of the GPUs' own budgets. GPUs directly under a root port share
// no PCIe link and are not judged.
// - no_link_budget (inconclusive): the evidence gives no budget for the
//   GPU's path (no link of it, a state unknown, the port above not in the
//   evidence); the reason says why. Every measured GPU gets a verdict;
// - bandwidth_above_budget (inconclusive): the median above the budget by
//   more than kAboveBudgetSlack: the budget is wrong (the port above is
//   emulated or misreported), so no verdict can rest on it.
[[nodiscard]] std::vector<Verdict> judge_bandwidth(const Evidence& evidence, const ThresholdProfile& profile);

// The probe_failed (inconclusive) verdict of a measurement whose data was not
// verified, for `subject`: the copy rules above and the collective rules
// give it instead of judging the number.
[[nodiscard]] Verdict unverified_measurement(const Measurement& m, std::string subject);

// The measurements a link budget is for: h2d_ce and d2h_ce of one GPU alone,
// from pinned memory. Bandwidth verdicts, compare and --baseline use these.
[[nodiscard]] bool is_link_budget_measurement(const Measurement& m);

// What a GPU's copies in one direction are held to: the budget of the state
// its whole path should carry (validate/expectation.hpp, expect_path), reads
// for h2d and posted writes for d2h, at the max payload programmed on the
// path where its settings were read (budget.hpp programmed_payload_bytes;
// the note then says so), else at 256 bytes. An error saying why when the
// evidence cannot give it (the GPU not in the evidence, a link unknown, the
// port above not in the evidence).
struct PathBudget {
  const DeviceRecord* device = nullptr;
  LinkState link;
  double budget_gbps = 0;
  // The assumptions the budget rests on (an emulated port above; the payload
  // as programmed), "; "-joined; empty when none.
  std::string note;
};
[[nodiscard]] Result<PathBudget> gpu_path_budget(const Evidence& evidence, const PciAddress& gpu, Direction direction,
                                                 const ExpectationOptions& options = {});

// The floor links_that_fit uses under `thresholds`: which link explains a
// rate is physics, not policy, so a site's stricter floor (0.95 for burn-in)
// must not make a Gen4-rate number "fit no link"; a more lenient one widens
// the range it explains. The lower of the profile's floor and the built-in.
[[nodiscard]] double fit_floor_fraction(const BandwidthThresholds& thresholds);

// The widest link links_that_fit may name when no link bounds the question:
// the budget model stops at Gen6, the table at x16.
inline constexpr LinkState kWidestBudgetedLink{PcieGen::kGen6, 16};

// Link states (generation 1..6, width 1..16) whose budget in `direction`
// holds `measured_gbps` between floor_fraction x budget and the budget itself
// (3 % over it allowed for the model's rounding), no faster or wider than
// `ceiling`, highest budget first.
[[nodiscard]] std::vector<LinkState> links_that_fit(double measured_gbps, Direction direction, const LinkState& ceiling,
                                                    double floor_fraction);

}  // namespace pcieval
