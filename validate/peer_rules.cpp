#include "validate/peer_rules.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/text.hpp"
#include "validate/bandwidth_rules.hpp"
#include "validate/budget.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval {
namespace {

bool is_copy_engine_peer_copy(const Measurement& m) {
  return m.probe == kPeerWriteCeProbe || m.probe == kPeerReadCeProbe;
}

// The lowest budget in `probe`'s direction over `links`' expected states,
// with the payload programmed on them where read.
struct RouteBudget {
  LinkState state;
  double budget_gbps = 0;
  Link link;
  std::string payload;  // payload_note of the links; "" where 256 is assumed
};

Result<RouteBudget> narrowest(const PciPath& links, const std::string& probe) {
  const BudgetOptions options = budget_options_for(links);
  std::optional<RouteBudget> lowest;
  for (const Link& link : links) {
    const auto expected = link.expected();
    if (!expected) {
      return make_error("the link " + to_string(link.downstream) + " <-> " + to_string(link.upstream) +
                        " has no known state: " + expected.error().message);
    }
    const auto budget = link_budget(expected.value(), options);
    if (!budget) return budget.error();
    const auto gbps = probe_budget_gbps(budget.value(), probe, Direction::kDeviceToDevice);
    if (!gbps) return gbps.error();
    if (!lowest || gbps.value() < lowest->budget_gbps) lowest = RouteBudget{expected.value(), gbps.value(), link, ""};
  }
  if (!lowest) return make_error("the route has no link");
  lowest->payload = payload_note(links);
  return *lowest;
}

PciPath joined(const PciPath& a, const PciPath& b) {
  PciPath links = a;
  links.insert(links.end(), b.begin(), b.end());
  return links;
}

std::string kind_word(const Measurement& m) { return m.probe.find("write") != std::string::npos ? "write" : "read"; }

std::string measured_text(const Measurement& m, bool with_trials) {
  std::string text = m.probe + " " + m.subject + " " + gbps_text(m.stats.median_gbps);
  if (with_trials) text += " (median of " + std::to_string(m.trials_gbps.size()) + " trials)";
  return text;
}

std::string ports_text(const std::vector<RedirectingPort>& ports) {
  std::string text;
  for (const RedirectingPort& port : ports) {
    text += (text.empty() ? "" : ", ") + to_string(port.port) + " (ACSCtl: " + acs_bits_text(port.control) + ")";
  }
  return text;
}

// A list for a note: the first few, then how many more.
std::string listed(const std::vector<std::string>& items) {
  constexpr std::size_t kShown = 4;
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < kShown; ++i) text += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > kShown) text += " and " + std::to_string(items.size() - kShown) + " more";
  return text;
}

// Where the evidence is a live run (probe settings recorded), trials are
// counted and their spread judged; a tool's capture has one number per copy.
std::optional<Verdict> noisy(const Measurement& m, const BandwidthThresholds& thresholds, bool live) {
  if (!live) return std::nullopt;
  const bool few = static_cast<int>(m.trials_gbps.size()) < thresholds.min_trials;
  if (!few && m.stats.cv <= thresholds.max_cv) return std::nullopt;
  Verdict verdict;
  verdict.subject = m.subject;
  verdict.status = VerdictStatus::kInconclusive;
  verdict.code = ReasonCode::kBandwidthTooNoisy;
  verdict.reason = measured_text(m, true) + " cannot be judged: " +
                   (few ? "fewer than " + std::to_string(thresholds.min_trials) + " trials"
                        : "trials spread " + percent_text(m.stats.cv) + " (CV), over the " +
                              percent_text(thresholds.max_cv) + " allowed");
  verdict.remediation = "Run again on an idle node: other traffic on the GPUs' links makes the trials disagree.";
  return verdict;
}

