#include "validate/collective_rules.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "model/text.hpp"
#include "validate/bandwidth_rules.hpp"
#include "validate/budget.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval {
namespace {

bool is_host_path_busbw(const Measurement& m) {
  return m.probe == kAllReduceHostProbe && m.direction == Direction::kAllReduce &&
         m.aggregation == Aggregation::kBusBandwidth && m.gpus.size() >= 2;
}

// The measurement at the verdict size; without probe settings (an older or
// hand-made file) the largest size, where the link rather than per-call
// latency sets the rate.
const Measurement* verdict_measurement(const Evidence& evidence) {
  const Measurement* chosen = nullptr;
  for (const Measurement& m : evidence.measurements) {
    if (!is_host_path_busbw(m)) continue;
    if (evidence.probe_settings) {
      if (m.size_bytes == evidence.probe_settings->size_bytes) return &m;
      continue;
    }
    if (chosen == nullptr || m.size_bytes > chosen->size_bytes) chosen = &m;
  }
  return chosen;
}

// The hop of `path` whose expected state has the lowest all-reduce budget,
// nearest the GPU on a tie: the one a remediation should point at.
const Link* narrowest_link(const PciPath& path) {
  const Link* narrowest = nullptr;
  double lowest_gbps = 0;
  for (const Link& link : path) {
    const auto expected = link.expected();
    if (!expected.ok()) continue;
    const auto budget = link_budget(expected.value());
    if (!budget) continue;
    const auto gbps = direction_budget_gbps(budget.value(), Direction::kAllReduce);
    if (!gbps) continue;
    if (narrowest == nullptr || gbps.value() < lowest_gbps) {
      narrowest = &link;
      lowest_gbps = gbps.value();
    }
  }
  return narrowest;
}

}  // namespace

// The host-path all-reduce's own floor and warning line, used where the
// profile sets none for allreduce_nccl_host. Through host memory the rate is
// bounded by the CPUs' memory and proxy threads as much as by the links
// (PCIE-FACTS section 8: "determined by the bandwidth your CPU and memory can
// deliver"), so healthy nodes sit far below the link budget: 8x RTX 5090 on
// Gen5 x16 reach 28 GB/s busbw, 4 of them 35 GB/s, 0.49 and 0.61 of this
// model's 57.6 GB/s all-reduce budget, and NCCL's SHM path adds a staging
// copy through host memory on top. The profile-wide 0.75 floor would fail
// those nodes. 0.25 fails a collapsed path (a GPU at x1 or x4, Gen1, a
// stalled link) and leaves modest shortfalls to the per-GPU copy verdicts;
// 0.40 flags the lower end for a look. Gen3/Gen4 8-GPU host-path figures are
// UNVERIFIED (PCIE-FACTS section 9): a site that measured its own sets
// per_probe floors for allreduce_nccl_host, which replace these.
constexpr double kHostPathFloorFraction = 0.25;
constexpr double kHostPathWarnFraction = 0.40;

BandwidthThresholds host_path_thresholds(const ThresholdSet& set) {
  BandwidthThresholds thresholds =
      bandwidth_thresholds_for(set, std::string(kAllReduceHostProbe), Direction::kAllReduce);
  bool floor_given = false;
  bool warn_given = false;
  for (const ProbeThresholds& entry : set.per_probe) {
    if (entry.probe != kAllReduceHostProbe) continue;
    if (entry.direction && *entry.direction != Direction::kAllReduce) continue;
    floor_given = floor_given || entry.floor_fraction.has_value();
    warn_given = warn_given || entry.warn_fraction.has_value();
  }
  if (!floor_given) thresholds.floor_fraction = kHostPathFloorFraction;
  if (!warn_given) thresholds.warn_fraction = kHostPathWarnFraction;
  thresholds.warn_fraction = std::max(thresholds.warn_fraction, thresholds.floor_fraction);
  return thresholds;
}

namespace {

bool busy_before_run(const DeviceRecord& device, const ThresholdSet& thresholds) {
  return device.nvml && device.nvml->utilization_gpu_percent &&
         *device.nvml->utilization_gpu_percent > thresholds.max_gpu_utilization_percent;
}

}  // namespace

