#include "validate/bandwidth_rules.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/text.hpp"
#include "validate/budget.hpp"
#include "validate/link_rules.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval {
namespace {

Result<double> budget_of(const LinkState& state, Direction direction, const BudgetOptions& options = {}) {
  auto budget = link_budget(state, options);
  if (!budget) return budget.error();
  return direction_budget_gbps(budget.value(), direction);
}

// The host ceiling measured on `node`, if the host_ceiling probe ran there.
std::optional<double> host_ceiling_gbps(const Evidence& evidence, std::optional<int> node) {
  if (!node) return std::nullopt;
  for (const Measurement& m : evidence.measurements) {
    if (m.probe == "host_ceiling" && m.host_numa_node == node && m.verified) return m.stats.median_gbps;
  }
  return std::nullopt;
}

// Whether NVML read `device` busier than the profile allows before any probe.
bool busy_before_run(const DeviceRecord& device, const ThresholdSet& thresholds) {
  return device.nvml && device.nvml->utilization_gpu_percent &&
         *device.nvml->utilization_gpu_percent > thresholds.max_gpu_utilization_percent;
}

// A judged fraction at or above the floor: a pass, with a warning when it
// sits in the band just above the floor.
void mark_pass(Verdict& verdict, double fraction, const BandwidthThresholds& thresholds) {
  verdict.status = VerdictStatus::kPass;
  if (fraction >= thresholds.warn_fraction) {
    verdict.code = ReasonCode::kBandwidthAtBudget;
    return;
  }
  verdict.code = ReasonCode::kBandwidthInWarningBand;
  verdict.reason += ", in the warning band between the " + percent_text(thresholds.floor_fraction) + " floor and " +
                    percent_text(thresholds.warn_fraction);
  verdict.remediation =
      "Not a failure: compare with the same GPU model on other nodes (pcieval fleet merge) or with this node's "
      "known-good run (--baseline); a link that keeps sliding toward the floor is degrading.";
}

// The part of a path from the link whose downstream end is `port` up to the
// root, or nothing when the port is not a link's downstream end there.
std::optional<PciPath> path_above(const PciPath& path, const PciAddress& port) {
  for (auto link = path.begin(); link != path.end(); ++link) {
    if (link->downstream == port) return PciPath(link, path.end());
  }
  return std::nullopt;
}

// group_ce: the total of GPUs sharing a switch uplink, against the lower of
// the uplink's budget and the sum of the GPUs' own budgets.
std::optional<Verdict> judge_group(const Evidence& evidence, const Measurement& m, const ThresholdProfile& profile) {
  const ExpectationOptions expectation = expectation_options(profile);
  const std::string prefix = "port ";
  if (m.subject.rfind(prefix, 0) != 0) return std::nullopt;
  auto port = parse_pci_address(m.subject.substr(prefix.size()));
  if (!port) return std::nullopt;
  std::optional<PciPath> uplink_path;
  double gpus_gbps = 0;
  // Every GPU's TLPs cross the uplink at the payload its own path allows:
  // the smallest programmed on any GPU's path, where every path was read.
  std::optional<int> payload_bytes;
  bool payload_read = true;
  for (const PciAddress& gpu : m.gpus) {
    const auto own = gpu_path_budget(evidence, gpu, m.direction, expectation);
    if (!own) return std::nullopt;
    // A busy GPU's own verdict already says the run proves nothing for it.
    if (busy_before_run(*own->device, thresholds_for(profile, own->device))) return std::nullopt;
    gpus_gbps += own->budget_gbps;
    if (!uplink_path) uplink_path = path_above(own->device->path, port.value());
    const auto programmed = programmed_payload_bytes(own->device->path);
    if (!programmed) payload_read = false;
    if (programmed) payload_bytes = payload_bytes ? std::min(*payload_bytes, *programmed) : *programmed;
  }
  // GPUs directly under a root port share no PCIe link: nothing to judge.
  if (!uplink_path) return std::nullopt;
  const auto uplink_state = path_expected_state(*uplink_path);
  if (!uplink_state) return std::nullopt;
  BudgetOptions uplink_options;
  if (payload_read && payload_bytes) uplink_options.max_payload_bytes = *payload_bytes;
  const auto uplink_gbps = budget_of(uplink_state.value(), m.direction, uplink_options);
  if (!uplink_gbps) return std::nullopt;
  // A shared uplink has no GPU model of its own: the node-wide thresholds.
  const BandwidthThresholds options = bandwidth_thresholds_for(thresholds_for(profile, nullptr), m.probe, m.direction);
  const bool uplink_limits = uplink_gbps.value() < gpus_gbps;
  const double budget = std::min(uplink_gbps.value(), gpus_gbps);

  Verdict verdict;
  verdict.subject = m.subject;
  const std::string what = m.probe + " " + std::string(to_string(m.direction)) + " total " +
                           gbps_text(m.stats.median_gbps) + " of " + std::to_string(m.gpus.size()) + " GPUs";
  const std::string against =
      uplink_limits ? "the shared " + to_string(uplink_state.value()) + " uplink's budget " + gbps_text(budget)
                    : "the sum of the GPUs' own budgets " + gbps_text(budget);
  const double fraction = m.stats.median_gbps / budget;
  if (static_cast<int>(m.trials_gbps.size()) < options.min_trials || m.stats.cv > options.max_cv) {
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kBandwidthTooNoisy;
    verdict.reason = what + " cannot be judged: too few trials or trials spread over " + percent_text(options.max_cv);
    verdict.remediation = "Run again on an idle node.";
    return verdict;
  }
  verdict.reason = what + " is " + percent_text(fraction) + " of " + against;
  if (fraction >= options.floor_fraction) {
    mark_pass(verdict, fraction, options);
    return verdict;
  }
  verdict.status = VerdictStatus::kBandwidthLow;
  verdict.code = ReasonCode::kBandwidthBelowBudget;
  verdict.link = LinkRef{uplink_path->front().downstream, uplink_path->front().upstream};
  verdict.reason += ", below the " + percent_text(options.floor_fraction) + " floor";
  verdict.remediation = "Read the uplink's LnkSta during the copy (`lspci -vv -s " +
                        to_string(uplink_path->front().upstream) +
                        "`) and compare each GPU's rate alone (h2d_ce, d2h_ce) with its rate with_peers: a shared "
                        "uplink that trained low or retries (AER) caps every GPU behind it.";
  return verdict;
}

}  // namespace

