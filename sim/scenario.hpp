// The scenario of a simulated GPU node (sim/README.md): which machine (a
// sysfs tree and an optional hwloc XML, as `check --sysfs-root` reads), how
// each GPU behaves (name, idle link, copy efficiencies) and which faults fire.
// Parsed by `pcieval check --simulate` (to refuse a bad file before anything
// runs, and to find the machine) and by the simulator libraries (to behave).
// Plain data and a parser: no I/O beyond reading the one file.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval::sim {

enum class FaultKind {
  kLink,               // {"after_load_s": S, "link": "gen3x16"}: retrains after S s of copies (0: at boot)
  kFellOffBus,         // {"event": "fell_off_bus", "at_round": R}: every later copy hangs, NVML says GPU lost
  kBusy,               // {"event": "busy", "utilization_pct": P}: NVML reads P % before the probes
  kCopyHang,           // {"event": "copy_hang"}: the GPU's first copy never completes
  kCorruptCopy,        // {"event": "corrupt_copy"}: every copy lands with one word wrong
  kMig,                // {"event": "mig"}: NVML reports MIG mode on
  kNcclSetupHang,      // {"event": "nccl_setup_hang"}: ncclCommInitRank of its rank never returns
  kNcclSetupFail,      // {"event": "nccl_setup_fail"}: ncclCommInitRank of its rank fails (ncclSystemError)
  kNcclAllReduceHang,  // {"event": "nccl_allreduce_hang"}: its rank never joins an all-reduce, so none ends
};

struct Fault {
  FaultKind kind = FaultKind::kLink;
  double after_load_s = 0;  // kLink, kFellOffBus: seconds of copies on the GPU before it fires
  // kLink, kFellOffBus: armed only once soak round R began (pcieval tells the
  // simulator each round's start); after_load_s then counts from that round.
  std::optional<int> at_round;
  LinkState link;           // kLink: the link it retrains to
  int utilization_pct = 0;  // kBusy
};

struct GpuSpec {
  std::optional<std::string> name;  // default: "NVIDIA simulated GPU (10de:DEVICE)"
  // The link NVML and sysfs report while the GPU is idle (idle GPUs lower
  // their speed on purpose); default: Gen1 at the trained width.
  std::optional<LinkState> idle_link;
  double copy_efficiency = 0.9;  // copy engines: the fraction of the link's budget a copy gets
  double sm_efficiency = 0.85;   // SM copy kernels over mapped host memory
  std::vector<Fault> faults;
};

struct Scenario {
  std::filesystem::path file;     // the scenario file, absolute
  std::filesystem::path machine;  // its machine folder, absolute: sys/ and maybe topology.xml
  std::map<PciAddress, GpuSpec> gpus;
  // Host memory bandwidth per NUMA node, GB/s: the copies of every GPU of
  // that node share it, both directions together. A node not listed: no limit.
  std::map<int, double> host_numa_gbps;
  // The rate at which the root complex forwards one peer copy between two
  // of its root ports (pairs whose paths meet only there, or not at all:
  // other sockets), GB/s. Default 26.3: P2P writes between GPUs on separate
  // root ports of an AMD EPYC host in p2pBandwidthLatencyTest (ASUS
  // ESC8000A-E12, RTX 6000 Ada, corpus
  // bw_esc8000a_e12_rtx6000ada_bandwidthTest_p2p.txt): about a Gen4 x16
  // link's rate, so on a healthy node the links set it.
  double root_complex_peer_gbps = 26.3;
  // The rate of one peer copy that ACS redirect sends up to the root port
  // and back down the port it came from (the ACS detour), GB/s. Default
  // 10.5: the highest P2P rate, peer access on, of the redirected box in
  // NVIDIA/nccl issue 814 (9.6-10.5 GB/s, where the same copies staged
  // through the host ran at 20-22).
  double acs_detour_peer_gbps = 10.5;
  // GPU pairs without peer access (cuDeviceCanAccessPeer 0 both ways, NVML's
  // P2P status "not supported"), each with the lower address first. Every
  // other pair of the node has it.
  std::set<std::pair<PciAddress, PciAddress>> no_peer_access;
};

// "gen3x16", "Gen5 x8", "gen4 x16": a generation and a width.
[[nodiscard]] Result<LinkState> parse_link_name(std::string_view text);

// Parses a scenario's JSON text; `file` resolves the relative machine path.
// Errors name the key ("gpus.0000:03:00.0.faults[1]: unknown event 'melt'").
// Does not check that the machine exists or holds the GPUs: load_scenario
// does.
[[nodiscard]] Result<Scenario> parse_scenario(std::string_view json_text, const std::filesystem::path& file);

// Reads and parses `file`, then checks the machine: a folder with sys/bus/pci
// whose GPUs include every key of `gpus`.
[[nodiscard]] Result<Scenario> load_scenario(const std::filesystem::path& file);

// The NVIDIA GPUs (vendor 0x10de, class 0x0300xx or 0x0302xx) of a sysfs tree
// `sys_root` (the folder holding bus/pci/devices), sorted by address: the
// simulated CUDA devices, in PCI order.
[[nodiscard]] std::vector<PciAddress> gpus_of_tree(const std::filesystem::path& sys_root);

}  // namespace pcieval::sim
