#include "validate/link_rules.hpp"

#include <algorithm>
#include <set>

#include "model/pci_address.hpp"
#include "validate/budget.hpp"

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

Finding judge_link(const Link& link, bool device_is_gpu, bool gpus_under_load) {
  Finding finding;
  finding.link = &link;
  const auto expected = link.expected();
  const auto negotiated = link.negotiated();
  if (!expected || !negotiated) {
    finding.kind = FindingKind::kUnknown;
    finding.code = ReasonCode::kLinkStateUnknown;
    finding.text = "link " + describe(link) +
                   " cannot be judged: " + (!expected ? expected.error().message : negotiated.error().message);
    return finding;
  }
  const LinkState& want = expected.value();
  const LinkState& got = negotiated.value();
  const std::string states = "runs " + to_string(got) + ", expected " + to_string(want);
  if (got.gen > want.gen || got.width > want.width) {
    finding.kind = FindingKind::kAboveCapability;
    finding.code = ReasonCode::kLinkAboveCapability;
    finding.text =
        "link " + describe(link) + " " + states + ": above what both ends can do, so the readings are unreliable";
    return finding;
  }
  const bool slow = got.gen < want.gen;
  const bool narrow = got.width < want.width;
  if (!slow && !narrow) {
    finding.text = "link " + describe(link) + " at " + to_string(got);
    return finding;
  }
  finding.negotiated_raw_gbps = raw_gbps(got);
  const bool idle_gpu_link = device_is_gpu && link.position == LinkPosition::kDeviceLink && !gpus_under_load;
  if (slow && !narrow && idle_gpu_link) {
    finding.kind = FindingKind::kIdle;
    finding.code = ReasonCode::kGpuLinkSpeedIdle;
    finding.text = "link " + describe(link) + " " + states +
                   " with no load applied; idle GPUs lower their link speed; run the load probes";
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
  finding.text = "link " + describe(link) + " " + states;
  if (slow && narrow && idle_gpu_link) {
    finding.text += " (the width loss is a fault; the speed may be idle power saving)";
  }
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

// A device that reports a working link of its own but no port above it: its
// path is not in the evidence (a capture of one device, a tree cut short).
// Root-complex integrated endpoints on live hosts read "Unknown"/x0 and so
// never get here; they have no link to judge.
bool has_unplaced_link(const DeviceRecord& device) {
  return device.path.empty() && device.function.link && device.function.link->negotiated().ok();
}

Verdict unplaced_verdict(const DeviceRecord& device) {
  Verdict verdict;
  verdict.subject = to_string(device.function.bdf);
  verdict.status = VerdictStatus::kInconclusive;
  verdict.code = ReasonCode::kLinkPathUnknown;
  const auto& link = *device.function.link;
  const auto capable = link.capable();
  verdict.reason = verdict.subject + " reports a link at " + to_string(link.negotiated().value()) +
                   (capable ? " (capable " + to_string(capable.value()) + ")" : std::string()) +
                   ", but the port above it is not in the evidence, so what the link should run at is unknown";
  Link own;
  own.downstream = device.function.bdf;
  verdict.remediation = remediation_for(ReasonCode::kLinkPathUnknown, &own);
  return verdict;
}

Verdict verdict_for(const DeviceRecord& device, bool gpus_under_load, const std::vector<LinkSample>& samples) {
  if (has_unplaced_link(device)) return unplaced_verdict(device);
  const bool is_gpu = device.function.kind == DeviceKind::kGpu;
  std::vector<Finding> findings;
  findings.reserve(device.path.size());
  // A GPU's own link is judged from the state it reached under load when the
  // engine sampled it: that is the reading an idle downshift cannot spoil.
  std::optional<Link> loaded_link;
  if (is_gpu && !device.path.empty()) {
    if (auto state = best_state_under_load(samples, device.path.front().downstream)) {
      loaded_link = device.path.front();
      loaded_link->downstream_end.current_speed = state->gen;
      loaded_link->downstream_end.current_width = state->width;
    }
  }
  for (const Link& link : device.path) {
    if (loaded_link && &link == &device.path.front()) {
      findings.push_back(judge_link(*loaded_link, is_gpu, true));
      findings.back().link = &link;
      findings.back().text += " (read under load)";
    } else {
      findings.push_back(judge_link(link, is_gpu, gpus_under_load));
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
    verdict.reason = join(downgraded);
    verdict.remediation = remediation_for(worst->code, worst->link);
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
    verdict.reason = join(doubtful);
    verdict.remediation = remediation_for(first->code, first->link);
    return verdict;
  }
  verdict.status = VerdictStatus::kPass;
  verdict.code = ReasonCode::kLinkAtExpectedState;
  std::string hops;
  for (const Finding& f : findings) hops += (hops.empty() ? "" : "; ") + f.text;
  verdict.reason = "every link up to the root port runs at its expected state: " + hops;
  return verdict;
}

}  // namespace

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
  if ((device.path.empty() && !has_unplaced_link(device)) || function.is_virtual_function) return false;
  return function.bdf.function == 0 || !has_function_zero_sibling(function.bdf, evidence);
}

std::vector<Verdict> judge_links(const Evidence& evidence, const LinkRuleOptions& options) {
  std::vector<Verdict> verdicts;
  for (const DeviceRecord& device : evidence.devices) {
    if (is_judged(device, evidence))
      verdicts.push_back(verdict_for(device, evidence.gpus_under_load, evidence.link_samples));
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

std::string summarize(const std::vector<Verdict>& verdicts, const Evidence& evidence) {
  if (verdicts.empty()) {
    return "pcieval pass: no PCIe links to judge (" + std::to_string(evidence.devices.size()) +
           " devices, none behind a PCIe port with link attributes)";
  }
  const Overall overall = overall_of(verdicts);
  const auto pick = [&]() -> const Verdict* {
    for (const Verdict& v : verdicts) {
      if (overall == Overall::kFail ? is_failing(v.status) : v.status == VerdictStatus::kInconclusive) return &v;
    }
    return nullptr;
  };
  std::string line = "pcieval " + std::string(to_string(overall)) + ": ";
  if (overall == Overall::kPass) {
    // A device can hold several verdicts (its links, its bandwidth): count it once.
    std::set<std::string> subjects;
    for (const Verdict& v : verdicts) subjects.insert(v.subject);
    return line + std::to_string(subjects.size()) + " devices at expected link state";
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
