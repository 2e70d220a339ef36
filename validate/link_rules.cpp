#include "validate/link_rules.hpp"

#include <algorithm>
#include <set>

#include "model/pci_address.hpp"
#include "model/text.hpp"
#include "validate/budget.hpp"
#include "validate/expectation.hpp"

namespace pcieval {
namespace {

enum class FindingKind { kOk, kDowngraded, kIdle, kUnknown, kAboveCapability };

struct Finding {
  FindingKind kind = FindingKind::kOk;
  ReasonCode code = ReasonCode::kLinkAtExpectedState;
  const Link* link = nullptr;
  std::string text;
  double negotiated_raw_gbps = 0;  // to name the narrowest downgraded hop
};

std::string describe(const Link& link) {
  return to_string(link.downstream) + " <-> " + to_string(link.upstream) + " (" +
         (link.position == LinkPosition::kDeviceLink ? "device link" : "switch uplink") + ")";
}

double raw_gbps(const LinkState& state) {
  const auto budget = link_budget(state);
  return budget ? budget->raw_gbps : 0.0;
}

// `what` names the link; `expectation` says what it should run at and what
// that rests on. `idle_gpu_link`: a GPU's own link read with no load applied.
Finding judge_state(const std::string& what, const LinkExpectation& expectation, bool idle_gpu_link) {
  Finding finding;
  const std::string note = expectation.note.empty() ? std::string() : " (" + expectation.note + ")";
  if (!expectation.expected || !expectation.negotiated) {
    finding.kind = FindingKind::kUnknown;
    finding.code = ReasonCode::kLinkStateUnknown;
    finding.text =
        what + " cannot be judged: " +
        (!expectation.expected ? expectation.expected.error().message : expectation.negotiated.error().message) + note;
    return finding;
  }
  const LinkState& want = expectation.expected.value();
  const LinkState& got = expectation.negotiated.value();
  const std::string states = "runs " + to_string(got) + ", expected " + to_string(want);
  if (got.gen > want.gen || got.width > want.width) {
    finding.kind = FindingKind::kAboveCapability;
    finding.code = ReasonCode::kLinkAboveCapability;
    finding.text = what + " " + states + ": above what both ends can do, so the readings are unreliable" + note;
    return finding;
  }
  const bool slow = got.gen < want.gen;
  const bool narrow = got.width < want.width;
  if (!slow && !narrow) {
    // A device judged without the port above it passes its own link only.
    const bool own_only = expectation.basis == ExpectationBasis::kOwnCapability ||
                          expectation.basis == ExpectationBasis::kNvmlMax ||
                          expectation.basis == ExpectationBasis::kGuestNoPort;
    finding.code = own_only ? ReasonCode::kLinkAtOwnCapability : ReasonCode::kLinkAtExpectedState;
    finding.text = what + " at " + to_string(got) + note;
    return finding;
  }
  finding.negotiated_raw_gbps = raw_gbps(got);
  if (slow && !narrow && idle_gpu_link) {
    finding.kind = FindingKind::kIdle;
    finding.code = ReasonCode::kGpuLinkSpeedIdle;
    finding.text =
        what + " " + states + " with no load applied; idle GPUs lower their link speed; run the load probes" + note;
    return finding;
  }
  if (!expectation.conclusive) {
    // Below the most the device can do, but what is above it (a slot that
    // allows no more, or a downgrade) is not in the evidence.
    finding.kind = FindingKind::kUnknown;
    finding.code = ReasonCode::kLinkPathUnknown;
    finding.text = what + " runs " + to_string(got) + ", below the " + to_string(want) +
                   " it can reach on its own, but " + expectation.note +
                   ": a downgrade, or a port above that allows no more";
    return finding;
  }
  finding.kind = FindingKind::kDowngraded;
  if (slow && narrow && !idle_gpu_link) {
    finding.code = ReasonCode::kLinkSpeedAndWidthBelowExpected;
  } else if (narrow) {
    finding.code = ReasonCode::kLinkWidthBelowExpected;
  } else {
    finding.code = ReasonCode::kLinkSpeedBelowExpected;
  }
  finding.text = what + " " + states;
  if (slow && narrow && idle_gpu_link) {
    finding.text += " (the width loss is a fault; the speed may be idle power saving)";
  }
  finding.text += note;
  return finding;
}

Finding judge_link(const Link& link, const LinkExpectation& expectation, bool device_is_gpu, bool gpus_under_load) {
  const bool idle_gpu_link = device_is_gpu && link.position == LinkPosition::kDeviceLink && !gpus_under_load;
  Finding finding = judge_state("link " + describe(link), expectation, idle_gpu_link);
  finding.link = &link;
  return finding;
}

std::string remediation_for(ReasonCode code, const Link* link) {
  const std::string port = link != nullptr ? to_string(link->upstream) : std::string("the port above");
  const std::string device = link != nullptr ? to_string(link->downstream) : std::string("the device");
  switch (code) {
    case ReasonCode::kLinkAtExpectedState:
      return "";
    case ReasonCode::kLinkWidthBelowExpected:
      return "Lanes are missing, which retraining rarely fixes: reseat " + device +
             " (and its riser or cable), inspect the slot for debris or damage, then check `lspci -vv -s " + port +
             "` LnkSta after a cold boot; if the width stays low, swap slots to tell a bad slot from a bad card.";
    case ReasonCode::kLinkSpeedBelowExpected:
      return "Retrain the link from the port above (" + port +
             ", Link Control Retrain Link) or reboot; check the slot's PCIe speed setting in the BIOS; if it trains "
             "low again, reseat " +
             device + " and check risers and retimers for signal problems (AER counters in dmesg).";
    case ReasonCode::kLinkSpeedAndWidthBelowExpected:
      return "Both speed and lanes are lost: reseat " + device +
             " (and its riser or cable), check the slot and the "
             "BIOS PCIe settings, then reread `lspci -vv -s " +
             port + "` after a cold boot.";
    case ReasonCode::kGpuLinkSpeedIdle:
      return "Read the link while the GPU is busy: `nvidia-smi -q` (GPU Link Info) during a GPU workload shows the "
             "loaded generation; a link that stays low under load is a downgrade.";
    case ReasonCode::kLinkStateUnknown:
      return "Make sure sysfs is readable (inside a container, mount the host's /sys) and that " + device +
             " still answers: `lspci -vv -s " + device +
             "`; a device reading 0xffff has fallen off the bus (check dmesg for AER errors and NVIDIA Xid 79).";
    case ReasonCode::kLinkAboveCapability:
      return "A link cannot run faster than both ends allow: reread with `lspci -vv -s " + device +
             "`; if the registers agree, report the platform's firmware to the vendor.";
    case ReasonCode::kLinkPathUnknown:
      return "Capture the whole tree, not one device: `lspci -vvv` as root without -s, or run `pcieval check` on the "
             "node itself, so every port above " +
             device + " can be read.";
    case ReasonCode::kProbeFailed:        // judged in probe_rules.cpp
    case ReasonCode::kBandwidthAtBudget:  // judged in bandwidth_rules.cpp
    case ReasonCode::kBandwidthBelowBudget:
    case ReasonCode::kBandwidthTooNoisy:
    case ReasonCode::kBandwidthBelowBaseline:        // judged in compare.cpp
    case ReasonCode::kUncorrectableErrorsUnderLoad:  // judged in error_rules.cpp
    case ReasonCode::kCorrectableErrorsUnderLoad:
    case ReasonCode::kBandwidthInWarningBand:
    case ReasonCode::kGpuBusyBeforeRun:
    case ReasonCode::kUncorrectableErrorsLogged:  // judged in capture_rules.cpp
    case ReasonCode::kGpuFellOffBus:
    case ReasonCode::kRunInterrupted:  // judged in soak_rules.cpp
    case ReasonCode::kBandwidthDipDuringSoak:
    case ReasonCode::kLinkDroppedDuringSoak:
    case ReasonCode::kGpuUnresponsive:  // judged in probe_rules.cpp
    case ReasonCode::kLinkAtOwnCapability:
    case ReasonCode::kNoLinkBudget:  // judged in bandwidth_rules.cpp
    case ReasonCode::kBandwidthAboveBudget:
    case ReasonCode::kNoLinkToJudgeAgainst:         // judged in stated_link_rules.cpp
    case ReasonCode::kNothingJudged:                // judged in judge.cpp
    case ReasonCode::kCorrectableErrorBurstLogged:  // judged in event_rate_rules.cpp
    case ReasonCode::kCorrectableErrorsWithinSpecRate:
    case ReasonCode::kCorrectableErrorRateUnknown:
    case ReasonCode::kAcsRedirectsPeerTraffic:  // judged in path_settings_rules.cpp
    case ReasonCode::kPayloadBelowSupported:
    case ReasonCode::kPayloadAbovePort:
    case ReasonCode::kAspmEnabled:
    case ReasonCode::kIommuTranslated:
    case ReasonCode::kPathSettingsAsExpected:
    case ReasonCode::kPathSettingsNotRead:
    case ReasonCode::kPeerBandwidthAtBudget:  // judged in peer_rules.cpp
    case ReasonCode::kPeerBandwidthBelowBudget:
    case ReasonCode::kPeerSlowerThanHostStaged:
    case ReasonCode::kPeerAccessUnavailable:
    case ReasonCode::kPeerBandwidthBelowFloor:
      return "";
    case ReasonCode::kGpusMissing:
      return "Compare `nvidia-smi -L` and `lspci -d 10de:` with the node's inventory; a GPU that fell off the bus "
             "shows Xid 79 in dmesg; reseat it or check its power cables, and check that it is enabled in the BIOS.";
  }
  return "";
}

bool has_function_zero_sibling(const PciAddress& bdf, const Evidence& evidence) {
  PciAddress zero = bdf;
  zero.function = 0;
  return std::any_of(evidence.devices.begin(), evidence.devices.end(),
                     [&](const DeviceRecord& d) { return d.function.bdf == zero; });
}

// A device with a link of its own but no port above it in the evidence (a
// capture of one device, an nvidia-smi capture, a guest without ports).
// Root-complex integrated endpoints on live hosts read "Unknown"/x0 and carry
// no NVML reading, so they never get here; they have no link to judge.
bool has_unplaced_link(const DeviceRecord& device) {
  if (!device.path.empty()) return false;
  if (device.function.link && device.function.link->negotiated().ok()) return true;
  return device.nvml &&
         ((device.nvml->current_gen && device.nvml->current_width) || (device.nvml->max_gen && device.nvml->max_width));
}

// A GPU with no link reading at all: its block was cut short, elided or never
// captured. Not a pass: the one device the run is about was not judged.
bool is_unread_gpu(const DeviceRecord& device) {
  return device.function.kind == DeviceKind::kGpu && !device.function.is_virtual_function && device.path.empty() &&
         !has_unplaced_link(device);
}

Verdict unread_gpu_verdict(const DeviceRecord& device) {
  Verdict verdict;
  verdict.subject = to_string(device.function.bdf);
  verdict.status = VerdictStatus::kInconclusive;
  verdict.code = ReasonCode::kLinkStateUnknown;
  const auto& link = device.function.link;
  verdict.reason = verdict.subject + " is a GPU whose link registers are not in the evidence" +
                   (link ? " (" + link->negotiated().error().message + ")"
                         : std::string(" (no LnkCap/LnkSta or sysfs link files were read)")) +
                   ", so its link was not judged";
  verdict.remediation =
      "Capture the GPU's whole block, as root so that the capabilities are shown: `sudo lspci -vv -s " +
      verdict.subject + "` (LnkCap and LnkSta lines), or `nvidia-smi -q` during a GPU workload.";
  return verdict;
}

Verdict unplaced_verdict(const DeviceRecord& device, const Evidence& evidence, const ExpectationOptions& options) {
  const LinkExpectation expectation = expect_unplaced_link(device, evidence, options).value();
  const bool is_gpu = device.function.kind == DeviceKind::kGpu;
  const bool loaded = best_state_under_load(evidence.link_samples, device.function.bdf).has_value() ||
                      (device.nvml && device.nvml->under_load);
  Verdict verdict;
  verdict.subject = to_string(device.function.bdf);
  const Finding finding =
      judge_state(verdict.subject + "'s own link", expectation, is_gpu && !loaded && !evidence.gpus_under_load);
  verdict.reason = finding.text + (loaded ? " (read under load)" : "");
  Link own;
  own.downstream = device.function.bdf;
  switch (finding.kind) {
    case FindingKind::kOk:
      verdict.status = VerdictStatus::kPass;
      verdict.code = finding.code;
      verdict.reason += expectation.basis == ExpectationBasis::kGuestNoPort
                            ? ""
                            : "; the ports above it are not in the evidence and were not judged";
      return verdict;
    case FindingKind::kDowngraded:
      verdict.status = VerdictStatus::kLinkDowngraded;
      verdict.code = finding.code;
      verdict.remediation = remediation_for(finding.code, &own) +
                            " To see which port above it trained low, capture `sudo lspci -vv` of the whole machine.";
      return verdict;
    case FindingKind::kUnknown:
    case FindingKind::kIdle:
    case FindingKind::kAboveCapability:
      break;
  }
  verdict.status = VerdictStatus::kInconclusive;
  verdict.code = finding.code;
  verdict.remediation = finding.code == ReasonCode::kLinkPathUnknown
                            ? "Capture the port above it too: `sudo lspci -vv` of the whole machine, or `lspci -vv -s` "
                              "of the parent that `readlink /sys/bus/pci/devices/" +
                                  verdict.subject +
                                  "` names; its LnkCap says whether the slot allows more, its LnkSta whether the link "
                                  "trained low."
                            : remediation_for(finding.code, &own);
  return verdict;
}

// A GPU's own link judged from the best state its end reached under load,
// and its port's where the port was sampled under load too: the idle
// reading's state (and any disagreement of the idle readings) is replaced;
// ends that disagree under load prove what state_despite_disagreement says,
// nothing more.
void judge_under_load(const Link& link, const LinkState& device_loaded, const Evidence& evidence,
                      LinkExpectation& expectation) {
  if (expectation.basis == ExpectationBasis::kBothEnds) expectation.note.clear();
  expectation.negotiated = device_loaded;
  if (expectation.basis == ExpectationBasis::kVirtualPort) return;  // the port's own state describes nothing
  const auto port_state = state_under_load(evidence.link_samples, link.upstream, evidence.load_per_gpu);
  const std::optional<LinkState> port_loaded = port_state ? std::optional<LinkState>(port_state->state) : std::nullopt;
  if (!port_loaded || *port_loaded == device_loaded) return;
  const std::string ends = to_string(link.downstream) + " reached " + to_string(device_loaded) + ", " +
                           to_string(link.upstream) + " reached " + to_string(*port_loaded) + " under load";
  const auto settled = expectation.expected
                           ? state_despite_disagreement(device_loaded, *port_loaded, expectation.expected.value())
                           : std::nullopt;
  if (!settled) {
    expectation.negotiated = make_error("the two ends disagree: " + ends);
    return;
  }
  expectation.negotiated = *settled;
  expectation.note = disagreement_note(ends);
}

// The sentence a verdict carries when the device's link is its function 0's.
std::string shared_link_note(const DeviceRecord& device) {
  if (device.path.empty() || device.path.front().downstream == device.function.bdf) return "";
  const std::string owner = to_string(device.path.front().downstream);
  std::string note = "; " + to_string(device.function.bdf) + " shares the physical link of its function 0 (" + owner +
                     ") and is judged by that link";
  if (device.function.link && device.function.link->capable()) {
    note += ", not by its own LnkCap (" + to_string(device.function.link->capable().value()) + ")";
  }
  return note;
}

Verdict verdict_for(const DeviceRecord& device, const Evidence& evidence, const ExpectationOptions& options) {
  if (has_unplaced_link(device)) return unplaced_verdict(device, evidence, options);
  if (is_unread_gpu(device)) return unread_gpu_verdict(device);
  const bool gpus_under_load = evidence.gpus_under_load;
  const bool is_gpu = device.function.kind == DeviceKind::kGpu;
  std::vector<Finding> findings;
  findings.reserve(device.path.size());
  // A GPU's own link is judged from the state it reached under load when the
  // engine sampled it: that is the reading an idle downshift cannot spoil.
  std::optional<LinkState> loaded_state;
  std::string retrained;  // how a link that fell under load fell, for its finding
  if (is_gpu) {
    if (const auto state =
            state_under_load(evidence.link_samples, device.path.front().downstream, evidence.load_per_gpu)) {
      loaded_state = state->state;
      if (state->reached) {
        retrained = "; it reached " + to_string(*state->reached) + " under load, then read " + to_string(state->state) +
                    " from t=" + fixed_text(state->since_s, 1) + " s on, through " + fixed_text(state->held_s, 1) +
                    " s of copies: it retrained while loaded";
      }
    }
  }
  std::string not_judged;
  for (const Link& link : device.path) {
    LinkExpectation expectation = expect_link(link, evidence, options);
    const bool own_link = &link == &device.path.front();
    // A reading that is missing or broken stays unknown, whatever was
    // sampled later: the samples replace an idle state, not a broken one.
    const bool readable = expectation.negotiated.ok() || link.disagreement().has_value();
    if (loaded_state && own_link && readable) {
      judge_under_load(link, *loaded_state, evidence, expectation);
      findings.push_back(judge_link(link, expectation, is_gpu, true));
      findings.back().text += " (read under load)" + retrained;
    } else {
      findings.push_back(judge_link(link, expectation, is_gpu, gpus_under_load));
    }
    if (expectation.basis == ExpectationBasis::kVirtualPort) {
      // Everything above the first emulated port is emulated too.
      if (&link != &device.path.back()) {
        not_judged = "; the links above " + to_string(link.upstream) + " join emulated ports and were not judged";
      }
      break;
    }
  }

  Verdict verdict;
  verdict.subject = to_string(device.function.bdf);
  const auto of_kind = [&](FindingKind kind) {
    std::vector<const Finding*> out;
    for (const Finding& f : findings) {
      if (f.kind == kind) out.push_back(&f);
    }
    return out;
  };
  const auto join = [](const std::vector<const Finding*>& list) {
    std::string text;
    for (const Finding* f : list) text += (text.empty() ? "" : "; ") + f->text;
    return text;
  };

  if (auto downgraded = of_kind(FindingKind::kDowngraded); !downgraded.empty()) {
    // The hop at fault is the narrowest one; on a tie, the one nearest the root
    // (the kernel's convention in pcie_bandwidth_available()).
    const Finding* worst = downgraded.front();
    for (const Finding* f : downgraded) {
      if (f->negotiated_raw_gbps <= worst->negotiated_raw_gbps) worst = f;
    }
    verdict.status = VerdictStatus::kLinkDowngraded;
    verdict.code = worst->code;
    verdict.link = LinkRef{worst->link->downstream, worst->link->upstream};
    verdict.reason = join(downgraded) + shared_link_note(device);
    verdict.remediation = remediation_for(worst->code, worst->link);
    if (ends_at_virtual_port(*worst->link, evidence)) {
      // The port named above is emulated: nothing to read or retrain on it.
      verdict.remediation =
          "The port above is emulated by the hypervisor, so the physical slot is not visible from this guest: on "
          "your own hypervisor, run `pcieval check` on the host to read the GPU's physical link and reseat or "
          "retrain it there; on a cloud instance, report " +
          to_string(worst->link->downstream) + " and this reason to the provider and move to another host.";
    }
    return verdict;
  }
  std::vector<const Finding*> doubtful = of_kind(FindingKind::kUnknown);
  for (FindingKind kind : {FindingKind::kAboveCapability, FindingKind::kIdle}) {
    auto more = of_kind(kind);
    doubtful.insert(doubtful.end(), more.begin(), more.end());
  }
  if (!doubtful.empty()) {
    const Finding* first = doubtful.front();
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = first->code;
    verdict.link = LinkRef{first->link->downstream, first->link->upstream};
    verdict.reason = join(doubtful) + shared_link_note(device);
    verdict.remediation = remediation_for(first->code, first->link);
    return verdict;
  }
  verdict.status = VerdictStatus::kPass;
  verdict.code = ReasonCode::kLinkAtExpectedState;
  std::string hops;
  for (const Finding& f : findings) hops += (hops.empty() ? "" : "; ") + f.text;
  verdict.reason =
      "every link up to the root port runs at its expected state: " + hops + not_judged + shared_link_note(device);
  return verdict;
}

}  // namespace

std::optional<StateUnderLoad> state_under_load(const std::vector<LinkSample>& samples, const PciAddress& port,
                                               bool load_per_gpu) {
  const auto best = best_state_under_load(samples, port);
  if (!best) return std::nullopt;
  StateUnderLoad out{*best, std::nullopt, 0, 0};
  if (!load_per_gpu) return out;
  // The port's readings in time order (samples are kept where something
  // changed, so a stretch ends where the next reading of the port begins).
  std::vector<const LinkSample*> readings;
  for (const LinkSample& sample : samples) {
    if (sample.port == port) readings.push_back(&sample);
  }
  std::stable_sort(readings.begin(), readings.end(),
                   [](const LinkSample* a, const LinkSample* b) { return a->t_s < b->t_s; });
  // Where the link ended up: its last state read under load, when that is
  // below its best and held long enough in all through the end (a ramp from
  // idle at the start of the last probe is one short reading, and then the
  // last state is the best again).
  const auto readable = [](const LinkSample& sample) { return sample.under_load && sample.speed && sample.width; };
  const auto state_of = [](const LinkSample& sample) { return LinkState{*sample.speed, *sample.width}; };
  std::size_t last = readings.size();
  for (std::size_t i = readings.size(); i-- > 0;) {
    if (readable(*readings[i])) {
      last = i;
      break;
    }
  }
  if (last == readings.size()) return out;
  const LinkState final_state = state_of(*readings[last]);
  if (final_state.gen >= best->gen && final_state.width >= best->width) return out;
  double held_s = 0;
  double since_s = readings[last]->t_s;
  std::size_t before = readings.size();  // the last loaded reading of another state
  for (std::size_t i = last + 1; i-- > 0;) {
    if (!readable(*readings[i])) continue;
    if (state_of(*readings[i]) != final_state) {
      before = i;
      break;
    }
    // A reading stands until the port's next one (samples are kept where
    // something changed).
    held_s += (i + 1 < readings.size() ? readings[i + 1]->t_s : readings[i]->t_s) - readings[i]->t_s;
    since_s = readings[i]->t_s;
  }
  if (held_s < kSustainedUnderLoadS) return out;
  StateUnderLoad fell{final_state, std::nullopt, since_s, held_s};
  // The best state it was read at before: a real reading, higher than where
  // it ended up.
  for (std::size_t i = 0; before != readings.size() && i <= before; ++i) {
    if (!readable(*readings[i])) continue;
    const LinkState state = state_of(*readings[i]);
    const bool higher =
        state.gen > final_state.gen || (state.gen == final_state.gen && state.width > final_state.width);
    if (!higher) continue;
    if (!fell.reached || state.gen > fell.reached->gen ||
        (state.gen == fell.reached->gen && state.width > fell.reached->width)) {
      fell.reached = state;
    }
  }
  return fell;
}

std::optional<LinkState> best_state_under_load(const std::vector<LinkSample>& samples, const PciAddress& port) {
  std::optional<LinkState> best;
  for (const LinkSample& sample : samples) {
    if (!sample.under_load || sample.port != port || !sample.speed || !sample.width) continue;
    if (!best) {
      best = LinkState{*sample.speed, *sample.width};
    } else {
      best->gen = std::max(best->gen, *sample.speed);
      best->width = std::max(best->width, *sample.width);
    }
  }
  return best;
}

bool is_judged(const DeviceRecord& device, const Evidence& evidence) {
  const PciFunction& function = device.function;
  if (function.is_virtual_function) return false;
  if (device.path.empty() && !has_unplaced_link(device) && !is_unread_gpu(device)) return false;
  return function.bdf.function == 0 || !has_function_zero_sibling(function.bdf, evidence);
}

std::vector<Verdict> judge_links(const Evidence& evidence, const LinkRuleOptions& options) {
  std::vector<Verdict> verdicts;
  for (const DeviceRecord& device : evidence.devices) {
    if (is_judged(device, evidence)) verdicts.push_back(verdict_for(device, evidence, options.expectation));
  }
  if (options.expected_gpus) {
    std::vector<std::string> found;
    for (const DeviceRecord& device : evidence.devices) {
      if (device.function.kind == DeviceKind::kGpu && !device.function.is_virtual_function) {
        found.push_back(to_string(device.function.bdf));
      }
    }
    const int expected = *options.expected_gpus;
    if (static_cast<int>(found.size()) < expected) {
      Verdict missing;
      missing.subject = "node";
      missing.status = VerdictStatus::kMissing;
      missing.code = ReasonCode::kGpusMissing;
      missing.reason = "found " + std::to_string(found.size()) + " GPUs, expected " + std::to_string(expected);
      if (!found.empty()) {
        std::string list;
        for (const auto& bdf : found) list += (list.empty() ? "" : ", ") + bdf;
        missing.reason += " (" + list + ")";
      }
      missing.remediation = remediation_for(ReasonCode::kGpusMissing, nullptr);
      verdicts.push_back(std::move(missing));
    }
  }
  return verdicts;
}

namespace {

// "A->B" and "B->A" name one pair of GPUs; any other subject as it is.
std::string unordered_pair(const std::string& subject) {
  const auto arrow = subject.find("->");
  if (arrow == std::string::npos) return subject;
  std::string first = subject.substr(0, arrow);
  std::string second = subject.substr(arrow + 2);
  return first < second ? first + "->" + second : second + "->" + first;
}

}  // namespace

std::string summarize(const std::vector<Verdict>& verdicts, const Evidence& evidence) {
  // A simulated node's line says so where a drain reason or a log shows it:
  // its numbers are a model's, never this host's.
  const std::string simulated = evidence.host.simulated ? " (simulated node)" : "";
  if (verdicts.empty()) {
    return "pcieval inconclusive" + simulated + ": nothing was judged (" + std::to_string(evidence.devices.size()) +
           " devices, none with a link or a measurement to judge)";
  }
  const Overall overall = overall_of(verdicts);
  const auto pick = [&]() -> const Verdict* {
    for (const Verdict& v : verdicts) {
      if (overall == Overall::kFail ? is_failing(v.status) : v.status == VerdictStatus::kInconclusive) return &v;
    }
    return nullptr;
  };
  std::string line = "pcieval " + std::string(to_string(overall)) + simulated + ": ";
  if (overall == Overall::kPass) {
    // Say what was judged, each subject once per kind of judgement.
    std::set<std::string> full_path;
    std::set<std::string> own_link;
    std::set<std::string> bandwidth;
    std::set<std::string> error_rate;
    std::set<std::string> settings;
    std::set<std::string> peers;
    std::set<std::string> other;
    for (const Verdict& v : verdicts) {
      switch (v.code) {
        case ReasonCode::kCorrectableErrorsWithinSpecRate:
          error_rate.insert(v.subject);
          break;
        case ReasonCode::kLinkAtExpectedState:
          full_path.insert(v.subject);
          break;
        case ReasonCode::kLinkAtOwnCapability:
          own_link.insert(v.subject);
          break;
        case ReasonCode::kBandwidthAtBudget:
        case ReasonCode::kBandwidthInWarningBand:
          // A peer pair's warning band ("A->B") is a peer copy, not a GPU's.
          (v.subject.find("->") != std::string::npos ? peers : bandwidth).insert(unordered_pair(v.subject));
          break;
        case ReasonCode::kPathSettingsAsExpected:
          settings.insert(v.subject);
          break;
        case ReasonCode::kPeerBandwidthAtBudget:
          peers.insert(unordered_pair(v.subject));
          break;
        default:
          other.insert(v.subject + " " + std::string(to_string(v.code)));
      }
    }
    std::vector<std::string> parts;
    const auto count = [](std::size_t n, const char* one, const char* many) {
      return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    if (!full_path.empty()) {
      parts.push_back(count(full_path.size(), "device", "devices") + " at expected link state");
    }
    if (!own_link.empty()) {
      parts.push_back(count(own_link.size(), "device", "devices") +
                      " at their own link capability (ports above not in the evidence)");
    }
    if (!bandwidth.empty()) {
      // Subjects are GPUs, switch ports whose GPUs copied together, and the
      // GPUs of an all-reduce ("8 GPUs"): each counted as what it is.
      std::size_t gpus = 0;
      std::size_t ports = 0;
      for (const std::string& subject : bandwidth) {
        if (parse_pci_address(subject).ok()) {
          ++gpus;
        } else if (subject.starts_with("port ")) {
          ++ports;
        }
      }
      const std::size_t groups = bandwidth.size() - gpus - ports;
      std::string what;
      if (gpus > 0) what = count(gpus, "GPU", "GPUs");
      if (ports > 0) what += (what.empty() ? "" : ", ") + count(ports, "shared port", "shared ports");
      if (groups > 0) what += (what.empty() ? "" : ", ") + count(groups, "GPU group", "GPU groups");
      parts.push_back("copy bandwidth of " + what + " within budget");
    }
    if (!error_rate.empty()) {
      parts.push_back("correctable error rate of " + count(error_rate.size(), "device", "devices") +
                      " within the spec");
    }
    if (!settings.empty()) {
      parts.push_back("path settings of " + count(settings.size(), "GPU", "GPUs") + " as expected");
    }
    if (!peers.empty()) {
      parts.push_back("peer copies of " + count(peers.size(), "GPU pair", "GPU pairs") + " within budget");
    }
    if (!other.empty()) parts.push_back(count(other.size(), "other check", "other checks") + " passed");
    for (std::size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? "" : ", ") + parts[i];
    // A kernel log alone passes on its errors' rate: say what it did not hold.
    if (!error_rate.empty() && full_path.empty() && own_link.empty() && bandwidth.empty()) {
      line += "; no link state or bandwidth in the evidence (capture `sudo lspci -vv` and `nvidia-smi -q`)";
    }
    return line;
  }
  const Verdict* first = pick();
  const auto same_outcome = std::count_if(verdicts.begin(), verdicts.end(), [&](const Verdict& v) {
    return overall == Overall::kFail ? is_failing(v.status) : v.status == VerdictStatus::kInconclusive;
  });
  line += first->subject + " " + std::string(to_string(first->status)) + " (" + std::string(to_string(first->code));
  if (first->link) line += " at " + to_string(first->link->downstream) + "<->" + to_string(first->link->upstream);
  line += ")";
  if (same_outcome > 1) line += " +" + std::to_string(same_outcome - 1) + " more";
  return line;
}

}  // namespace pcieval