std::vector<Verdict> judge_collectives(const Evidence& evidence, const ThresholdProfile& profile) {
  const Measurement* m = verdict_measurement(evidence);
  if (m == nullptr) return {};
  // NCCL's result is checked as a copy's is (bench/nccl_probe.cpp); a number
  // whose data was not checked proves no bus bandwidth.
  if (!m->verified) return {unverified_measurement(*m, m->subject)};

  std::optional<PathBudget> narrowest;
  for (const PciAddress& gpu : m->gpus) {
    const auto budget = gpu_path_budget(evidence, gpu, Direction::kAllReduce, expectation_options(profile));
    if (!budget) {
      Verdict verdict;
      verdict.subject = m->subject;
      verdict.status = VerdictStatus::kInconclusive;
      verdict.code = ReasonCode::kNoLinkBudget;
      verdict.reason = m->probe + " bus bandwidth " + gbps_text(m->stats.median_gbps) +
                       " was measured, but the slowest GPU link that bounds it is unknown: " + budget.error().message;
      verdict.remediation = "Run `pcieval check` on the node itself as root, so that every GPU's path is read.";
      return {verdict};
    }
    if (busy_before_run(*budget->device, thresholds_for(profile, budget->device))) return {};
    if (!narrowest || budget->budget_gbps < narrowest->budget_gbps) narrowest = budget.value();
  }
  if (!narrowest) return {};
  const BandwidthThresholds options = host_path_thresholds(thresholds_for(profile, narrowest->device));

  Verdict verdict;
  verdict.subject = m->subject;
  const std::string gpu = to_string(narrowest->device->function.bdf);
  const std::string what = m->probe + " bus bandwidth " + gbps_text(m->stats.median_gbps) + " (median of " +
                           std::to_string(m->trials_gbps.size()) + " trials, " + std::to_string(m->gpus.size()) +
                           " GPUs)";
  if (static_cast<int>(m->trials_gbps.size()) < options.min_trials || m->stats.cv > options.max_cv) {
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kBandwidthTooNoisy;
    verdict.reason = what + " cannot be judged: fewer than " + std::to_string(options.min_trials) +
                     " trials or trials spread over " + percent_text(options.max_cv);
    verdict.remediation = "Run again on an idle node: another job's traffic through host memory spreads the trials.";
    return {verdict};
  }
  const double fraction = m->stats.median_gbps / narrowest->budget_gbps;
  verdict.reason = what + " is " + percent_text(fraction) + " of " + gbps_text(narrowest->budget_gbps) +
                   ", the budget of the narrowest GPU link (GPU " + gpu + ", " + to_string(narrowest->link) +
                   ", the lower of its read and write budgets)";
  if (fraction >= options.floor_fraction) {
    verdict.status = VerdictStatus::kPass;
    if (fraction >= options.warn_fraction) {
      verdict.code = ReasonCode::kBandwidthAtBudget;
    } else {
      verdict.code = ReasonCode::kBandwidthInWarningBand;
      verdict.reason += ", in the warning band between the " + percent_text(options.floor_fraction) + " floor and " +
                        percent_text(options.warn_fraction);
      verdict.remediation =
          "Not a failure: compare with the same node model across the fleet (pcieval fleet merge); an all-reduce "
          "through host memory also depends on host memory bandwidth and the CPUs' interconnect.";
    }
    return {verdict};
  }
  verdict.status = VerdictStatus::kBandwidthLow;
  verdict.code = ReasonCode::kBandwidthBelowBudget;
  if (const Link* link = narrowest_link(narrowest->device->path)) {
    verdict.link = LinkRef{link->downstream, link->upstream};
  }
  verdict.reason += ", below the " + percent_text(options.floor_fraction) + " floor";
  verdict.remediation =
      "Compare each GPU's own copies (h2d_ce, d2h_ce, bidir_ce) with its budget: one slow or downgraded link "
      "holds the whole all-reduce to its rate. If every GPU is at budget alone, the host path is the limit (host "
      "memory bandwidth, buffers on a remote NUMA node, the inter-socket link): see host_ceiling and remote_numa_ce.";
  return {verdict};
}

}  // namespace pcieval
