// Results built by hand for the report tests, modelled on a dual-socket Xeon
// Platinum 8480+ (Sapphire Rapids) GPU server: an H100 PCIe behind a Broadcom
// PEX89000 switch that trained at x8, a ConnectX-7 behind the same switch, an
// idle H100 on socket 1, a Samsung PM1743 NVMe drive whose root port reports
// "Unknown speed", and the BMC's ASPEED VGA (conventional PCI, no link).
// results_schema/examples/fail-downgraded-h100-spr.json describes the same
// node. hgx_spr_results() has no probe evidence (a document as pcieval 0.1
// wrote it, or --no-probes); hgx_spr_results_probed() adds what the
// measurement engine would record on that node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/pci_address.hpp"
#include "model/results.hpp"

namespace pcieval::testing {

inline PciAddress bdf(const std::string& text) { return parse_pci_address(text).value(); }

inline PortLinkReading port(PcieGen max_gen, int max_width, PcieGen current_gen, int current_width) {
  return PortLinkReading::known(LinkState{max_gen, max_width}, LinkState{current_gen, current_width});
}

inline Link make_link(const std::string& downstream, const std::string& upstream, LinkPosition position,
                      PortLinkReading downstream_end, PortLinkReading upstream_end) {
  Link link;
  link.downstream = bdf(downstream);
  link.upstream = bdf(upstream);
  link.position = position;
  link.downstream_end = std::move(downstream_end);
  link.upstream_end = std::move(upstream_end);
  return link;
}

inline DeviceRecord make_device(const std::string& address, DeviceKind kind, std::uint16_t vendor, std::uint16_t device,
                                std::uint32_t class_code, int numa_node, const std::string& cpulist) {
  DeviceRecord record;
  record.function.bdf = bdf(address);
  record.function.vendor_id = vendor;
  record.function.device_id = device;
  record.function.class_code = class_code;
  record.function.kind = kind;
  record.function.numa_node = numa_node;
  record.function.local_cpulist = cpulist;
  return record;
}

inline constexpr const char* kSocket0Cpus = "0-55,112-167";
inline constexpr const char* kSocket1Cpus = "56-111,168-223";

// Switch uplink shared by the GPU and the NIC on socket 0.
inline Link switch_uplink() {
  return make_link("0000:15:00.0", "0000:14:01.0", LinkPosition::kUplink, port(PcieGen::kGen5, 16, PcieGen::kGen5, 16),
                   port(PcieGen::kGen5, 16, PcieGen::kGen5, 16));
}

inline Results hgx_spr_results() {
  Results results;
  results.tool.version = "0.1.0";
  Evidence& evidence = results.evidence;
  evidence.host = {"hgx-b07", "5.15.0-126-generic"};
  evidence.sysfs_root = "/sys";
  evidence.topology = "live hwloc";
  evidence.gpus_under_load = false;
  evidence.notes = {"GPU links were read without load"};

  DeviceRecord vga = make_device("0000:02:00.0", DeviceKind::kOther, 0x1a03, 0x2000, 0x030000, 0, kSocket0Cpus);
  evidence.devices.push_back(vga);

  DeviceRecord gpu0 = make_device("0000:17:00.0", DeviceKind::kGpu, 0x10de, 0x2331, 0x030200, 0, kSocket0Cpus);
  gpu0.function.link = port(PcieGen::kGen5, 16, PcieGen::kGen1, 8);
  gpu0.path = {make_link("0000:17:00.0", "0000:16:10.0", LinkPosition::kDeviceLink, *gpu0.function.link,
                         port(PcieGen::kGen5, 16, PcieGen::kGen1, 8)),
               switch_uplink()};
  gpu0.locality = Locality{0, kSocket0Cpus, {bdf("0000:16:10.0"), bdf("0000:15:00.0"), bdf("0000:14:01.0")}};
  gpu0.function.aer.correctable = AerCounters{{{"BadDLLP", 41}, {"BadTLP", 3}, {"RxErr", 12}}, 56};
  gpu0.function.aer.fatal = AerCounters{{{"DLP", 0}}, std::nullopt};
  evidence.devices.push_back(gpu0);

  DeviceRecord nic = make_device("0000:18:00.0", DeviceKind::kNic, 0x15b3, 0x1021, 0x020700, 0, kSocket0Cpus);
  nic.function.link = port(PcieGen::kGen5, 16, PcieGen::kGen5, 16);
  nic.path = {make_link("0000:18:00.0", "0000:16:14.0", LinkPosition::kDeviceLink, *nic.function.link,
                        port(PcieGen::kGen5, 16, PcieGen::kGen5, 16)),
              switch_uplink()};
  evidence.devices.push_back(nic);

  // sysfs gives no NUMA node; hwloc does. The root port cannot decode its
  // own speed, so the link's expected state is unknown.
  DeviceRecord nvme = make_device("0000:3b:00.0", DeviceKind::kNvme, 0x144d, 0xa826, 0x010802, 0, kSocket0Cpus);
  nvme.function.numa_node = make_error("no NUMA affinity");
  nvme.function.link = port(PcieGen::kGen5, 4, PcieGen::kGen5, 4);
  PortLinkReading unknown_root = port(PcieGen::kGen5, 4, PcieGen::kGen5, 4);
  unknown_root.max_speed = make_error("kernel reports link speed 'Unknown speed'");
  nvme.path = {make_link("0000:3b:00.0", "0000:3a:01.0", LinkPosition::kDeviceLink, *nvme.function.link, unknown_root)};
  nvme.locality = Locality{0, kSocket0Cpus, {bdf("0000:3a:01.0")}};
  evidence.devices.push_back(nvme);

  DeviceRecord gpu1 = make_device("0000:ca:00.0", DeviceKind::kGpu, 0x10de, 0x2331, 0x030200, 1, kSocket1Cpus);
  gpu1.function.link = port(PcieGen::kGen5, 16, PcieGen::kGen1, 16);
  gpu1.path = {make_link("0000:ca:00.0", "0000:c9:01.0", LinkPosition::kDeviceLink, *gpu1.function.link,
                         port(PcieGen::kGen5, 16, PcieGen::kGen1, 16))};
  evidence.devices.push_back(gpu1);

  results.verdicts = {
      {"0000:17:00.0", VerdictStatus::kLinkDowngraded, ReasonCode::kLinkWidthBelowExpected,
       LinkRef{bdf("0000:17:00.0"), bdf("0000:16:10.0")},
       "link 0000:17:00.0 <-> 0000:16:10.0 (device link) runs Gen1 x8, expected Gen5 x16",
       "Lanes are missing: reseat 0000:17:00.0"},
      {"0000:18:00.0", VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, std::nullopt,
       "every link up to the root port runs at its expected state", ""},
      {"0000:3b:00.0", VerdictStatus::kInconclusive, ReasonCode::kLinkStateUnknown,
       LinkRef{bdf("0000:3b:00.0"), bdf("0000:3a:01.0")},
       "link 0000:3b:00.0 <-> 0000:3a:01.0 (device link) cannot be judged", "Make sure sysfs is readable"},
      {"0000:ca:00.0", VerdictStatus::kInconclusive, ReasonCode::kGpuLinkSpeedIdle,
       LinkRef{bdf("0000:ca:00.0"), bdf("0000:c9:01.0")},
       "link 0000:ca:00.0 <-> 0000:c9:01.0 (device link) runs Gen1 x16, expected Gen5 x16 with no load applied",
       "Read the link while the GPU is busy"},
      {"node", VerdictStatus::kMissing, ReasonCode::kGpusMissing, std::nullopt,
       "found 2 GPUs, expected 4 (0000:17:00.0, 0000:ca:00.0)", "Compare `nvidia-smi -L` with the inventory"},
  };
  results.overall = overall_of(results.verdicts);
  results.summary = "pcieval fail: 0000:17:00.0 link_downgraded (link_width_below_expected) +1 more";
  return results;
}

inline Measurement make_measurement(const std::string& probe, const std::string& subject, Direction direction,
                                    Aggregation aggregation, std::uint64_t size_bytes, std::vector<double> trials) {
  Measurement measurement;
  measurement.probe = probe;
  measurement.subject = subject;
  measurement.direction = direction;
  measurement.aggregation = aggregation;
  measurement.size_bytes = size_bytes;
  measurement.bytes_per_trial = size_bytes;
  measurement.trials_gbps = std::move(trials);
  measurement.stats = summarize_trials(measurement.trials_gbps);
  measurement.verified = true;
  return measurement;
}

inline LinkSample make_sample(const std::string& port, SampleSource source, double t_s, bool under_load,
                              std::optional<PcieGen> speed, std::optional<int> width) {
  return LinkSample{bdf(port), source, t_s, under_load, speed, width};
}

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// The node of hgx_spr_results() after the probes ran (--full): the x8 GPU
// measured at Gen5 x8 rates, the second GPU unusable (busy in exclusive
// mode, so its copy probe failed and its link was only ever read idle),
// no uplink shared by two GPUs, and the host ceiling of socket 0 measured.
inline Results hgx_spr_results_probed() {
  Results results = hgx_spr_results();
  Evidence& evidence = results.evidence;
  evidence.probe_settings = ProbeSettings{"full", 256 * kMiB, 1, 5};
  evidence.probes = {
      {"h2d_ce",
       ProbeStatus::kFailed,
       "GPU 0000:ca:00.0: cudaSetDevice: all CUDA-capable devices are busy or unavailable",
       {},
       1.75,
       {{bdf("0000:ca:00.0"), "cudaSetDevice: all CUDA-capable devices are busy or unavailable", false}},
       true},
      {"sweep_ce", ProbeStatus::kRan, "", {}, 4.5},
      {"group_ce",
       ProbeStatus::kSkipped,
       "no switch or root port is shared by two or more GPUs: each GPU's uplink carries only its own traffic",
       {},
       0},
      {"host_ceiling", ProbeStatus::kRan, "", {}, 0.625},
  };

  Measurement h2d = make_measurement("h2d_ce", "0000:17:00.0", Direction::kHostToDevice, Aggregation::kAlone,
                                     256 * kMiB, {27.58, 27.61, 27.63, 27.6, 27.62});
  h2d.gpus = {bdf("0000:17:00.0")};
  h2d.host_numa_node = 0;
  h2d.host_numa_local = true;
  Measurement small = make_measurement("sweep_ce", "0000:17:00.0", Direction::kHostToDevice, Aggregation::kAlone, 4096,
                                       {0.61, 0.62, 0.64});
  small.gpus = h2d.gpus;
  small.host_numa_node = 0;
  small.host_numa_local = true;
  Measurement large = small;
  large.size_bytes = large.bytes_per_trial = kMiB;
  large.trials_gbps = {22.4, 22.38, 22.45};
  large.stats = summarize_trials(large.trials_gbps);
  Measurement host = make_measurement("host_ceiling", "numa0", Direction::kHostToHost, Aggregation::kTotalOverWallTime,
                                      256 * kMiB, {118.42, 117.9, 118.61});
  host.method = CopyMethod::kCpuThreads;
  host.host_numa_node = 0;
  // The sweep's large point first: the table sorts a curve by size.
  evidence.measurements = {h2d, large, small, host};

  evidence.link_samples = {
      make_sample("0000:17:00.0", SampleSource::kSysfs, 0.25, true, PcieGen::kGen5, 8),
      make_sample("0000:16:10.0", SampleSource::kSysfs, 0.25, true, PcieGen::kGen5, 8),
      make_sample("0000:17:00.0", SampleSource::kNvml, 0.5, true, PcieGen::kGen5, 8),
      make_sample("0000:ca:00.0", SampleSource::kSysfs, 0.75, false, PcieGen::kGen1, 16),
      // A reading that failed: speed unknown, width still read.
      make_sample("0000:c9:01.0", SampleSource::kSysfs, 0.75, false, std::nullopt, 16),
  };
  evidence.counters = {
      {bdf("0000:17:00.0"), "aer_correctable", 56, 58},
      {bdf("0000:17:00.0"), "nvml_replay", 7, 7},
  };
  evidence.devices[1].nvml = NvmlGpuLink{5, 5, 5, 8, 16, 7, 310, 27105000, 0, true};
  evidence.devices[4].nvml = NvmlGpuLink{1, 5, 5, 16, 16, 0, std::nullopt, std::nullopt, 8, false};
  return results;
}

}  // namespace pcieval::testing
