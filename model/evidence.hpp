// The evidence record: everything observed on one node, before any judgement.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/captured_event.hpp"
#include "model/device.hpp"
#include "model/measurement.hpp"
#include "model/path.hpp"
#include "model/samples.hpp"
#include "model/soak.hpp"

namespace pcieval {

struct HostInfo {
  std::string hostname;
  std::string kernel;  // uname -r
  // Schema 1.5. The CPU's `hypervisor` flag (/proc/cpuinfo): the node is a
  // virtual machine, whose PCIe ports may be emulated or absent. nullopt
  // when it was not read (captured text, older documents).
  std::optional<bool> hypervisor;
  // Schema 1.6. The evidence came from `check --simulate`: every GPU, link
  // reading and measured number is the simulator's model of the scenario's
  // machine, never this host's. False in every other document.
  bool simulated = false;
  // Schema 1.7. /proc/cmdline: iommu=pt, intel_iommu=, amd_iommu=,
  // pci=disable_acs_redir=, pcie_aspm= decide how peer traffic is routed.
  // nullopt when not read.
  std::optional<std::string> kernel_command_line;
};

// What hwloc says about one device: its NUMA node, the CPUs near it and the
// bridges above it, from live discovery or an XML file.
struct Locality {
  std::optional<int> numa_node;              // OS index of the nearest NUMA node
  std::optional<std::string> cpulist;        // "0-31,64-95"
  std::vector<PciAddress> ancestor_bridges;  // nearest first
};

struct DeviceRecord {
  PciFunction function;
  PciPath path;
  std::optional<Locality> locality;  // nullopt when hwloc does not know the device
  // Disagreements and caveats found while reading this device (for example
  // hwloc and sysfs naming different bridges above it).
  std::vector<std::string> notes;
  // NVIDIA GPUs only, when NVML could be loaded and knew the device.
  std::optional<NvmlGpuLink> nvml;
};

// pcieval's copy-engine rate beside a plain reference copy benchmark's on
// the same GPU in the same run (bench/perf/reference, make gpu-check): pcieval's
// latch and verification must not cost bandwidth, so `ratio` should be at
// least kReferenceRatioFloor. Recorded evidence only: no verdict rests on it.
struct ReferenceCopy {
  std::string tool;  // "pcieval-copy-reference"
  PciAddress gpu;
  Direction direction = Direction::kHostToDevice;  // h2d or d2h
  std::uint64_t size_bytes = 0;                    // the reference's copy size
  double reference_median_gbps = 0;
  // The median of pcieval's h2d_ce or d2h_ce of that GPU in this run;
  // nullopt when pcieval did not measure it (then `ratio` is nullopt too).
  std::optional<double> pcieval_median_gbps;
  std::optional<double> ratio;  // pcieval_median_gbps / reference_median_gbps
};
inline constexpr double kReferenceRatioFloor = 0.97;

struct Evidence {
  HostInfo host;
  std::string sysfs_root;               // where the PCI tree was read
  std::optional<std::string> topology;  // "live hwloc", an XML path, or nullopt when hwloc failed
  // Whether a load was applied to the GPUs while their links were read. Idle
  // NVIDIA GPUs lower their link speed on purpose, so an idle reading of a
  // GPU's own link speed proves nothing.
  bool gpus_under_load = false;
  // Schema 1.6. Each link sample's under_load says a copy ran on a GPU below
  // that port (not merely on some GPU), so a GPU's readings under load are
  // its own: the validator may then take its last sustained state under
  // load (a retrain mid-run), not only the best one. False for documents
  // before 1.6, whose samples were marked by any copy of the node.
  bool load_per_gpu = false;
  // Endpoints (not bridges), ordered by address.
  std::vector<DeviceRecord> devices;
  std::vector<std::string> notes;

  // The measurement engine's part; empty when no probe ran (--no-probes,
  // fixtures, captured text).
  std::optional<ProbeSettings> probe_settings;
  std::vector<ProbeRun> probes;  // every registry entry: ran, skipped or failed
  std::vector<Measurement> measurements;
  std::vector<LinkSample> link_samples;  // in time order
  std::vector<CounterDelta> counters;

  // Schema 1.3. The signal that stopped the run before its end ("SIGTERM",
  // "SIGINT"); nullopt for a run that ended on its own.
  std::optional<std::string> interrupted;
  // Present for `check --rounds/--duration` only. `measurements` then holds
  // the first round's (what a plain check measures), `counters` the growth
  // over the whole soak.
  std::optional<SoakRecord> soak;

  // Schema 1.3. Captured text only (`diagnose`); empty for a live run. The
  // kernel log events that verdicts rest on, the link the user stated, and
  // the lines each device's readings and each tool number were read from.
  std::vector<CapturedEvent> captured_events;  // in the order read
  std::optional<StatedLink> stated_link;
  std::vector<CaptureLine> capture_lines;

  // Optional in the document (absent when empty, written within 1.4): the
  // reference copy benchmark's numbers beside pcieval's (check --reference).
  std::vector<ReferenceCopy> reference_copies;

  // Schema 1.7. Whether each GPU may reach each other GPU's memory directly
  // (NVML's P2P status, CUDA, nvidia-smi topo -p2p, p2pBandwidthLatencyTest),
  // one entry per ordered pair and capability read.
  std::vector<PeerStatus> peer_status;
};

// The record of the device at `address`, or nullptr when the evidence has none.
[[nodiscard]] inline const DeviceRecord* find_device(const Evidence& evidence, const PciAddress& address) {
  const auto found = std::find_if(evidence.devices.begin(), evidence.devices.end(),
                                  [&](const DeviceRecord& d) { return d.function.bdf == address; });
  return found == evidence.devices.end() ? nullptr : &*found;
}

}  // namespace pcieval
