// Judges the settings on each GPU's path that cost bandwidth or reroute peer
// traffic on links that trained at full Gen and width (issue 28): ACS
// redirect on the switch ports between GPUs, payload sizes as programmed,
// ASPM, and IOMMU translation. The evidence is PortLinkReading::settings of
// both ends of every link, PciFunction::iommu and the kernel command line;
// a setting that was not read is never taken for "off".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/path.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// Verdicts, and what was read but not judged (for the node's notes).
struct RuleJudgement {
  std::vector<Verdict> verdicts;
  std::vector<std::string> notes;
};

// How peer traffic between two GPUs travels, from their paths.
enum class PeerRoute {
  // Both paths run through one switch upstream port: the switch can carry
  // the traffic between its downstream ports, unless ACS redirects it.
  kInsideSwitch,
  // The paths meet at or above a root port (different root ports, sockets):
  // the traffic crosses the root complex by design.
  kAcrossRootComplex,
  // A path is missing, or the paths end at one root port without a switch
  // in common (the evidence lacks a link between them).
  kUnknown,
};

struct PairRoute {
  PeerRoute route = PeerRoute::kUnknown;
  // kInsideSwitch: the lowest switch upstream port both paths run through,
  // and each GPU's links below it (the last of each ends at the switch's
  // downstream port on that GPU's side).
  std::optional<PciAddress> meeting_port;
  PciPath below_first;
  PciPath below_second;
};

// The route between `first` and `second`, from their paths.
[[nodiscard]] PairRoute route_between(const DeviceRecord& first, const DeviceRecord& second);

// A switch downstream port whose ACS control redirects peer requests or
// completions (ReqRedir+ or CmpltRedir+), on a route inside a switch.
struct RedirectingPort {
  PciAddress port;
  std::uint16_t control = 0;  // ACSCtl as read
  Link link;                  // the hop whose upstream end it is
};

// The meeting switch's downstream ports on `route` (inside a switch only)
// whose ACS redirects peer traffic: each GPU's own side first. Ports whose
// ACS was not read are not in the list (path_settings_missing says so).
[[nodiscard]] std::vector<RedirectingPort> redirecting_ports(const PairRoute& route);

// The GPUs whose path settings the rules judge: GPU functions (not virtual
// functions) with a path, in device order.
[[nodiscard]] std::vector<const DeviceRecord*> gpus_with_path(const Evidence& evidence);

// Whether peer routing was asked to be judged: a probe that ran or failed,
// or a measurement, with a "p2p_" key (check --p2p, --full, or a captured
// peer tool). A skipped peer probe (not asked for, a single GPU) is not.
[[nodiscard]] bool peer_routing_asked(const Evidence& evidence);

// What the path-settings rules judge by node-wide severity:
// fail -> misconfigured, inconclusive -> inconclusive, warn -> pass (the
// code says what was found, as bandwidth_in_warning_band does).
[[nodiscard]] VerdictStatus status_for(SettingSeverity severity);

// Per GPU with a path (gpus_with_path), in device order, at most one verdict
// per code:
// - acs_redirects_peer_traffic: a downstream port of a switch where this GPU
//   and another meet (both paths through its upstream port), on either
//   GPU's side, with ReqRedir+ or CmpltRedir+ in ACSCtl: their peer traffic
//   goes up through the root complex. ACS on root ports, bits other than the
//   two redirects, and pairs that meet only at or above a root port are no
//   fault. Names each port, its ACSCtl bits as lspci prints them and the
//   peers affected; `link` is the hop whose upstream end is the first port.
//   Severity path_settings.acs_redirect;
// - payload_below_supported: an end programmed (DevCtl MaxPayload) below the
//   smallest size every end of the path supports (DevCap MaxPayload).
//   Severity path_settings.payload_below_supported;
// - payload_above_port: a link's lower end programmed larger than the port
//   above it (TLPs the port must reject as malformed). Severity
//   path_settings.payload_above_port;
// - aspm_enabled: ASPM L0s or L1 enabled (LnkCtl) at either end of any link
//   of the path. Severity path_settings.aspm_enabled;
// - iommu_translated: the GPU's IOMMU group type is DMA or DMA-FQ, or, where
//   the type was not read, the kernel command line asks for translation
//   (iommu.passthrough=0, iommu=nopt). Severity path_settings.iommu_translated;
// - path_settings_as_expected (pass): every setting the rules above need was
//   read and none fired. MaxReadReq of 128 bytes is named in the reason of
//   the GPU's first verdict here, and judged no further;
// - path_settings_not_read (inconclusive): a setting the rules need was not
//   read (an unprivileged live read: "needs root") while peer routing was
//   asked to be judged (peer_routing_asked). Otherwise no verdict: one note
//   for the node says what was not read, and why.
[[nodiscard]] RuleJudgement judge_path_settings(const Evidence& evidence, const ThresholdProfile& profile);

}  // namespace pcieval
