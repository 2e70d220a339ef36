#include "validate/soak_rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "model/text.hpp"
#include "validate/link_rules.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval {
namespace {

std::string round_when(const SoakRound& round) {
  return "round " + std::to_string(round.index) + " (" + fixed_text(round.start_s, 0) + "-" +
         fixed_text(round.end_s, 0) + " s into the soak)";
}

std::string list_rounds(const std::vector<int>& rounds) {
  std::string out;
  for (int round : rounds) out += (out.empty() ? "" : ", ") + std::to_string(round);
  return out;
}

std::optional<Verdict> interrupted_verdict(const Evidence& evidence) {
  const SoakRecord* soak = evidence.soak ? &*evidence.soak : nullptr;
  if (!evidence.interrupted && (soak == nullptr || soak->finished)) return std::nullopt;
  Verdict verdict;
  verdict.subject = "node";
  verdict.status = VerdictStatus::kInconclusive;
  verdict.code = ReasonCode::kRunInterrupted;
  const std::string done =
      soak == nullptr
          ? std::string()
          : std::to_string(soak->rounds.size()) + " complete round" + (soak->rounds.size() == 1 ? "" : "s") +
                (soak->requested_rounds ? " of " + std::to_string(*soak->requested_rounds) : std::string());
  if (evidence.interrupted && soak != nullptr) {
    verdict.reason = *evidence.interrupted + " stopped the soak after " + done +
                     (soak->requested_duration_s ? " (asked for " + fixed_text(*soak->requested_duration_s, 0) + " s)"
                                                 : std::string()) +
                     "; the complete rounds are judged, the one in flight was dropped";
  } else if (evidence.interrupted) {
    verdict.reason = *evidence.interrupted +
                     " stopped the run before every probe ran; the probes that finished are judged, the rest skipped";
  } else {
    verdict.reason = "the soak did not finish: this document was written after " + done +
                     " and nothing followed (the run crashed, lost power or is still running)";
  }
  verdict.remediation =
      "Run it again to the end: a burn-in proves nothing about the time it did not run. If the run died on its own, "
      "look at the kernel log of that time (dmesg) for a GPU that fell off the bus (Xid 79) or an AER fatal error.";
  return verdict;
}

// Measurements that are the same experiment in every round: the same probe,
// subject and copy, over the same GPUs (a GPU retired in one round leaves the
// others of its group a shared uplink to themselves).
using SeriesKey = std::tuple<std::string, std::string, Direction, CopyMethod, HostMemory, Aggregation, std::uint64_t,
                             std::vector<PciAddress>>;

std::vector<Verdict> dip_verdicts(const Evidence& evidence, const SoakRecord& soak, const ThresholdProfile& profile) {
  struct Point {
    const SoakRound* round;
    const Measurement* measurement;
  };
  std::map<SeriesKey, std::vector<Point>> series;
  std::vector<SeriesKey> order;
  for (const SoakRound& round : soak.rounds) {
    // Who copied together in each probe of this round: a GPU's entry of a
    // group probe lists only itself, but its rate depends on every GPU
    // beside it.
    std::map<std::string, std::set<PciAddress>> together;
    for (const Measurement& m : round.measurements) together[m.probe].insert(m.gpus.begin(), m.gpus.end());
    for (const Measurement& m : round.measurements) {
      if (m.gpus.empty() || m.trials_gbps.empty()) continue;
      // A pageable copy is staged through the driver's buffer by the CPU: a
      // busy host slows it with the link untouched. The pinned copies of the
      // same GPU in the same round judge the link.
      if (m.host_memory != HostMemory::kPinned) continue;
      const bool shared = m.aggregation != Aggregation::kAlone && m.aggregation != Aggregation::kWithReverse;
      std::vector<PciAddress> gpus = m.gpus;
      if (shared) gpus.assign(together[m.probe].begin(), together[m.probe].end());
      std::sort(gpus.begin(), gpus.end());
      const SeriesKey key{m.probe,       m.subject,     m.direction,  m.method,
                          m.host_memory, m.aggregation, m.size_bytes, std::move(gpus)};
      auto& points = series[key];
      if (points.empty()) order.push_back(key);
      points.push_back({&round, &m});
    }
  }
  std::vector<Verdict> verdicts;
  for (const SeriesKey& key : order) {
    const auto& points = series[key];
    if (points.size() < 2) continue;
    std::vector<double> medians;
    for (const Point& p : points) medians.push_back(p.measurement->stats.median_gbps);
    // The median of the rounds' medians, with the model's one definition of a median.
    const double reference = summarize_trials(medians).median_gbps;
    if (reference <= 0) continue;
    const Measurement& first = *points.front().measurement;
    const DeviceRecord* device = first.gpus.size() == 1 ? find_device(evidence, first.gpus.front()) : nullptr;
    const double max_drop = thresholds_for(profile, device).baseline_max_drop_fraction;
    const double limit = reference * (1 - max_drop);
    const Point* worst = nullptr;
    std::vector<int> below;
    for (const Point& p : points) {
      const double median = p.measurement->stats.median_gbps;
      if (median >= limit) continue;
      below.push_back(p.round->index);
      if (worst == nullptr || median < worst->measurement->stats.median_gbps) worst = &p;
    }
    if (worst == nullptr) continue;
    const double low = worst->measurement->stats.median_gbps;
    Verdict verdict;
    verdict.subject = first.subject;
    verdict.status = VerdictStatus::kBandwidthLow;
    verdict.code = ReasonCode::kBandwidthDipDuringSoak;
    verdict.reason = first.probe + " " + std::string(to_string(first.direction)) + " fell to " + fixed_text(low, 1) +
                     " GB/s in " + round_when(*worst->round) + ", " + fixed_text((1 - low / reference) * 100, 0) +
                     "% below its median of " + fixed_text(reference, 1) + " GB/s over " +
                     std::to_string(points.size()) + " rounds (a dip of more than " + fixed_text(max_drop * 100, 0) +
                     "% fails); rounds below: " + list_rounds(below);
    verdict.remediation =
        "A link that slows under sustained load: look in link_samples around that time for a retrain to a lower "
        "speed or width, and at the slot's cooling and power (nvidia-smi -q -d TEMPERATURE,POWER); reseat or move "
        "the card, then soak again.";
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

bool below(const LinkState& state, const LinkState& expected) {
  return state.gen < expected.gen || state.width < expected.width;
}

std::vector<Verdict> link_drop_verdicts(const Evidence& evidence, const SoakRecord& soak) {
  std::vector<Verdict> verdicts;
  std::vector<PciAddress> judged_ports;
  for (const DeviceRecord& device : evidence.devices) {
    if (device.function.kind != DeviceKind::kGpu) continue;
    for (const Link& link : device.path) {
      if (std::find(judged_ports.begin(), judged_ports.end(), link.downstream) != judged_ports.end()) continue;
      const auto expected = link.expected();
      if (!expected) continue;
      std::vector<int> low_rounds;
      std::vector<int> full_rounds;
      const SoakRound* first_low = nullptr;
      std::optional<LinkState> first_low_state;
      for (const SoakRound& round : soak.rounds) {
        std::vector<LinkSample> in_round;
        for (const LinkSample& s : evidence.link_samples) {
          if (s.port == link.downstream && s.t_s >= round.start_s && s.t_s <= round.end_s) in_round.push_back(s);
        }
        const auto best = best_state_under_load(in_round, link.downstream);
        if (!best) continue;
        if (below(*best, expected.value())) {
          low_rounds.push_back(round.index);
          if (first_low == nullptr) {
            first_low = &round;
            first_low_state = best;
          }
        } else {
          full_rounds.push_back(round.index);
        }
      }
      if (first_low == nullptr || full_rounds.empty()) continue;
      judged_ports.push_back(link.downstream);
      Verdict verdict;
      verdict.subject = to_string(device.function.bdf);
      verdict.status = VerdictStatus::kLinkDowngraded;
      verdict.code = ReasonCode::kLinkDroppedDuringSoak;
      verdict.link = LinkRef{link.downstream, link.upstream};
      verdict.reason = "the link " + to_string(link.downstream) + " -> " + to_string(link.upstream) +
                       " reached at best " + to_string(*first_low_state) + " under load in " + round_when(*first_low) +
                       ", below its expected " + to_string(expected.value()) + ", which it reached in rounds " +
                       list_rounds(full_rounds) + "; rounds below: " + list_rounds(low_rounds);
      verdict.remediation =
          "A link that retrains lower under load and comes back: check the AER counters and the kernel log of "
          "that time, the riser or cable, the slot's cooling; reseat the card or move it to another slot, then "
          "soak again.";
      verdicts.push_back(std::move(verdict));
    }
  }
  return verdicts;
}

}  // namespace

std::vector<Verdict> judge_soak(const Evidence& evidence, const ThresholdProfile& profile) {
  std::vector<Verdict> verdicts;
  if (auto stopped = interrupted_verdict(evidence)) verdicts.push_back(std::move(*stopped));
  if (!evidence.soak) return verdicts;
  for (Verdict& v : dip_verdicts(evidence, *evidence.soak, profile)) verdicts.push_back(std::move(v));
  for (Verdict& v : link_drop_verdicts(evidence, *evidence.soak)) verdicts.push_back(std::move(v));
  return verdicts;
}

}  // namespace pcieval