// A number held to `budget_gbps`: a pass, a warning-band pass, or low.
Verdict against_budget(const Measurement& m, double budget_gbps, const std::string& against,
                       const BandwidthThresholds& thresholds, bool live) {
  Verdict verdict;
  verdict.subject = m.subject;
  const double fraction = m.stats.median_gbps / budget_gbps;
  verdict.reason = measured_text(m, live) + " is " + percent_text(fraction) + " of " + against;
  if (fraction >= thresholds.floor_fraction) {
    verdict.status = VerdictStatus::kPass;
    verdict.code =
        fraction >= thresholds.warn_fraction ? ReasonCode::kPeerBandwidthAtBudget : ReasonCode::kBandwidthInWarningBand;
    if (fraction < thresholds.warn_fraction) {
      verdict.reason += ", in the warning band between the " + percent_text(thresholds.floor_fraction) + " floor and " +
                        percent_text(thresholds.warn_fraction);
      verdict.remediation = "Not a failure: compare with the same pair on other nodes of this model.";
    }
    return verdict;
  }
  verdict.status = VerdictStatus::kBandwidthLow;
  verdict.code = ReasonCode::kPeerBandwidthBelowBudget;
  verdict.reason += ", below the " + percent_text(thresholds.floor_fraction) + " floor";
  return verdict;
}

std::string pair_key(const PciAddress& a, const PciAddress& b) {
  return a < b ? to_string(a) + "->" + to_string(b) : to_string(b) + "->" + to_string(a);
}

// A captured tool's peer number whose GPUs the capture names by CUDA index
// only ("GPU 0->GPU 1": p2pBandwidthLatencyTest pasted without its Device
// lines): no route and no budget, but its staged twin in the same capture
// still says whether peer access is a detour.
bool is_unaddressed_peer_number(const Measurement& m) {
  return m.direction == Direction::kDeviceToDevice && m.probe.starts_with("p2p_") && m.gpus.empty() &&
         m.subject.find("->") != std::string::npos;
}

// "GPU 1->GPU 0" for "GPU 0->GPU 1".
std::string reversed_subject(const std::string& subject) {
  const auto arrow = subject.find("->");
  return subject.substr(arrow + 2) + "->" + subject.substr(0, arrow);
}

// The p2p_staged_ce of the same GPUs and aggregation, in the same order or
// else the reverse; nullptr when none was measured (or verified, on a live
// run: a capture's numbers are never verified by pcieval).
const Measurement* staged_of(const Evidence& evidence, const Measurement& m, bool live) {
  const bool addressed = is_peer_measurement(m);
  const Measurement* reverse = nullptr;
  for (const Measurement& other : evidence.measurements) {
    if (other.probe != kPeerStagedCeProbe || (live && !other.verified) || other.aggregation != m.aggregation) continue;
    if (addressed && is_peer_measurement(other)) {
      if (other.gpus == m.gpus) return &other;
      if (other.gpus[0] == m.gpus[1] && other.gpus[1] == m.gpus[0]) reverse = &other;
    } else if (!addressed && is_unaddressed_peer_number(other)) {
      if (other.subject == m.subject) return &other;
      if (other.subject == reversed_subject(m.subject)) reverse = &other;
    }
  }
  return reverse;
}

}  // namespace

bool is_peer_measurement(const Measurement& m) {
  return m.direction == Direction::kDeviceToDevice && m.probe.starts_with("p2p_") && m.gpus.size() == 2 &&
         m.gpus[0] != m.gpus[1];
}