// A copy whose bytes were not checked after it (Measurement::verified false)
// proves no bandwidth: the engine never writes one (data that did not verify
// is a probe failure, probe_failed), so validate gives a document that says so
// the verdict a live check gives the same copy. No new reason code: the
// evidence is that of a probe that could not measure.
Verdict unverified_measurement(const Measurement& m, std::string subject) {
  Verdict verdict;
  verdict.subject = std::move(subject);
  verdict.status = VerdictStatus::kInconclusive;
  verdict.code = ReasonCode::kProbeFailed;
  verdict.reason = m.probe + " " + std::string(to_string(m.direction)) + " " + gbps_text(m.stats.median_gbps) +
                   " was measured, but its data was not verified (verified: false), so it proves no bandwidth";
  verdict.remediation =
      "Run `pcieval check` on the node again: it checks the data of every copy and reports a copy that did not "
      "verify as a probe failure. A document that holds an unverified copy was written by another tool or edited.";
  return verdict;
}

bool is_link_budget_measurement(const Measurement& m) {
  return (m.probe == "h2d_ce" || m.probe == "d2h_ce") && m.aggregation == Aggregation::kAlone &&
         m.host_memory == HostMemory::kPinned && m.gpus.size() == 1 && m.direction != Direction::kHostToHost;
}

Result<PathBudget> gpu_path_budget(const Evidence& evidence, const PciAddress& gpu, Direction direction,
                                   const ExpectationOptions& options) {
  const DeviceRecord* device = find_device(evidence, gpu);
  if (device == nullptr) return make_error(to_string(gpu) + " is not among the devices of the evidence");
  const auto expected = expect_path(*device, evidence, options);
  if (!expected) return expected.error();
  // The payload programmed on the path where it was read (issue 28), else
  // the 256 bytes every budget assumed before, said in no note.
  const auto budget = budget_of(expected->state, direction, budget_options_for(device->path));
  if (!budget) return budget.error();
  std::string note = expected->note;
  if (const std::string payload = payload_note(device->path); !payload.empty()) {
    note += (note.empty() ? "" : "; ") + payload;
  }
  return PathBudget{device, expected->state, budget.value(), std::move(note)};
}

double fit_floor_fraction(const BandwidthThresholds& thresholds) {
  return std::min(thresholds.floor_fraction, BandwidthThresholds{}.floor_fraction);
}

