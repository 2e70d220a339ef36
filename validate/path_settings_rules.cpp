#include "validate/path_settings_rules.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

#include "model/text.hpp"
#include "validate/budget.hpp"

namespace pcieval {
namespace {

// One end of a link of a path, with what it is, for reasons.
struct End {
  const PortLinkReading* reading = nullptr;
  PciAddress bdf;
  const Link* link = nullptr;
  bool upper = false;  // the link's upstream end (a root port or a switch downstream port)
};

// Every end of `path` that has link registers, lowest first: each link's
// lower end, then its upper end.
std::vector<End> ends_of(const PciPath& path) {
  std::vector<End> ends;
  for (const Link& link : path) {
    if (!link.downstream_end.has_no_link()) ends.push_back({&link.downstream_end, link.downstream, &link, false});
    if (!link.upstream_end.has_no_link()) ends.push_back({&link.upstream_end, link.upstream, &link, true});
  }
  return ends;
}

const PortSettings* settings_of(const End& end) {
  return end.reading->settings ? &end.reading->settings.value() : nullptr;
}

// Why the payload and ASPM rules cannot judge `end`, or nullopt when they can.
std::optional<std::string> unread(const End& end) {
  if (!end.reading->settings) return to_string(end.bdf) + " " + end.reading->settings.error().message;
  const PortSettings& settings = end.reading->settings.value();
  if (!settings.max_payload_bytes || !settings.max_payload_supported_bytes) {
    return to_string(end.bdf) + ": its DevCap/DevCtl MaxPayload is not in the evidence";
  }
  if (!settings.aspm) return to_string(end.bdf) + ": its LnkCtl ASPM is not in the evidence";
  return std::nullopt;
}

// DevCtl bits 7:5 for a payload size, as setpci writes the word: 256 -> "0020".
std::string devctl_payload_value(int bytes) {
  int code = 0;
  for (int size = 128; size < bytes && code < 5; size *= 2) ++code;
  return hex_text(static_cast<std::uint32_t>(code << 5), 4);
}

std::string join(const std::vector<std::string>& items, const std::string& last = " and ") {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += i + 1 == items.size() ? last : ", ";
    text += items[i];
  }
  return text;
}

Verdict finding(const DeviceRecord& gpu, SettingSeverity severity, ReasonCode code) {
  Verdict verdict;
  verdict.subject = to_string(gpu.function.bdf);
  verdict.status = status_for(severity);
  verdict.code = code;
  return verdict;
}

std::string severity_note(SettingSeverity severity) {
  switch (severity) {
    case SettingSeverity::kFail:
      return "";
    case SettingSeverity::kInconclusive:
      return " (inconclusive by this profile's path_settings)";
    case SettingSeverity::kWarn:
      return " (a warning by this profile's path_settings)";
  }
  return "";
}

// The ACS verdict of one GPU: every redirecting port on its routes to the
// peers it meets inside a switch, and those peers.
struct AcsFinding {
  std::vector<RedirectingPort> ports;
  std::vector<std::vector<PciAddress>> peers;  // per port
  std::vector<PciAddress> below;               // per port: the GPU whose side the port is on
  std::vector<PciAddress> meeting_ports;
};

std::optional<Verdict> acs_verdict(const DeviceRecord& gpu, const AcsFinding& acs, SettingSeverity severity) {
  if (acs.ports.empty()) return std::nullopt;
  Verdict verdict = finding(gpu, severity, ReasonCode::kAcsRedirectsPeerTraffic);
  verdict.link = LinkRef{acs.ports.front().link.downstream, acs.ports.front().link.upstream};
  std::vector<std::string> ports;
  std::vector<std::string> port_names;
  std::vector<PciAddress> peers;
  for (std::size_t i = 0; i < acs.ports.size(); ++i) {
    const RedirectingPort& port = acs.ports[i];
    port_names.push_back(to_string(port.port));
    ports.push_back(to_string(port.port) + " (above " +
                    (acs.below[i] == gpu.function.bdf ? std::string("this GPU") : to_string(acs.below[i])) +
                    "; ACSCtl: " + acs_bits_text(port.control) + ")");
    for (const PciAddress& peer : acs.peers[i]) {
      if (std::find(peers.begin(), peers.end(), peer) == peers.end()) peers.push_back(peer);
    }
  }
  std::vector<std::string> peer_names;
  for (const PciAddress& peer : peers) peer_names.push_back(to_string(peer));
  std::vector<std::string> switches;
  for (const PciAddress& port : acs.meeting_ports) switches.push_back(to_string(port));
  verdict.reason = std::string("ACS redirect (ReqRedir or CmpltRedir) on switch downstream port") +
                   (ports.size() == 1 ? " " : "s ") + join(ports) + " sends the peer traffic between " +
                   verdict.subject + " and " + join(peer_names) +
                   " up through the root complex instead of across the switch (upstream port " + join(switches) +
                   "): peer copies and NCCL run at a fraction of their rate" + severity_note(severity);
  std::string setpci;
  for (const std::string& port : port_names) {
    setpci += (setpci.empty() ? "" : "; ") + std::string("`setpci -s ") + port + " ECAP_ACS+0x6.w=0000`";
  }
  std::string list;
  for (const std::string& port : port_names) list += (list.empty() ? "" : ";") + port;
  verdict.remediation =
      "Clear ACS control on each port named until the next boot: " + setpci +
      " (as root; `lspci -vvv -s PORT | grep ACSCtl` then shows ReqRedir- CmpltRedir-). For good: turn ACS off "
      "in the BIOS (PCIe ACS control), or boot with `pci=disable_acs_redir=" +
      list +
      "` (Linux 5.1+). Linux turns ACS redirect on where an IOMMU is enabled; a host that passes these GPUs to "
      "virtual machines needs it, and its profile should set path_settings.acs_redirect to \"warn\".";
  return verdict;
}

std::string payload_remediation(const std::vector<std::string>& setpci_lines) {
  std::string lines;
  for (const std::string& line : setpci_lines) lines += (lines.empty() ? "" : "; ") + ("`" + line + "`");
  return "Set Max Payload Size in the BIOS (Auto, or the largest the platform offers), or boot with "
         "`pci=pcie_bus_perf` (Linux then sets each device's MPS to the largest its parent allows, and MaxReadReq "
         "no larger). As a one-off test, with the GPU idle, as root, the port above first: " +
         lines + " (DevCtl bits 7:5, value:mask).";
}

// The write and read budgets' loss at `programmed` against `supported`.
std::string payload_cost(const PciPath& path, int programmed, int supported) {
  const LinkState state = path_expected_state(path).value_or(LinkState{PcieGen::kGen4, 16});
  BudgetOptions low;
  low.max_payload_bytes = programmed;
  BudgetOptions high;
  high.max_payload_bytes = supported;
  const auto at_low = link_budget(state, low);
  const auto at_high = link_budget(state, high);
  if (!at_low || !at_high) return "";
  return "; its budget is " + percent_text(1.0 - at_low->write_gbps / at_high->write_gbps) + " lower for writes and " +
         percent_text(1.0 - at_low->read_gbps / at_high->read_gbps) + " for reads than at " +
         std::to_string(supported) + " bytes";
}

std::vector<Verdict> payload_verdicts(const DeviceRecord& gpu, const std::vector<End>& ends,
                                      const PathSettingThresholds& severity) {
  std::vector<Verdict> verdicts;
  // What every end supports is known only when every end's DevCap was read:
  // an unread end (a GPU whose config read hung, a capture without its
  // block) may support less than the ports around it.
  std::optional<int> supported;
  for (const End& end : ends) {
    const PortSettings* settings = settings_of(end);
    if (settings == nullptr || !settings->max_payload_supported_bytes) {
      supported.reset();
      break;
    }
    supported = supported ? std::min(*supported, *settings->max_payload_supported_bytes)
                          : *settings->max_payload_supported_bytes;
  }
  // Below what every end supports: each end programmed below the smallest
  // DevCap of the path could carry larger TLPs.
  if (supported) {
    std::vector<std::string> low;
    std::vector<std::string> setpci;
    const Link* first = nullptr;
    std::optional<int> lowest;
    // The port above first, so that no device is ever above its port.
    for (auto end = ends.rbegin(); end != ends.rend(); ++end) {
      const PortSettings* settings = settings_of(*end);
      if (settings == nullptr || !settings->max_payload_bytes || *settings->max_payload_bytes >= *supported) continue;
      setpci.push_back("setpci -s " + to_string(end->bdf) + " CAP_EXP+0x8.w=" + devctl_payload_value(*supported) +
                       ":00e0");
    }
    for (const End& end : ends) {
      const PortSettings* settings = settings_of(end);
      if (settings == nullptr || !settings->max_payload_bytes || *settings->max_payload_bytes >= *supported) continue;
      low.push_back(to_string(end.bdf) + " (DevCtl: MaxPayload " + std::to_string(*settings->max_payload_bytes) +
                    " bytes)");
      if (first == nullptr) first = end.link;
      lowest = lowest ? std::min(*lowest, *settings->max_payload_bytes) : *settings->max_payload_bytes;
    }
    if (!low.empty()) {
      Verdict verdict = finding(gpu, severity.payload_below_supported, ReasonCode::kPayloadBelowSupported);
      verdict.link = LinkRef{first->downstream, first->upstream};
      verdict.reason = "max payload programmed below what every end of its path supports: " + join(low) + ", where " +
                       std::to_string(*supported) + " bytes is the smallest any end supports (DevCap: MaxPayload " +
                       std::to_string(*supported) + " bytes or more)" + payload_cost(gpu.path, *lowest, *supported) +
                       severity_note(severity.payload_below_supported);
      verdict.remediation = payload_remediation(setpci);
      verdicts.push_back(std::move(verdict));
    }
  }
  // A device programmed larger than the port above it.
  for (const Link& link : gpu.path) {
    if (!link.downstream_end.settings || !link.upstream_end.settings) continue;
    const auto device_bytes = link.downstream_end.settings.value().max_payload_bytes;
    const auto port_bytes = link.upstream_end.settings.value().max_payload_bytes;
    if (!device_bytes || !port_bytes || *device_bytes <= *port_bytes) continue;
    Verdict verdict = finding(gpu, severity.payload_above_port, ReasonCode::kPayloadAbovePort);
    verdict.link = LinkRef{link.downstream, link.upstream};
    verdict.reason = to_string(link.downstream) + " is programmed with max payload " + std::to_string(*device_bytes) +
                     " bytes (DevCtl: MaxPayload " + std::to_string(*device_bytes) +
                     " bytes), larger than the port above it, " + to_string(link.upstream) + " (DevCtl: MaxPayload " +
                     std::to_string(*port_bytes) +
                     " bytes): a TLP larger than the port's size is malformed to it (AER MalfTLP) and dropped" +
                     severity_note(severity.payload_above_port);
    verdict.remediation = payload_remediation(
        {"setpci -s " + to_string(link.downstream) + " CAP_EXP+0x8.w=" + devctl_payload_value(*port_bytes) + ":00e0"});
    verdicts.push_back(std::move(verdict));
    break;
  }
  return verdicts;
}

std::optional<Verdict> aspm_verdict(const DeviceRecord& gpu, const std::vector<End>& ends, SettingSeverity severity) {
  std::vector<std::string> enabled;
  std::vector<std::string> setpci;
  const Link* first = nullptr;
  for (const End& end : ends) {
    const PortSettings* settings = settings_of(end);
    if (settings == nullptr || !settings->aspm || *settings->aspm == AspmControl::kDisabled) continue;
    enabled.push_back(to_string(end.bdf) + " (LnkCtl: ASPM " + std::string(lspci_text(*settings->aspm)) + ")");
    setpci.push_back("`setpci -s " + to_string(end.bdf) + " CAP_EXP+0x10.w=0000:0003`");
    if (first == nullptr) first = end.link;
  }
  if (enabled.empty()) return std::nullopt;
  Verdict verdict = finding(gpu, severity, ReasonCode::kAspmEnabled);
  verdict.link = LinkRef{first->downstream, first->upstream};
  verdict.reason = "ASPM is enabled on its path at " + join(enabled) +
                   ": a link that idles into L0s or L1 must retrain to carry traffic again, the trigger for a link "
                   "that comes back at a lower speed or width" +
                   severity_note(severity);
  std::string lines;
  for (const std::string& line : setpci) lines += (lines.empty() ? "" : "; ") + line;
  verdict.remediation =
      "Disable ASPM for PCIe in the BIOS, or boot with `pcie_aspm.policy=performance` (Linux then keeps its links "
      "out of L0s and L1; `pcie_aspm=off` only stops Linux touching ASPM and leaves what the firmware enabled). "
      "Until the next boot, as root, the device end first: " +
      lines + " (LnkCtl bits 1:0, value:mask).";
  return verdict;
}

// The kernel command line's words.
std::vector<std::string> words_of(const std::optional<std::string>& command_line) {
  std::vector<std::string> words;
  if (!command_line) return words;
  std::istringstream in(*command_line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool has_word(const std::vector<std::string>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// The command line's explicit request for IOMMU translation, or "".
std::string translation_requested(const std::vector<std::string>& words) {
  if (has_word(words, "iommu=pt") || has_word(words, "iommu.passthrough=1")) return "";
  for (std::string_view word : {"iommu.passthrough=0", "iommu=nopt"}) {
    if (has_word(words, word)) return std::string(word);
  }
  return "";
}

std::optional<Verdict> iommu_verdict(const DeviceRecord& gpu, const std::string& requested, SettingSeverity severity) {
  Verdict verdict = finding(gpu, severity, ReasonCode::kIommuTranslated);
  const auto& iommu = gpu.function.iommu;
  if (iommu && iommu->type) {
    if (!iommu->translated()) return std::nullopt;
    const std::string group = iommu->group ? std::to_string(*iommu->group) : "N";
    verdict.reason = "its IOMMU group " + group + " is of type " + *iommu->type + " (/sys/kernel/iommu_groups/" +
                     group + "/type): every DMA of the GPU, peer copies included, goes through IOMMU translation";
  } else if (!requested.empty() && !(iommu && !iommu->group)) {
    verdict.reason = "the kernel command line asks for IOMMU translation (" + requested +
                     "); the GPU's IOMMU group type was not read";
  } else {
    return std::nullopt;
  }
  verdict.reason +=
      ": translated DMA can slow peer-to-peer copies or make them fail, and NCCL falls back to host memory" +
      severity_note(severity);
  verdict.remediation =
      "Boot with `iommu=pt` (keep `intel_iommu=on` on Intel hosts that need the IOMMU; AMD's is on by default): "
      "the GPUs' DMA then bypasses translation while devices passed to VMs keep theirs; "
      "`cat /sys/kernel/iommu_groups/*/type` shows identity afterwards.";
  return verdict;
}

std::string iommu_text(const DeviceRecord& gpu) {
  const auto& iommu = gpu.function.iommu;
  if (!iommu) return "IOMMU group not read";
  if (!iommu->group) return "no IOMMU group (IOMMU off)";
  return "IOMMU group " + std::to_string(*iommu->group) + " " + iommu->type.value_or("of a type not read");
}

// "; MaxReadReq 128 bytes at 0000:17:00.0 ..." where the GPU's own read
// requests are that small; reported, not judged (no sourced rule says what
// it costs a GPU's copies).
std::string read_request_text(const DeviceRecord& gpu) {
  const Link& own = gpu.path.front();
  if (!own.downstream_end.settings) return "";
  const auto bytes = own.downstream_end.settings.value().max_read_request_bytes;
  if (!bytes || *bytes > 128) return "";
  return "; the GPU's MaxReadReq is " + std::to_string(*bytes) + " bytes (DevCtl: MaxReadReq " +
         std::to_string(*bytes) + " bytes): each of its reads asks for at most that much (reported, not judged)";
}

}  // namespace

PairRoute route_between(const DeviceRecord& first, const DeviceRecord& second) {
  PairRoute out;
  if (first.path.empty() || second.path.empty()) return out;
  // path[i] for i > 0 starts at a switch upstream port (model/path.hpp): the
  // lowest one both paths run through is where they meet.
  for (std::size_t i = 1; i < first.path.size(); ++i) {
    for (std::size_t j = 1; j < second.path.size(); ++j) {
      if (first.path[i].downstream != second.path[j].downstream) continue;
      out.route = PeerRoute::kInsideSwitch;
      out.meeting_port = first.path[i].downstream;
      out.below_first = PciPath(first.path.begin(), first.path.begin() + static_cast<std::ptrdiff_t>(i));
      out.below_second = PciPath(second.path.begin(), second.path.begin() + static_cast<std::ptrdiff_t>(j));
      return out;
    }
  }
  // No switch in common: different root ports meet only in the root complex.
  if (first.path.back().upstream != second.path.back().upstream) out.route = PeerRoute::kAcrossRootComplex;
  return out;
}

std::vector<RedirectingPort> redirecting_ports(const PairRoute& route) {
  std::vector<RedirectingPort> ports;
  if (route.route != PeerRoute::kInsideSwitch) return ports;
  for (const PciPath* below : {&route.below_first, &route.below_second}) {
    if (below->empty()) continue;
    const Link& link = below->back();
    if (!link.upstream_end.settings) continue;
    const auto& acs = link.upstream_end.settings.value().acs;
    if (!acs || !acs.value() || !acs.value()->redirects_peer_traffic()) continue;
    ports.push_back(RedirectingPort{link.upstream, acs.value()->control, link});
  }
  return ports;
}

std::vector<const DeviceRecord*> gpus_with_path(const Evidence& evidence) {
  std::vector<const DeviceRecord*> gpus;
  for (const DeviceRecord& device : evidence.devices) {
    if (device.function.kind == DeviceKind::kGpu && !device.function.is_virtual_function && !device.path.empty()) {
      gpus.push_back(&device);
    }
  }
  return gpus;
}

bool peer_routing_asked(const Evidence& evidence) {
  const auto peer_key = [](const std::string& key) { return key.starts_with("p2p_"); };
  // A skipped peer probe (not asked for, or one GPU only) asked nothing.
  return std::any_of(evidence.probes.begin(), evidence.probes.end(),
                     [&](const ProbeRun& p) { return peer_key(p.key) && p.status != ProbeStatus::kSkipped; }) ||
         std::any_of(evidence.measurements.begin(), evidence.measurements.end(),
                     [&](const Measurement& m) { return peer_key(m.probe); });
}

VerdictStatus status_for(SettingSeverity severity) {
  switch (severity) {
    case SettingSeverity::kFail:
      return VerdictStatus::kMisconfigured;
    case SettingSeverity::kInconclusive:
      return VerdictStatus::kInconclusive;
    case SettingSeverity::kWarn:
      return VerdictStatus::kPass;
  }
  return VerdictStatus::kMisconfigured;
}

RuleJudgement judge_path_settings(const Evidence& evidence, const ThresholdProfile& profile) {
  RuleJudgement out;
  const PathSettingThresholds& severity = profile.defaults.path_settings;
  const std::vector<const DeviceRecord*> gpus = gpus_with_path(evidence);
  const bool asked = peer_routing_asked(evidence);
  const std::vector<std::string> words = words_of(evidence.host.kernel_command_line);
  const std::string requested = translation_requested(words);

  struct Pair {
    std::size_t first = 0;
    std::size_t second = 0;
    PairRoute route;
  };
  std::vector<Pair> pairs;
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    for (std::size_t b = a + 1; b < gpus.size(); ++b) pairs.push_back({a, b, route_between(*gpus[a], *gpus[b])});
  }

  std::size_t unread_gpus = 0;
  std::string first_unread;
  bool iommu_type_unread = false;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    const DeviceRecord& gpu = *gpus[g];
    const std::vector<End> ends = ends_of(gpu.path);
    std::optional<std::string> missing;
    if (ends.empty()) missing = to_string(gpu.function.bdf) + ": no end of its path has link registers";
    for (const End& end : ends) {
      if (!missing) missing = unread(end);
    }

    // ACS: the meeting switch's downstream ports on the routes to every peer
    // this GPU meets inside a switch, its own side first.
    AcsFinding acs;
    for (const Pair& pair : pairs) {
      if ((pair.first != g && pair.second != g) || pair.route.route != PeerRoute::kInsideSwitch) continue;
      const bool is_first = pair.first == g;
      const DeviceRecord& peer = *gpus[is_first ? pair.second : pair.first];
      const PciPath& own = is_first ? pair.route.below_first : pair.route.below_second;
      const PciPath& other = is_first ? pair.route.below_second : pair.route.below_first;
      for (const PciPath* side : {&own, &other}) {
        const Link& link = side->back();
        const Reading<PortSettings>& settings = link.upstream_end.settings;
        if (missing) continue;
        if (!settings) {
          missing = to_string(link.upstream) + " " + settings.error().message;
        } else if (!settings.value().acs) {
          missing = to_string(link.upstream) + ": its ACS capability was not read (" +
                    settings.value().acs.error().message + ")";
        }
      }
      PairRoute ordered = pair.route;
      if (!is_first) std::swap(ordered.below_first, ordered.below_second);
      for (const RedirectingPort& port : redirecting_ports(ordered)) {
        auto found = std::find_if(acs.ports.begin(), acs.ports.end(),
                                  [&](const RedirectingPort& p) { return p.port == port.port; });
        std::size_t index = static_cast<std::size_t>(found - acs.ports.begin());
        if (found == acs.ports.end()) {
          acs.ports.push_back(port);
          acs.peers.emplace_back();
          const bool on_own_side = !own.empty() && own.back().upstream == port.port;
          acs.below.push_back(on_own_side ? gpu.function.bdf : peer.function.bdf);
          index = acs.ports.size() - 1;
        }
        acs.peers[index].push_back(peer.function.bdf);
        if (std::find(acs.meeting_ports.begin(), acs.meeting_ports.end(), *pair.route.meeting_port) ==
            acs.meeting_ports.end()) {
          acs.meeting_ports.push_back(*pair.route.meeting_port);
        }
      }
    }

    std::vector<Verdict> found;
    if (auto verdict = acs_verdict(gpu, acs, severity.acs_redirect)) found.push_back(std::move(*verdict));
    for (Verdict& verdict : payload_verdicts(gpu, ends, severity)) found.push_back(std::move(verdict));
    if (auto verdict = aspm_verdict(gpu, ends, severity.aspm_enabled)) found.push_back(std::move(*verdict));
    if (auto verdict = iommu_verdict(gpu, requested, severity.iommu_translated)) found.push_back(std::move(*verdict));
    if (!gpu.function.iommu || !gpu.function.iommu->type) iommu_type_unread = true;

    if (found.empty() && !missing) {
      Verdict pass;
      pass.subject = to_string(gpu.function.bdf);
      pass.status = VerdictStatus::kPass;
      pass.code = ReasonCode::kPathSettingsAsExpected;
      std::vector<std::string> names;
      for (const End& end : ends) names.push_back(to_string(end.bdf));
      const int programmed = programmed_payload_bytes(gpu.path).value_or(0);
      pass.reason = "the settings of every end of its path (" + join(names, ", ") + ") were read: max payload " +
                    std::to_string(programmed) +
                    " bytes as programmed, no lower than any end supports; ASPM disabled; no ACS redirect on a "
                    "switch port between it and another GPU; " +
                    iommu_text(gpu);
      found.push_back(std::move(pass));
    }
    if (!found.empty()) found.front().reason += read_request_text(gpu);
    if (missing) {
      if (asked) {
        Verdict verdict;
        verdict.subject = to_string(gpu.function.bdf);
        verdict.status = VerdictStatus::kInconclusive;
        verdict.code = ReasonCode::kPathSettingsNotRead;
        verdict.reason =
            "peer routing was asked to be judged, but the settings on the GPU's path were not all read "
            "(" +
            *missing + "): ACS redirect, payload sizes and ASPM there are unknown, not off";
        verdict.remediation =
            "Run `sudo pcieval check --p2p`: config space beyond its first 64 bytes is readable by root only. For "
            "diagnose, capture `sudo lspci -vvv` (without sudo, lspci prints no capabilities).";
        found.push_back(std::move(verdict));
      } else {
        ++unread_gpus;
        if (first_unread.empty()) first_unread = *missing;
      }
    }
    for (Verdict& verdict : found) out.verdicts.push_back(std::move(verdict));
  }

  if (unread_gpus > 0) {
    out.notes.push_back("path settings not read on " + std::to_string(unread_gpus) +
                        (unread_gpus == 1 ? " GPU" : " GPUs") +
                        " (payload sizes, ASPM and ACS not judged there): " + first_unread);
  }
  const bool iommu_on = std::any_of(words.begin(), words.end(), [](const std::string& word) {
    return word == "intel_iommu=on" || word.starts_with("amd_iommu=force");
  });
  if (!gpus.empty() && iommu_type_unread && requested.empty() && iommu_on && !has_word(words, "iommu=pt") &&
      !has_word(words, "iommu.passthrough=1")) {
    out.notes.push_back(
        "the kernel command line enables the IOMMU without iommu=pt and the GPUs' IOMMU group types were not read: "
        "their DMA is translated unless the kernel was built to default to passthrough (not judged)");
  }
  return out;
}

}  // namespace pcieval
