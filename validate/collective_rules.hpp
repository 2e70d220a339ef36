// Judges the NCCL all-reduce forced through host memory (allreduce_nccl_host)
// against the narrowest GPU link's budget. With peer-to-peer disabled every
// byte of the all-reduce crosses each GPU's PCIe link, in both directions at
// once, at the bus bandwidth (nccl-tests' busbw), so the slowest GPU link
// bounds it: its budget is the lower of that link's read and write budgets
// (direction_budget_gbps for Direction::kAllReduce).
//
// The normal-mode all-reduce (allreduce_nccl) is never judged: it may run
// over NVLink, which no PCIe budget describes.
#pragma once

#include <string_view>
#include <vector>

#include "model/evidence.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// The live probe judged here (bench/nccl_probe.hpp registers it).
inline constexpr std::string_view kAllReduceHostProbe = "allreduce_nccl_host";

// At most one verdict: the allreduce_nccl_host measurement (direction
// all_reduce, aggregation bus_bandwidth) at the run's verdict size
// (probe_settings.size_bytes; without settings, the largest size). Subject:
// the measurement's ("8 GPUs"); the link: the narrowest hop of the GPU with
// the lowest path budget. Thresholds: the profile as resolved for that GPU
// (trials, spread), with the floor and warning line of a per-probe entry for
// allreduce_nccl_host, or else the host path's own built-in ones (0.25 and
// 0.40 of the budget, derived in collective_rules.cpp): the profile-wide
// floor is for one GPU's copies and would fail healthy host-path numbers.
// - bandwidth_too_noisy (inconclusive): fewer trials than min_trials, or CV
//   above max_cv;
// - bandwidth_below_budget (bandwidth_low): the median busbw under floor x
//   budget; names the narrowest GPU, its link and the budget;
// - bandwidth_in_warning_band / bandwidth_at_budget (pass) otherwise.
// No verdict when a GPU of the measurement has no known path budget (its link
// verdict is already inconclusive) or NVML read it busy before the run (its
// gpu_busy_before_run verdict says so).
// The floor and warning line an all-reduce through host memory is held to:
// a per-probe entry for allreduce_nccl_host where the profile has one, else
// the host path's own (0.25 and 0.40). diagnose holds nccl-tests' all-reduce
// with peer-to-peer disabled to them too (judge_nccl_tests_bandwidth).
[[nodiscard]] BandwidthThresholds host_path_thresholds(const ThresholdSet& set);

[[nodiscard]] std::vector<Verdict> judge_collectives(const Evidence& evidence, const ThresholdProfile& profile);

}  // namespace pcieval
