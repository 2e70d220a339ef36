#include "validate/stated_link_rules.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <tuple>

#include "model/text.hpp"
#include "validate/bandwidth_rules.hpp"
#include "validate/budget.hpp"
#include "validate/collective_rules.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

Result<LinkState> link_error(std::string_view text, const std::string& why) {
  std::string shown;
  for (char c : text.substr(0, 40)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return make_error("--link '" + shown + "': " + why +
                    " (expected a generation and width: gen4x16, \"Gen5 x8\", \"16GT/s x16\")");
}

// "h2d"/"d2h" tests of one tool, for the notes.
std::string kind_of(const Measurement& m) {
  if (m.method == CopyMethod::kSmKernel) return "SM-kernel copies (below the copy engine by design)";
  if (m.aggregation == Aggregation::kWithReverse) return "bidirectional copies (each direction while the other runs)";
  if (m.aggregation != Aggregation::kAlone) return "copies of every GPU at once (a shared uplink's number)";
  if (m.host_memory == HostMemory::kPageable) return "pageable-memory copies (staged by the driver)";
  if (m.gpus.empty() && !m.subject.starts_with("GPU ")) return "sums over several GPUs";
  return "";
}

}  // namespace

Result<LinkState> parse_stated_link(std::string_view text) {
  std::string compact;
  for (char c : text.substr(0, 64)) {
    if (c == ' ' || c == '\t' || c == '_' || c == '-') continue;
    compact += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  if (text.size() > 64) return link_error(text, "too long");
  const auto x = compact.rfind('x');
  if (x == std::string::npos) return link_error(text, "no width");
  const auto width = parse_int(std::string_view(compact).substr(x + 1));
  if (!width || !is_valid_link_width(*width)) return link_error(text, "the width is not a PCIe link width");
  std::string_view speed = std::string_view(compact).substr(0, x);
  std::optional<PcieGen> gen;
  if (speed.starts_with("gen")) {
    const auto number = parse_int(speed.substr(3));
    if (number) {
      if (auto parsed = gen_from_number(*number)) gen = parsed.value();
    }
  } else {
    if (speed.ends_with("pcie")) speed.remove_suffix(4);
    if (speed.ends_with("gt/s")) {
      speed.remove_suffix(4);
      double rate = 0;
      const auto [ptr, ec] = std::from_chars(speed.data(), speed.data() + speed.size(), rate);
      if (!speed.empty() && ec == std::errc{} && ptr == speed.data() + speed.size()) {
        if (auto parsed = gen_from_gts(rate)) gen = parsed.value();
      }
    }
  }
  if (!gen) return link_error(text, "no PCIe generation or transfer rate");
  if (*gen > kWidestBudgetedLink.gen) return link_error(text, to_string(*gen) + " has no budget model yet");
  return LinkState{*gen, *width};
}

std::string tool_of(const Measurement& m) {
  if (m.probe.starts_with("nvbandwidth_")) return "nvbandwidth";
  if (m.probe.starts_with("bandwidthtest_")) return "bandwidthTest";
  return "";
}

bool is_tool_measurement(const Measurement& m) { return !tool_of(m).empty(); }

ToolJudgement judge_tool_bandwidth(const Evidence& evidence, const ThresholdProfile& profile,
                                   const ToolJudgeOptions& options) {
  ToolJudgement out;
  const auto& ms = evidence.measurements;

  // The largest copy of each (probe, subject, direction) is the one judged,
  // in every run the file holds: a file with two runs (one per NUMA
  // placement, say) has two such numbers, and both are judged.
  using Key = std::tuple<std::string, std::string, Direction>;
  std::map<Key, std::vector<std::size_t>> chosen;
  std::set<std::string> unjudged_kinds;
  std::set<std::string> no_link;
  std::size_t small = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const Measurement& m = ms[i];
    if (!is_tool_measurement(m) || m.direction == Direction::kHostToHost) continue;
    const std::string kind = kind_of(m);
    if (!kind.empty()) {
      unjudged_kinds.insert(kind);
      continue;
    }
    std::vector<std::size_t>& runs = chosen[Key{m.probe, m.subject, m.direction}];
    if (!runs.empty() && ms[runs.front()].size_bytes > m.size_bytes) continue;
    if (!runs.empty() && ms[runs.front()].size_bytes < m.size_bytes) runs.clear();
    runs.push_back(i);
  }

  for (const auto& [key, runs] : chosen) {
    // The best run of the same copy in the same file: a low run beside it
    // points at the run's conditions (placement, load), not at the link.
    double best_gbps = 0;
    for (std::size_t index : runs) best_gbps = std::max(best_gbps, ms[index].stats.median_gbps);
    for (std::size_t index : runs) {
      const Measurement& m = ms[index];
      if (m.size_bytes < kMinJudgedCopyBytes) {
        ++small;
        continue;
      }
      const std::string origin = options.origins.contains(index) ? " (" + options.origins.at(index) + ")" : "";
      const DeviceRecord* device = m.gpus.size() == 1 ? find_device(evidence, m.gpus.front()) : nullptr;

      LinkState link;
      double budget_gbps = 0;
      std::string against;
      std::optional<LinkRef> link_ref;
      std::string no_budget_why = "no GPU address in the output";
      const auto path = m.gpus.size() == 1
                            ? gpu_path_budget(evidence, m.gpus.front(), m.direction, expectation_options(profile))
                            : Result<PathBudget>(make_error(no_budget_why));
      if (options.stated_link) {
        auto budget = link_budget(*options.stated_link);
        if (!budget) continue;
        auto direction_budget = direction_budget_gbps(budget.value(), m.direction);
        if (!direction_budget) continue;
        link = *options.stated_link;
        budget_gbps = direction_budget.value();
        against = "the stated " + to_string(link) + " link's budget " + gbps_text(budget_gbps) + " (--link)";
      } else if (path) {
        link = path->link;
        budget_gbps = path->budget_gbps;
        against = "the " + to_string(link) + " budget " + gbps_text(budget_gbps) + " of its captured path" +
                  (path->note.empty() ? "" : " (" + path->note + ")");
        if (!path->device->path.empty()) {
          link_ref = LinkRef{path->device->path.front().downstream, path->device->path.front().upstream};
        }
      } else {
        no_link.insert(m.subject);
        continue;
      }

      const BandwidthThresholds thresholds =
          bandwidth_thresholds_for(thresholds_for(profile, device), m.probe, m.direction);
      const double median = m.stats.median_gbps;
      const double fraction = median / budget_gbps;
      const std::string tool = tool_of(m);
      const std::string measured = m.probe + " " + std::string(to_string(m.direction)) + " " + gbps_text(median);

      Verdict verdict;
      verdict.subject = m.subject;
      if (median > kAboveBudgetSlack * budget_gbps) {
        const auto fits = links_that_fit(median, m.direction, kWidestBudgetedLink, fit_floor_fraction(thresholds));
        verdict.status = VerdictStatus::kInconclusive;
        verdict.code = ReasonCode::kBandwidthAboveBudget;
        verdict.reason = measured + " is more than " + against +
                         " allows: the copies did not cross that link (a faster or wider link, or NVLink-C2C)" +
                         (fits.empty() ? "" : "; it fits " + join_states(fits)) + origin;
        verdict.remediation =
            "Check which link the GPU trained to while " + tool +
            " ran (`nvidia-smi -q` GPU Link Info, `lspci -vv` LnkSta) and state that link with --link.";
        out.verdicts.push_back(std::move(verdict));
        continue;
      }
      // Like judge_bandwidth: the links named are no faster or wider than the
      // one the number is held to.
      const auto fits = links_that_fit(median, m.direction, link, fit_floor_fraction(thresholds));
      verdict.reason = measured + " is " + percent_text(fraction) + " of " + against;
      if (fraction >= thresholds.floor_fraction) {
        const bool warn = fraction < thresholds.warn_fraction;
        verdict.status = VerdictStatus::kPass;
        verdict.code = warn ? ReasonCode::kBandwidthInWarningBand : ReasonCode::kBandwidthAtBudget;
        verdict.reason += warn ? ": normal for " + to_string(link) + ", under the " +
                                     percent_text(thresholds.warn_fraction) + " warning line"
                               : ": normal for " + to_string(link);
        if (!fits.empty()) verdict.reason += " (fits " + join_states(fits) + ")";
        verdict.reason += origin;
        out.verdicts.push_back(std::move(verdict));
        continue;
      }
      verdict.status = VerdictStatus::kBandwidthLow;
      verdict.code = ReasonCode::kBandwidthBelowBudget;
      verdict.link = link_ref;
      verdict.reason +=
          ", below the " + percent_text(thresholds.floor_fraction) + " floor: not normal for " + to_string(link) +
          (fits.empty()
               ? "; it fits no link up to " + to_string(link) + " (a host-side limit is likelier than a narrower link)"
               : "; it fits " + join_states(fits));
      if (best_gbps >= thresholds.floor_fraction * budget_gbps) {
        verdict.reason += "; another run of the same copy in the same output reached " + gbps_text(best_gbps) +
                          ", so the link carries more: the difference is the run's conditions (host buffer placement, "
                          "other load), not the link";
      }
      verdict.reason += origin;
      verdict.remediation =
          "Read the link while " + tool +
          " runs (`nvidia-smi -q` GPU Link Info, `lspci -vv` LnkSta of the GPU and the ports above it): a link "
          "trained to one of the links it fits explains the number; if the link reads " +
          to_string(link) +
          ", look at the host side (NUMA placement of the host buffer, BIOS PCIe and ASPM settings, IOMMU).";
      out.verdicts.push_back(std::move(verdict));
    }
  }

  for (const std::string& kind : unjudged_kinds) out.notes.push_back("tool results recorded, not judged: " + kind);
  if (small > 0) {
    out.notes.push_back(std::to_string(small) + " tool results below 16 MB copies were not judged (latency-bound)");
  }
  // Numbers with nothing to hold them against prove nothing: a verdict of
  // their own, never a silent pass.
  for (const std::string& subject : no_link) {
    Verdict verdict;
    verdict.subject = subject;
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kNoLinkToJudgeAgainst;
    verdict.reason = "the copy bandwidth of " + subject +
                     " was read but not judged: no link is stated or captured for it to be held against";
    verdict.remediation =
        "State the link the GPU trained to with --link gen4x16 (nvidia-smi -q, GPU Link Info, read during the "
        "copies), or add the machine's `sudo lspci -vv` and `nvidia-smi -q` to the same diagnose.";
    out.verdicts.push_back(std::move(verdict));
  }
  return out;
}

}  // namespace pcieval

