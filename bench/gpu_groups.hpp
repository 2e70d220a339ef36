// Which GPUs share an uplink: a pure function of the evidence, so the group
// probe can be planned (and tested) without a GPU.
#pragma once

#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/pci_address.hpp"

namespace pcieval {

// The NVIDIA GPUs of the evidence (DeviceKind::kGpu, function 0: the other
// functions of a GPU are its audio or USB controllers, no copy target), in
// the evidence's order (by address).
[[nodiscard]] std::vector<const DeviceRecord*> gpus_of(const Evidence& evidence);

// GPUs whose traffic to the host crosses one shared link.
struct GpuGroup {
  // The port whose link upward every GPU of the group uses: a switch upstream
  // port, or a root port when the GPUs hang directly below one.
  PciAddress port;
  std::string subject;           // "port 0000:15:01.0", the measurement's subject
  std::vector<PciAddress> gpus;  // ascending
};

// Groups every GPU of gpus_of(evidence) by the port whose uplink it shares:
// the downstream end of the nearest LinkPosition::kUplink of its path (the
// upstream port of the switch the GPU sits behind: with nested switches, the
// innermost), else the upstream end of the path's last link (its root port).
// GPUs with an empty path (no link could be read) belong to no group. Groups
// of one GPU are kept (a caller that wants shared links keeps size() >= 2);
// ordered by port.
[[nodiscard]] std::vector<GpuGroup> group_gpus_by_uplink(const Evidence& evidence);

// The groups of group_gpus_by_uplink with two or more GPUs: the links that
// more than one GPU loads at once.
[[nodiscard]] std::vector<GpuGroup> shared_uplink_groups(const Evidence& evidence);

}  // namespace pcieval