RuleJudgement judge_peers(const Evidence& evidence, const ThresholdProfile& profile) {
  RuleJudgement out;
  const bool live = evidence.probe_settings.has_value();
  const std::optional<double> cross_root_floor = profile.defaults.path_settings.cross_root_peer_floor_gbps;
  std::vector<std::string> cross_root;
  std::vector<std::string> faster_than_pcie;
  std::vector<std::string> route_unknown;
  std::vector<std::string> no_link;
  std::set<std::string> unjudged_kinds;
  std::set<std::string> measured_pairs;

  for (const Measurement& m : evidence.measurements) {
    const bool addressed = is_peer_measurement(m);
    if (!addressed && !is_unaddressed_peer_number(m)) continue;
    // pcieval checks the data of every peer copy it makes; a captured tool's
    // number is never verified by pcieval (p2pBandwidthLatencyTest and
    // nvbandwidth check no data) and is judged as the tools' host numbers are.
    if (live && !m.verified) {
      out.verdicts.push_back(unverified_measurement(m, m.subject));
      continue;
    }
    if (m.probe == kPeerStagedCeProbe) continue;
    if (addressed) measured_pairs.insert(pair_key(m.gpus[0], m.gpus[1]));

    const DeviceRecord* first = addressed ? find_device(evidence, m.gpus[0]) : nullptr;
    const DeviceRecord* second = addressed ? find_device(evidence, m.gpus[1]) : nullptr;
    const PairRoute route = first != nullptr && second != nullptr ? route_between(*first, *second) : PairRoute{};
    const std::vector<RedirectingPort> redirecting = redirecting_ports(route);

    // Peer access slower than the detour through host memory: wrong whatever
    // the link, so judged with or without one.
    if (is_copy_engine_peer_copy(m)) {
      if (const Measurement* staged = staged_of(evidence, m, live);
          staged != nullptr && m.stats.median_gbps < staged->stats.median_gbps) {
        Verdict verdict;
        verdict.subject = m.subject;
        verdict.status = VerdictStatus::kMisconfigured;
        verdict.code = ReasonCode::kPeerSlowerThanHostStaged;
        verdict.reason = measured_text(m, false) + " with peer access is slower than the same copy staged through " +
                         "host memory (p2p_staged_ce " + gbps_text(staged->stats.median_gbps) +
                         (m.aggregation == Aggregation::kWithReverse ? ", both with the reverse copy running" : "") +
                         "): the peer traffic takes a detour that costs more than crossing host memory twice";
        verdict.reason += redirecting.empty()
                              ? " (ACS redirect on a switch port, IOMMU translation, or a root complex that forwards "
                                "peer traffic slowly)"
                              : "; ACS redirects it on " + ports_text(redirecting);
        verdict.remediation =
            "Look for ReqRedir+ or CmpltRedir+ on the switch ports between the two GPUs (`sudo lspci -vvv | grep "
            "ACSCtl`) and for a translated IOMMU (`cat /sys/kernel/iommu_groups/*/type`; boot with iommu=pt), and run "
            "`sudo pcieval check --p2p` to name the port. Until it is fixed NCCL is faster on this node with "
            "NCCL_P2P_DISABLE=1.";
        out.verdicts.push_back(std::move(verdict));
      }
    }

    if (!is_copy_engine_peer_copy(m) || m.aggregation != Aggregation::kAlone) {
      unjudged_kinds.insert(m.method == CopyMethod::kSmKernel ? "SM-kernel peer copies"
                                                              : "peer copies measured while the reverse copy ran");
      continue;
    }
    const BandwidthThresholds thresholds =
        bandwidth_thresholds_for(thresholds_for(profile, first), m.probe, Direction::kDeviceToDevice);

    if (route.route == PeerRoute::kInsideSwitch) {
      const auto budget = narrowest(joined(route.below_first, route.below_second), m.probe);
      if (!budget) {
        Verdict verdict;
        verdict.subject = m.subject;
        verdict.status = VerdictStatus::kInconclusive;
        verdict.code = ReasonCode::kNoLinkBudget;
        verdict.reason =
            measured_text(m, live) + " was measured, but its route has no budget: " + budget.error().message;
        verdict.remediation = "Run `sudo pcieval check --p2p` on the node so that every port between the GPUs is read.";
        out.verdicts.push_back(std::move(verdict));
        continue;
      }
      if (m.stats.median_gbps > kAboveBudgetSlack * budget->budget_gbps) {
        faster_than_pcie.push_back(m.subject + " " + m.probe + " " + gbps_text(m.stats.median_gbps));
        continue;
      }
      if (auto verdict = noisy(m, thresholds, live)) {
        out.verdicts.push_back(std::move(*verdict));
        continue;
      }
      const std::string against =
          "the " + to_string(budget->state) + " " + kind_word(m) + " budget " + gbps_text(budget->budget_gbps) +
          " of the narrowest link between them inside switch " + to_string(*route.meeting_port) +
          (budget->payload.empty() ? "" : " (" + budget->payload + ")");
      Verdict verdict = against_budget(m, budget->budget_gbps, against, thresholds, live);
      if (verdict.status == VerdictStatus::kBandwidthLow) {
        verdict.link = LinkRef{budget->link.downstream, budget->link.upstream};
        verdict.reason += redirecting.empty()
                              ? ". Likely cause: a link on the route retraining under load, or the switch itself; "
                                "the GPUs' own copies to the host (h2d_ce, d2h_ce) tell a link from the switch"
                              : ". Likely cause: ACS redirect on " + ports_text(redirecting) +
                                    " sends the traffic up through the root complex";
        verdict.remediation =
            redirecting.empty()
                ? "Read LnkSta of every port between the two GPUs during the copy (`sudo lspci -vvv -s PORT`) and "
                  "their AER counters; compare with the same pair on a healthy node of this model."
                : "Clear ACS redirect on " + to_string(redirecting.front().port) + ": `setpci -s " +
                      to_string(redirecting.front().port) +
                      " ECAP_ACS+0x6.w=0000` until the next boot, the BIOS's ACS setting or pci=disable_acs_redir= "
                      "for good (see acs_redirects_peer_traffic).";
      }
      out.verdicts.push_back(std::move(verdict));
      continue;
    }

    if (route.route == PeerRoute::kAcrossRootComplex) {
      // Faster than PCIe on either path allows: NVLink or another link.
      const auto ceiling = narrowest(joined(first->path, second->path), m.probe);
      if (ceiling && m.stats.median_gbps > kAboveBudgetSlack * ceiling->budget_gbps) {
        faster_than_pcie.push_back(m.subject + " " + m.probe + " " + gbps_text(m.stats.median_gbps));
        continue;
      }
      if (!cross_root_floor) {
        cross_root.push_back(m.subject + " " + m.probe + " " + gbps_text(m.stats.median_gbps));
        continue;
      }
      if (auto verdict = noisy(m, thresholds, live)) {
        out.verdicts.push_back(std::move(*verdict));
        continue;
      }
      Verdict verdict;
      verdict.subject = m.subject;
      const std::string measured = measured_text(m, live) +
                                   " crosses the root complex by design (the GPUs are under "
                                   "different root ports: " +
                                   to_string(first->path.back().upstream) + ", " +
                                   to_string(second->path.back().upstream) + ")";
      if (m.stats.median_gbps >= *cross_root_floor) {
        verdict.status = VerdictStatus::kPass;
        verdict.code = ReasonCode::kPeerBandwidthAtBudget;
        verdict.reason = measured + " and reaches the profile's floor of " + gbps_text(*cross_root_floor) +
                         " for such pairs (path_settings.cross_root_peer_floor_gbps)";
      } else {
        verdict.status = VerdictStatus::kBandwidthLow;
        verdict.code = ReasonCode::kPeerBandwidthBelowFloor;
        verdict.reason = measured + ", below the profile's floor of " + gbps_text(*cross_root_floor) +
                         " for such pairs (path_settings.cross_root_peer_floor_gbps)";
        verdict.remediation =
            "Peer traffic between root ports is bounded by the root complex and, across sockets, the inter-socket "
            "link: check the BIOS's settings for them (IOMMU, ACS, the inter-socket link's speed) and the IOMMU "
            "(iommu=pt); compare with the same pair on a healthy node of this model.";
      }
      out.verdicts.push_back(std::move(verdict));
      continue;
    }

    // No route in the evidence: the stated link, as the tools' host numbers.
    if (evidence.stated_link) {
      const LinkState link = evidence.stated_link->link;
      const auto budget = link_budget(link);
      const auto gbps = budget ? probe_budget_gbps(budget.value(), m.probe, Direction::kDeviceToDevice)
                               : Result<double>(budget.error());
      if (!gbps) continue;
      if (m.stats.median_gbps > kAboveBudgetSlack * gbps.value()) {
        faster_than_pcie.push_back(m.subject + " " + m.probe + " " + gbps_text(m.stats.median_gbps));
        continue;
      }
      if (auto verdict = noisy(m, thresholds, live)) {
        out.verdicts.push_back(std::move(*verdict));
        continue;
      }
      Verdict verdict = against_budget(m, gbps.value(),
                                       "the stated " + to_string(link) + " link's " + kind_word(m) + " budget " +
                                           gbps_text(gbps.value()) + " (--link)",
                                       thresholds, live);
      if (verdict.status == VerdictStatus::kBandwidthLow) {
        verdict.reason += ": not normal for a pair whose traffic crosses only " + to_string(link) +
                          " links; a pair whose traffic crosses the root complex by design may be slower";
        verdict.remediation =
            "Capture `sudo lspci -vvv` of the machine with the same diagnose: the GPUs' paths say whether the pair "
            "shares a switch (held to its links) or crosses the root complex (not held to a link), and show ACSCtl.";
      }
      out.verdicts.push_back(std::move(verdict));
      continue;
    }
    (live ? route_unknown : no_link).push_back(m.subject + " " + m.probe + " " + gbps_text(m.stats.median_gbps));
  }

  // Peer access reported unavailable, for pairs with no peer copy measured.
  std::map<std::string, std::vector<const PeerStatus*>> unavailable;
  for (const PeerStatus& status : evidence.peer_status) {
    if (status.ok() || status.gpu == status.peer) continue;
    const std::string key = pair_key(status.gpu, status.peer);
    if (!measured_pairs.contains(key)) unavailable[key].push_back(&status);
  }
  std::vector<std::string> unavailable_elsewhere;
  for (const auto& [key, statuses] : unavailable) {
    // Both ways of a pair usually answer alike: each answer once.
    std::vector<std::string> answers;
    for (const PeerStatus* status : statuses) {
      std::string answer =
          std::string(to_string(status->capability)) + ": " + status->status + " (" + status->source + ")";
      if (std::find(answers.begin(), answers.end(), answer) == answers.end()) answers.push_back(std::move(answer));
    }
    std::string what;
    for (const std::string& answer : answers) what += (what.empty() ? "" : ", ") + answer;
    const DeviceRecord* a = find_device(evidence, statuses.front()->gpu);
    const DeviceRecord* b = find_device(evidence, statuses.front()->peer);
    const PairRoute route = a != nullptr && b != nullptr ? route_between(*a, *b) : PairRoute{};
    if (route.route != PeerRoute::kInsideSwitch) {
      unavailable_elsewhere.push_back(key + " (" + what + ")");
      continue;
    }
    const std::vector<RedirectingPort> redirecting = redirecting_ports(route);
    Verdict verdict;
    verdict.subject = key;
    verdict.status = VerdictStatus::kMisconfigured;
    verdict.code = ReasonCode::kPeerAccessUnavailable;
    verdict.reason = "the two GPUs share switch " + to_string(*route.meeting_port) +
                     " but may not reach each other's memory directly (" + what + ")" +
                     (redirecting.empty() ? "" : "; ACS redirects peer traffic on " + ports_text(redirecting));
    verdict.remediation =
        "GPUs under one switch should have peer access: look for ReqRedir+ or CmpltRedir+ on the switch's downstream "
        "ports (`sudo lspci -vvv | grep ACSCtl`), a translated IOMMU (boot with iommu=pt), and the driver's view "
        "(`nvidia-smi topo -p2p r`); chipset_not_supported on a switch pair usually means one of the first two.";
    out.verdicts.push_back(std::move(verdict));
  }

  if (!no_link.empty()) {
    Verdict verdict;
    verdict.subject = "node";
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kNoLinkToJudgeAgainst;
    verdict.reason =
        "peer copies were read but not judged against a budget: no link is stated or captured for " + listed(no_link);
    verdict.remediation =
        "Add the machine's `sudo lspci -vvv` to the same diagnose (each pair is then held to its own route), or "
        "state the link the GPUs trained to with --link gen4x16.";
    out.verdicts.push_back(std::move(verdict));
  }
  if (!cross_root.empty()) {
    out.notes.push_back(
        "peer copies that cross the root complex by design (GPUs under different root ports), "
        "measured and not judged (a profile's path_settings.cross_root_peer_floor_gbps judges them): " +
        listed(cross_root));
  }
  if (!faster_than_pcie.empty()) {
    out.notes.push_back(
        "peer copies faster than any PCIe link on their route allows, so they crossed NVLink or "
        "another interconnect; not judged against PCIe: " +
        listed(faster_than_pcie));
  }
  if (!route_unknown.empty()) {
    out.notes.push_back("peer copies whose route the evidence does not give (a GPU without its path), not judged: " +
                        listed(route_unknown));
  }
  for (const std::string& kind : unjudged_kinds) {
    out.notes.push_back(kind + " recorded, not judged against a budget");
  }
  if (!unavailable_elsewhere.empty()) {
    out.notes.push_back(
        "peer access unavailable between GPUs that do not share a switch (their traffic would cross "
        "the root complex): " +
        listed(unavailable_elsewhere));
  }
  return out;
}

}  // namespace pcieval