namespace pcieval {

ToolJudgement judge_nccl_tests_bandwidth(const Evidence& evidence, const ThresholdProfile& profile,
                                         const ToolJudgeOptions& options) {
  ToolJudgement out;
  const auto& ms = evidence.measurements;
  // The largest size of each (probe, subject).
  std::map<std::pair<std::string, std::string>, std::size_t> chosen;
  bool any = false;
  bool p2p_unknown = false;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const Measurement& m = ms[i];
    if (m.probe != kNcclTestsAllReduceProbe && m.probe != kNcclTestsAllReduceHostProbe) continue;
    any = true;
    if (m.probe == kNcclTestsAllReduceProbe) {
      p2p_unknown = true;
      continue;
    }
    const auto key = std::pair{m.probe, m.subject};
    const auto found = chosen.find(key);
    if (found == chosen.end() || ms[found->second].size_bytes < m.size_bytes) chosen[key] = i;
  }
  if (!any) return out;
  if (p2p_unknown) {
    out.notes.push_back(
        "nccl-tests all-reduce recorded, not judged: the capture does not show peer-to-peer disabled, so NCCL may "
        "have carried it over NVLink or peer-to-peer, which no PCIe link's budget bounds (run all_reduce_perf with "
        "NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO and capture its whole output)");
  }
  if (chosen.empty()) return out;
  if (!options.stated_link) {
    std::set<std::string> subjects;
    for (const auto& [key, index] : chosen) subjects.insert(ms[index].subject);
    for (const std::string& subject : subjects) {
      Verdict verdict;
      verdict.subject = subject;
      verdict.status = VerdictStatus::kInconclusive;
      verdict.code = ReasonCode::kNoLinkToJudgeAgainst;
      verdict.reason = "nccl-tests all-reduce with peer-to-peer disabled was read but not judged: no link was stated";
      verdict.remediation = "State the link every GPU trained to with --link gen4x16 (nvidia-smi -q, GPU Link Info).";
      out.verdicts.push_back(std::move(verdict));
    }
    return out;
  }
  const LinkState link = *options.stated_link;
  auto budget = link_budget(link);
  if (!budget) return out;
  auto direction_budget = direction_budget_gbps(budget.value(), Direction::kAllReduce);
  if (!direction_budget) return out;
  const double budget_gbps = direction_budget.value();
  const std::string against = "the stated " + to_string(link) + " link's all-reduce budget " + gbps_text(budget_gbps) +
                              " (--link; the lower of its read and write budgets)";
  std::size_t small = 0;
  for (const auto& [key, index] : chosen) {
    const Measurement& m = ms[index];
    if (m.size_bytes < kMinJudgedCopyBytes) {
      ++small;
      continue;
    }
    const std::string origin = options.origins.contains(index) ? " (" + options.origins.at(index) + ")" : "";
    const BandwidthThresholds thresholds = host_path_thresholds(thresholds_for(profile, nullptr));
    const double median = m.stats.median_gbps;
    const double fraction = median / budget_gbps;
    const std::string measured = "nccl-tests all_reduce busbw " + gbps_text(median) + " at " +
                                 std::to_string(m.size_bytes) + " bytes with peer-to-peer disabled";
    Verdict verdict;
    verdict.subject = m.subject;
    if (median > kAboveBudgetSlack * budget_gbps) {
      verdict.status = VerdictStatus::kInconclusive;
      verdict.code = ReasonCode::kLinkStateUnknown;
      verdict.reason = measured + " is more than " + against +
                       " allows: the GPUs' links are faster or wider than stated, or the traffic did not go through "
                       "host memory" +
                       origin;
      verdict.remediation =
          "Read the GPUs' links while all_reduce_perf runs (`nvidia-smi -q` GPU Link Info, `lspci -vv` LnkSta) and "
          "state the narrowest with --link.";
      out.verdicts.push_back(std::move(verdict));
      continue;
    }
    verdict.reason = measured + " is " + percent_text(fraction) + " of " + against;
    if (fraction >= thresholds.floor_fraction) {
      const bool warn = fraction < thresholds.warn_fraction;
      verdict.status = VerdictStatus::kPass;
      verdict.code = warn ? ReasonCode::kBandwidthInWarningBand : ReasonCode::kBandwidthAtBudget;
      verdict.reason += (warn ? ": normal for " + to_string(link) + ", under the " +
                                    percent_text(thresholds.warn_fraction) + " warning line"
                              : ": normal for " + to_string(link)) +
                        origin;
      out.verdicts.push_back(std::move(verdict));
      continue;
    }
    const auto fits = links_that_fit(median, Direction::kAllReduce, link, fit_floor_fraction(thresholds));
    verdict.status = VerdictStatus::kBandwidthLow;
    verdict.code = ReasonCode::kBandwidthBelowBudget;
    verdict.reason +=
        ", below the " + percent_text(thresholds.floor_fraction) + " floor: not normal for " + to_string(link) +
        (fits.empty()
             ? "; it fits no link up to " + to_string(link) + " (a host-side limit is likelier than a narrower link)"
             : "; the slowest GPU link fits " + join_states(fits)) +
        origin;
    verdict.remediation =
        "The slowest GPU link bounds an all-reduce through host memory: read every GPU's link while all_reduce_perf "
        "runs (`nvidia-smi -q` GPU Link Info, `lspci -vv` LnkSta of each GPU and the ports above it) to find the "
        "one below " +
        to_string(link) + "; if all read " + to_string(link) +
        ", look at the host side (NUMA placement, inter-socket links, IOMMU).";
    out.verdicts.push_back(std::move(verdict));
  }
  if (small > 0) {
    out.notes.push_back(
        "nccl-tests all-reduce below 16 MB not judged (latency-bound): capture sizes up to 1 GB "
        "(all_reduce_perf -e 1G)");
  }
  return out;
}

}  // namespace pcieval
