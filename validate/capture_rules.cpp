#include "validate/capture_rules.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "validate/event_rate_rules.hpp"
#include "validate/link_rules.hpp"
#include "validate/stated_link_rules.hpp"

namespace pcieval {
namespace {

using Kind = CapturedEvent::Kind;

bool path_runs_through(const DeviceRecord& device, const PciAddress& port) {
  return std::any_of(device.path.begin(), device.path.end(),
                     [&](const Link& link) { return link.downstream == port || link.upstream == port; });
}

// The judged devices an event on `address` concerns: the device itself, or
// every device below that port. Empty when the evidence knows none.
std::vector<const DeviceRecord*> devices_at(const Evidence& evidence, const PciAddress& address) {
  std::vector<const DeviceRecord*> found;
  for (const DeviceRecord& device : evidence.devices) {
    if (!is_judged(device, evidence)) continue;
    if (device.function.bdf == address || path_runs_through(device, address)) found.push_back(&device);
  }
  return found;
}

std::string uncorrectable_remediation(const std::string& subject) {
  return "Uncorrectable PCIe errors mean the link lost data or went down: check `dmesg` around the lines cited, "
         "reseat " +
         subject +
         " (and its riser or cable), check its power cables, and update the BIOS and the device firmware; if errors "
         "recur on the same slot with another card, the slot or the board is at fault.";
}

std::string fell_off_remediation(const std::string& subject) {
  return "The GPU stopped answering on PCIe: collect `nvidia-bug-report.sh`, check the GPU's power cables "
         "and temperature, reseat " +
         subject + " and its riser; a GPU that falls off the bus again after that needs replacing.";
}

// Counts of one finding on one subject, with where it was read.
struct Tally {
  std::size_t count = 0;
  std::string first;
  std::string last;
};

void count(Tally& tally, const std::string& origin) {
  if (tally.count++ == 0) tally.first = origin;
  tally.last = origin;
}

std::string where(const Tally& tally) {
  return tally.count == 1 ? "(" + tally.first + ")" : "(" + tally.first + " .. " + tally.last + ")";
}

// The kernel walks from the device up to the root and names the last port
// whose LnkSta is the lowest (pcie_bandwidth_available, "<=": on a tie the
// port nearer the root). Both ends of a link read the same LnkSta, so the port
// named is usually the upper end of the limiting link (the root port or switch
// downstream port above it), or the device itself.
std::optional<Verdict> limited_verdict(const Evidence& evidence, const CapturedEvent& event,
                                       const DeviceRecord* device) {
  if (!event.limited_to || !event.capable) return std::nullopt;
  const LinkState& got = *event.limited_to;
  const LinkState& can = *event.capable;
  const bool slow = got.gen < can.gen;
  const bool narrow = got.width < can.width;
  if (!slow && !narrow) return std::nullopt;
  Verdict verdict;
  verdict.subject = to_string(device != nullptr ? device->function.bdf : event.device);
  const std::string port = event.limiting_port ? to_string(*event.limiting_port) : std::string("<unknown>");
  const Link* at = nullptr;
  if (device != nullptr && event.limiting_port) {
    for (const Link& link : device->path) {
      if (link.downstream == *event.limiting_port || link.upstream == *event.limiting_port) {
        at = &link;
        break;
      }
    }
  }
  if (at != nullptr) verdict.link = LinkRef{at->downstream, at->upstream};
  // Whether the limit is on the device's own link: from the path when the
  // evidence has one, else only when the kernel named the device itself.
  const bool has_path = device != nullptr && !device->path.empty();
  const bool own_link =
      has_path ? at == &device->path.front() : event.limiting_port && *event.limiting_port == event.device;
  const bool own_link_possible = own_link || !has_path;
  const bool maybe_gpu = device == nullptr || device->function.kind == DeviceKind::kGpu;
  verdict.reason = "the kernel logged " + to_string(event.device) + " limited by " + to_string(got) + " at " + port +
                   " (capable " + to_string(can) + ") when it enumerated the device";
  if (at != nullptr) verdict.reason += ": link " + to_string(at->downstream) + " <-> " + to_string(at->upstream);
  if (slow && !narrow && own_link_possible && maybe_gpu) {
    // A reading of the GPU's link under load (a busy nvidia-smi capture)
    // already says what the link trains to; the idle boot line adds nothing.
    if (device != nullptr && best_state_under_load(evidence.link_samples, device->function.bdf)) return std::nullopt;
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kGpuLinkSpeedIdle;
    verdict.reason += std::string("; ") +
                      (own_link ? std::string("that is the GPU's own link")
                                : "without the device's path (lspci -vv) the log does not say whether that is the "
                                  "device's own link") +
                      ", and a GPU lowers its own link speed while idle, as at boot (" + origin_of(event) + ")";
    verdict.remediation =
        "Read the link while the GPU is busy: `nvidia-smi -q` (GPU Link Info) during a GPU workload, with `sudo "
        "lspci -vv` of the whole machine, or `pcieval check` on the node; a link that stays low under load is a "
        "downgrade.";
    return verdict;
  }
  verdict.status = VerdictStatus::kLinkDowngraded;
  verdict.code = slow && narrow ? ReasonCode::kLinkSpeedAndWidthBelowExpected
                 : narrow       ? ReasonCode::kLinkWidthBelowExpected
                                : ReasonCode::kLinkSpeedBelowExpected;
  verdict.reason += " (" + origin_of(event) + ")";
  verdict.remediation = "The link at " + port +
                        " trained below what the device can do when the kernel enumerated it: retrain it or "
                        "reboot, then check `lspci -vv -s " +
                        port +
                        "` LnkSta; if it stays low, reseat the card and check risers, cables and the slot's "
                        "BIOS PCIe setting.";
  return verdict;
}

bool is_link_code(ReasonCode code) {
  switch (code) {
    case ReasonCode::kLinkAtExpectedState:
    case ReasonCode::kLinkSpeedBelowExpected:
    case ReasonCode::kLinkWidthBelowExpected:
    case ReasonCode::kLinkSpeedAndWidthBelowExpected:
    case ReasonCode::kGpuLinkSpeedIdle:
    case ReasonCode::kLinkStateUnknown:
    case ReasonCode::kLinkAboveCapability:
    case ReasonCode::kLinkPathUnknown:
    case ReasonCode::kLinkAtOwnCapability:
    // The settings of the GPU's path were read from the same lspci blocks.
    case ReasonCode::kAcsRedirectsPeerTraffic:
    case ReasonCode::kPayloadBelowSupported:
    case ReasonCode::kPayloadAbovePort:
    case ReasonCode::kAspmEnabled:
    case ReasonCode::kPathSettingsAsExpected:
      return true;
    default:
      return false;
  }
}

// " (lspci.txt:61, nvidia-smi.txt:42)": the captured lines of the link's
// lower end and of the subject, each once, in the order they were read.
std::string cited_lines(const Verdict& verdict, const Evidence& evidence) {
  std::vector<std::string> cited;
  const auto cite = [&](const PciAddress& address) {
    for (const CaptureLine& line : evidence.capture_lines) {
      if (!line.device || *line.device != address) continue;
      std::string origin = origin_of(line);
      if (std::find(cited.begin(), cited.end(), origin) == cited.end()) cited.push_back(std::move(origin));
    }
  };
  if (verdict.link) cite(verdict.link->downstream);
  if (auto subject = parse_pci_address(verdict.subject)) cite(subject.value());
  std::string text;
  for (const auto& origin : cited) text += (text.empty() ? "" : ", ") + origin;
  return text.empty() ? text : " (" + text + ")";
}

}  // namespace

std::vector<Verdict> judge_captured_events(const Evidence& evidence, const std::vector<CapturedEvent>& events) {
  std::vector<Verdict> verdicts;
  // subject -> tallies, so repeated lines make one verdict with a count.
  std::map<std::string, Tally> uncorrectable;
  std::map<std::string, Tally> fell_off;
  std::map<std::string, std::string> uncorrectable_kinds;
  std::set<std::string> with_xid;  // subjects whose fell-off events include an Xid 79 line
  for (const CapturedEvent& event : events) {
    const auto targets = devices_at(evidence, event.device);
    if (event.kind == Kind::kLinkLimited) {
      if (targets.empty()) {
        // A device the evidence names without a link (one the kernel log
        // enumerated) still says what it is: a GPU or not.
        if (auto verdict = limited_verdict(evidence, event, find_device(evidence, event.device))) {
          verdicts.push_back(std::move(*verdict));
        }
      }
      for (const DeviceRecord* device : targets) {
        if (auto verdict = limited_verdict(evidence, event, device)) verdicts.push_back(std::move(*verdict));
      }
      continue;
    }
    if (event.kind == Kind::kCorrectableError) continue;
    std::vector<std::string> subjects;
    for (const DeviceRecord* device : targets) subjects.push_back(to_string(device->function.bdf));
    if (subjects.empty()) subjects.push_back(to_string(event.device));
    for (const std::string& subject : subjects) {
      if (event.kind == Kind::kFellOffBus) {
        count(fell_off[subject], origin_of(event));
        // Newer drivers say it in words only, with no Xid.
        if (event.text.find("Xid (") != std::string::npos) with_xid.insert(subject);
        continue;
      }
      count(uncorrectable[subject], origin_of(event));
      const std::string what = event.kind == Kind::kFatalError     ? "fatal"
                               : event.kind == Kind::kSurpriseDown ? "Surprise Down"
                                                                   : "non-fatal";
      std::string& kinds = uncorrectable_kinds[subject];
      if (kinds.find(what) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + what;
    }
  }
  for (const auto& [subject, tally] : fell_off) {
    Verdict verdict;
    verdict.subject = subject;
    verdict.status = VerdictStatus::kLinkErrors;
    verdict.code = ReasonCode::kGpuFellOffBus;
    verdict.reason = "the NVIDIA driver logged that " + subject + " fell off the bus " +
                     (with_xid.contains(subject) ? "(Xid 79) " : "") + std::to_string(tally.count) +
                     (tally.count == 1 ? " time " : " times ") + where(tally);
    verdict.remediation = fell_off_remediation(subject);
    verdicts.push_back(std::move(verdict));
  }
  for (const auto& [subject, tally] : uncorrectable) {
    Verdict verdict;
    verdict.subject = subject;
    verdict.status = VerdictStatus::kLinkErrors;
    verdict.code = ReasonCode::kUncorrectableErrorsLogged;
    verdict.reason = "the kernel logged " + std::to_string(tally.count) + " uncorrectable PCIe error" +
                     (tally.count == 1 ? "" : "s") + " (" + uncorrectable_kinds.at(subject) + ") concerning " +
                     subject + " " + where(tally);
    verdict.remediation = uncorrectable_remediation(subject);
    verdicts.push_back(std::move(verdict));
  }
  std::stable_sort(verdicts.begin(), verdicts.end(),
                   [](const Verdict& a, const Verdict& b) { return a.subject < b.subject; });
  return verdicts;
}

}  // namespace pcieval

namespace pcieval {

std::vector<Verdict> judge_captured(const Evidence& evidence, const ThresholdProfile& profile) {
  std::vector<Verdict> verdicts;
  ToolJudgeOptions tools;
  if (evidence.stated_link) tools.stated_link = evidence.stated_link->link;
  for (const CaptureLine& line : evidence.capture_lines) {
    if (line.measurement) tools.origins.emplace(*line.measurement, origin_of(line));
  }
  for (Verdict& verdict : judge_tool_bandwidth(evidence, profile, tools).verdicts) {
    verdicts.push_back(std::move(verdict));
  }
  for (Verdict& verdict : judge_nccl_tests_bandwidth(evidence, profile, tools).verdicts) {
    verdicts.push_back(std::move(verdict));
  }
  for (Verdict& verdict : judge_captured_events(evidence, evidence.captured_events)) {
    verdicts.push_back(std::move(verdict));
  }
  for (Verdict& verdict : judge_captured_rates(evidence, profile).verdicts) verdicts.push_back(std::move(verdict));
  return verdicts;
}

void cite_capture_lines(std::vector<Verdict>& verdicts, const Evidence& evidence) {
  if (evidence.capture_lines.empty()) return;
  for (Verdict& verdict : verdicts) {
    if (is_link_code(verdict.code)) verdict.reason += cited_lines(verdict, evidence);
  }
}

}  // namespace pcieval