std::vector<LinkState> links_that_fit(double measured_gbps, Direction direction, const LinkState& ceiling,
                                      double floor_fraction) {
  struct Fit {
    LinkState state;
    double budget_gbps;
  };
  std::vector<Fit> fits;
  for (int number = 1; number <= 6; ++number) {
    const PcieGen gen = gen_from_number(number).value();
    if (gen > ceiling.gen) continue;
    for (int width : {16, 8, 4, 2, 1}) {
      if (width > ceiling.width) continue;
      const LinkState state{gen, width};
      auto budget = budget_of(state, direction);
      if (!budget) continue;
      if (measured_gbps >= floor_fraction * budget.value() && measured_gbps <= kAboveBudgetSlack * budget.value()) {
        fits.push_back({state, budget.value()});
      }
    }
  }
  std::stable_sort(fits.begin(), fits.end(), [](const Fit& a, const Fit& b) { return a.budget_gbps > b.budget_gbps; });
  std::vector<LinkState> states;
  states.reserve(fits.size());
  for (const Fit& fit : fits) states.push_back(fit.state);
  return states;
}

std::vector<Verdict> judge_bandwidth(const Evidence& evidence, const ThresholdProfile& profile) {
  std::vector<Verdict> verdicts;
  const ExpectationOptions expectation = expectation_options(profile);
  LinkRuleOptions link_options;
  link_options.expectation = expectation;
  const std::vector<Verdict> link_verdicts = judge_links(evidence, link_options);
  std::vector<PciAddress> busy_reported;
  for (const Measurement& m : evidence.measurements) {
    if (m.probe == "group_ce" && m.aggregation == Aggregation::kTotalOverWallTime) {
      if (!m.verified) {
        verdicts.push_back(unverified_measurement(m, m.subject));
      } else if (auto group = judge_group(evidence, m, profile)) {
        verdicts.push_back(std::move(*group));
      }
      continue;
    }
    if (!is_link_budget_measurement(m)) continue;
    if (!m.verified) {
      verdicts.push_back(unverified_measurement(m, to_string(m.gpus.front())));
      continue;
    }
    const auto path_budget = gpu_path_budget(evidence, m.gpus.front(), m.direction, expectation);
    if (!path_budget) {
      // A number with nothing to hold it against proves nothing: never a
      // silent pass.
      Verdict verdict;
      verdict.subject = to_string(m.gpus.front());
      verdict.status = VerdictStatus::kInconclusive;
      verdict.code = ReasonCode::kNoLinkBudget;
      verdict.reason = m.probe + " " + gbps_text(m.stats.median_gbps) +
                       " was measured, but there is no link budget to hold it against: " + path_budget.error().message;
      verdict.remediation =
          "Run `pcieval check` on the node itself as root, so that every port above the GPU is read from sysfs; in a "
          "container, mount the host's /sys.";
      verdicts.push_back(std::move(verdict));
      continue;
    }
    const DeviceRecord* device = path_budget->device;
    const LinkState expected = path_budget->link;
    const double budget_gbps = path_budget->budget_gbps;
    const ThresholdSet thresholds = thresholds_for(profile, device);
    const BandwidthThresholds options = bandwidth_thresholds_for(thresholds, m.probe, m.direction);

    if (busy_before_run(*device, thresholds)) {
      if (std::find(busy_reported.begin(), busy_reported.end(), device->function.bdf) != busy_reported.end()) continue;
      busy_reported.push_back(device->function.bdf);
      Verdict busy;
      busy.subject = to_string(device->function.bdf);
      busy.status = VerdictStatus::kInconclusive;
      busy.code = ReasonCode::kGpuBusyBeforeRun;
      busy.reason = "the GPU was " + std::to_string(*device->nvml->utilization_gpu_percent) +
                    "% busy before the probes (NVML utilisation; at most " +
                    std::to_string(thresholds.max_gpu_utilization_percent) +
                    "% allowed): another job shared its link, so its copy bandwidth proves nothing";
      busy.remediation =
          "Run on a drained node: `nvidia-smi` lists the processes on the GPU; under Slurm, drain the node or run "
          "pcieval in an exclusive job.";
      verdicts.push_back(std::move(busy));
      continue;
    }

    Verdict verdict;
    verdict.subject = to_string(m.gpus.front());
    const double median = m.stats.median_gbps;
    const double fraction = median / budget_gbps;
    const std::string measured =
        m.probe + " " + gbps_text(median) + " (median of " + std::to_string(m.trials_gbps.size()) + " trials)";
    const std::string against = "the " + to_string(expected) + " budget " + gbps_text(budget_gbps) +
                                (path_budget->note.empty() ? "" : " (" + path_budget->note + ")");

    if (static_cast<int>(m.trials_gbps.size()) < options.min_trials || m.stats.cv > options.max_cv) {
      verdict.status = VerdictStatus::kInconclusive;
      verdict.code = ReasonCode::kBandwidthTooNoisy;
      verdict.reason = measured + " cannot be judged: " +
                       (static_cast<int>(m.trials_gbps.size()) < options.min_trials
                            ? "fewer than " + std::to_string(options.min_trials) + " trials"
                            : "trials spread " + percent_text(m.stats.cv) + " (CV), over the " +
                                  percent_text(options.max_cv) + " allowed");
      verdict.remediation =
          "Run again on an idle node (no jobs, no other pcieval): other traffic on the link or the host's memory "
          "makes the trials disagree; `nvidia-smi` shows processes on the GPU.";
      verdicts.push_back(std::move(verdict));
      continue;
    }
    if (median > kAboveBudgetSlack * budget_gbps) {
      verdict.status = VerdictStatus::kInconclusive;
      verdict.code = ReasonCode::kBandwidthAboveBudget;
      verdict.reason = measured + " is " + percent_text(fraction) + " of " + against +
                       ": the link is faster than the evidence says, so no verdict can rest on that budget (the port "
                       "above is probably virtual or misreported)";
      const auto fits = links_that_fit(median, m.direction, kWidestBudgetedLink, fit_floor_fraction(options));
      if (!fits.empty()) verdict.reason += "; the rate fits " + join_states(fits);
      verdict.remediation = "Read the GPU's link while it copies (`nvidia-smi -q` GPU Link Info, `lspci -vv -s " +
                            verdict.subject +
                            "` LnkCap and LnkSta) and the port above it; in a virtual machine, ask the provider "
                            "which link the GPU has.";
      verdicts.push_back(std::move(verdict));
      continue;
    }
    if (fraction >= options.floor_fraction) {
      verdict.reason = measured;
      verdict.reason += " is " + percent_text(fraction) + " of " + against;
      mark_pass(verdict, fraction, options);
      verdicts.push_back(std::move(verdict));
      continue;
    }

    verdict.status = VerdictStatus::kBandwidthLow;
    verdict.code = ReasonCode::kBandwidthBelowBudget;
    if (!device->path.empty()) verdict.link = LinkRef{device->path.front().downstream, device->path.front().upstream};
    verdict.reason = measured;
    verdict.reason += " is " + percent_text(fraction) + " of " + against;
    verdict.reason += ", below the " + percent_text(options.floor_fraction) + " floor";
    const auto fits = links_that_fit(median, m.direction, expected, fit_floor_fraction(options));
    // A rate the expected link itself explains misses only a floor stricter
    // than the built-in one: say so rather than suggest a lost link.
    const bool expected_fits = std::find(fits.begin(), fits.end(), expected) != fits.end();
    if (fits.empty()) {
      verdict.reason += "; it fits no x16-or-narrower link up to " + to_string(expected);
    } else if (expected_fits) {
      verdict.reason += "; it is still a " + to_string(expected) + " rate: it misses only this profile's floor";
    } else {
      verdict.reason += "; it fits " + join_states(fits) + ", not the expected " + to_string(expected);
    }

    // Likely causes, from the rest of the evidence.
    std::vector<std::string> causes;
    for (const Verdict& link_verdict : link_verdicts) {
      if (link_verdict.subject == verdict.subject && link_verdict.status == VerdictStatus::kLinkDowngraded) {
        causes.push_back("the link registers show the downgrade too (" + std::string(to_string(link_verdict.code)) +
                         ")");
      }
    }
    if (m.host_numa_local == false) {
      causes.push_back("the host buffer was on NUMA node " + std::to_string(m.host_numa_node.value_or(-1)) +
                       ", not the GPU's");
    }
    if (const auto ceiling = host_ceiling_gbps(evidence, m.host_numa_node);
        ceiling && *ceiling < options.floor_fraction * budget_gbps) {
      causes.push_back("host memory on that node feeds only " + gbps_text(*ceiling) + " (host_ceiling)");
    }
    if (causes.empty() && expected_fits) {
      causes.push_back("a platform that delivers less of the link's budget than the profile '" + profile.name +
                       "' asks (BIOS PCIe, ASPM or IOMMU settings, the host's memory or the GPU model)");
    }
    if (causes.empty()) {
      causes.push_back(
          "the link registers read the expected state, so the loss is invisible to them: a link retraining "
          "under load (riser, retimer, cable), a platform limit (BIOS PCIe or ASPM settings, IOMMU), or "
          "another device's traffic on a shared uplink");
    }
    std::string cause_text;
    for (const auto& cause : causes) cause_text += (cause_text.empty() ? "" : "; ") + cause;
    verdict.reason += ". Likely cause: " + cause_text;
    verdict.remediation =
        "Compare with `lspci -vv -s " +
        (device->path.empty() ? verdict.subject : to_string(device->path.front().upstream)) +
        "` LnkSta read during a copy and the AER counters; check the BIOS PCIe speed and ASPM settings; reseat " +
        verdict.subject + " and its riser or cable; keep host buffers on the GPU's NUMA node (numactl, hwloc).";
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace pcieval
