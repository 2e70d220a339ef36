// TEST DATA, not measurements: results documents of a fleet of DGX A100-like
// nodes (8x A100-SXM4-80GB, 10de:20b2, each behind a PCIe Gen4 switch on a
// dual EPYC 7742 host, as tests/fixtures/machines.py's hgx_a100_8gpu_gen4
// models). Copy-engine medians around 25.7 GB/s h2d and 25.8 GB/s d2h, the
// bandwidthTest figures of DGX A100 that /work/shared/PCIE-FACTS.md cites;
// each test sets the GPU medians it needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/results.hpp"
#include "report/sample_results.hpp"

namespace pcieval::testing {

inline constexpr std::uint16_t kNvidia = 0x10de;
inline constexpr std::uint16_t kA100Sxm4_80 = 0x20b2;
inline constexpr double kA100H2dGbps = 25.7;
inline constexpr double kA100D2hGbps = 25.8;

// GPU i sits at bus 0x07 + 0x10 * i behind its own switch port; path: GPU
// link (Gen4 x16 both ends, or `gpu_link` when given) and the switch uplink.
inline DeviceRecord a100_gpu(int i, PcieGen gpu_max_gen = PcieGen::kGen4) {
  char gpu[16];
  char down[16];
  char up[16];
  char root[16];
  const int bus = 0x07 + 0x10 * i;
  std::snprintf(gpu, sizeof gpu, "0000:%02x:00.0", bus);
  std::snprintf(down, sizeof down, "0000:%02x:00.0", bus - 1);
  std::snprintf(up, sizeof up, "0000:%02x:00.0", bus - 2);
  std::snprintf(root, sizeof root, "0000:%02x:01.1", bus - 3);
  DeviceRecord record = make_device(gpu, DeviceKind::kGpu, kNvidia, kA100Sxm4_80, 0x030200, i < 4 ? 0 : 1,
                                    i < 4 ? kSocket0Cpus : kSocket1Cpus);
  record.path.push_back(make_link(gpu, down, LinkPosition::kDeviceLink, port(gpu_max_gen, 16, gpu_max_gen, 16),
                                  port(PcieGen::kGen4, 16, PcieGen::kGen4, 16)));
  record.path.push_back(make_link(up, root, LinkPosition::kUplink, port(PcieGen::kGen4, 16, PcieGen::kGen4, 16),
                                  port(PcieGen::kGen4, 16, PcieGen::kGen4, 16)));
  record.nvml = NvmlGpuLink{};
  record.nvml->name = "NVIDIA A100-SXM4-80GB";
  return record;
}

// A node with one GPU per entry of `h2d_gbps`; each GPU's d2h median is its
// h2d median + 0.1. Five trials spread +-0.02 around each median.
inline Results a100_node(const std::string& host, const std::vector<double>& h2d_gbps,
                         Overall overall = Overall::kPass) {
  Results results;
  results.tool = ToolInfo{"pcieval", "0.1.0"};
  results.evidence.host = HostInfo{host, "5.15.0-126-generic"};
  results.evidence.sysfs_root = "/sys";
  results.evidence.gpus_under_load = true;
  results.evidence.probe_settings = ProbeSettings{"quick", 256 * kMiB, 1, 5};
  for (std::size_t i = 0; i < h2d_gbps.size(); ++i) {
    DeviceRecord gpu = a100_gpu(static_cast<int>(i));
    const std::string address = to_string(gpu.function.bdf);
    for (const auto& [probe, direction, median] : {std::tuple{"h2d_ce", Direction::kHostToDevice, h2d_gbps[i]},
                                                   std::tuple{"d2h_ce", Direction::kDeviceToHost, h2d_gbps[i] + 0.1}}) {
      Measurement m = make_measurement(probe, address, direction, Aggregation::kAlone, 256 * kMiB,
                                       {median - 0.02, median - 0.01, median, median + 0.01, median + 0.02});
      m.gpus = {gpu.function.bdf};
      m.host_numa_node = i < 4 ? 0 : 1;
      m.host_numa_local = true;
      results.evidence.measurements.push_back(std::move(m));
    }
    results.evidence.devices.push_back(std::move(gpu));
  }
  results.overall = overall;
  if (overall == Overall::kFail) {
    results.verdicts.push_back(Verdict{"0000:07:00.0", VerdictStatus::kBandwidthLow, ReasonCode::kBandwidthBelowBudget,
                                       std::nullopt, "h2d_ce 12.10 GB/s is below the floor", "reseat"});
    results.summary = "pcieval fail: 0000:07:00.0 bandwidth_low (bandwidth_below_budget)";
  } else if (overall == Overall::kInconclusive) {
    results.verdicts.push_back(Verdict{"0000:07:00.0", VerdictStatus::kInconclusive, ReasonCode::kProbeFailed,
                                       std::nullopt, "h2d_ce failed: GPU busy", "retry"});
    results.summary = "pcieval inconclusive: 0000:07:00.0 inconclusive (probe_failed)";
  } else {
    results.summary = "pcieval pass: 8 GPUs at expected link state and bandwidth";
  }
  return results;
}

// n GPU medians at `gbps`, spread by +-0.05 in a fixed pattern (a realistic
// fleet is never identical to the hundredth).
inline std::vector<double> a100_medians(std::size_t n = 8, double gbps = kA100H2dGbps) {
  std::vector<double> medians;
  for (std::size_t i = 0; i < n; ++i) medians.push_back(gbps + 0.05 * (static_cast<double>(i % 3) - 1.0));
  return medians;
}

}  // namespace pcieval::testing
