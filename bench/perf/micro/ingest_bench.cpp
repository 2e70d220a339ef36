// Google Benchmark suite of the ingest/ parsers: each reads one of the capture
// fixtures (tests/fixtures/captures), repeated to about 4 MB where the format
// allows it, so bytes/s is the parser's own speed, not start-up. The kernel
// log, the one format that arrives at 100 MB, is synthetic lines modelled on
// dmesg (see bench/perf/diagnose_vs_grep.sh for the whole command against grep).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ingest/bandwidth_test.hpp"
#include "ingest/detect.hpp"
#include "ingest/kernel_log.hpp"
#include "ingest/lspci.hpp"
#include "ingest/nccl_tests.hpp"
#include "ingest/nvbandwidth.hpp"
#include "ingest/nvidia_smi.hpp"
#include "ingest/nvidia_smi_xml.hpp"

namespace {

constexpr std::size_t kTargetBytes = std::size_t{4} << 20;

std::string fixture(const std::string& name) {
  const auto path = std::filesystem::path(PCIEVAL_SOURCE_DIR) / "tests" / "fixtures" / "captures" / name;
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Text formats read several runs pasted one after another the same way.
std::string repeated(const std::string& text) {
  if (text.empty()) return text;
  std::string out;
  out.reserve(kTargetBytes + text.size());
  while (out.size() < kTargetBytes) out += text + "\n";
  return out;
}

// Lines of a GPU node's dmesg (boot enumeration, NVRM banner, USB, NVMe,
// systemd, network) with one AER report line every `event_every` lines: 200 is
// a busy log, 10 a node in trouble, where the reader does most per line.
std::string synthetic_kernel_log(std::size_t event_every = 200) {
  static const char* const kLines[] = {
      "[   12.104552] usb 1-3: new high-speed USB device number 2 using xhci_hcd\n",
      "[   13.882101] nvme nvme0: 64/0/0 default/read/poll queues\n",
      "[   14.002245] EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.\n",
      "[   15.310077] systemd[1]: Started session-4.scope - Session 4 of User slurm.\n",
      "[   16.771394] pci 0000:ab:00.0: [10de:2330] type 00 class 0x030200\n",
      "[   16.771502] pci 0000:ab:00.0: BAR 1: assigned [mem 0x22000000000-0x23fffffffff 64bit pref]\n",
      "[   16.902114] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n",
      "[   17.000120] IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready\n",
  };
  static const char* const kEvent =
      "[   18.552310] pcieport 0000:97:01.0: AER: Corrected error received: 0000:ab:00.0\n";
  std::string out;
  out.reserve(kTargetBytes + 200);
  for (std::size_t i = 0; out.size() < kTargetBytes; ++i) {
    out += i % event_every == event_every - 1 ? kEvent : kLines[i % 8];
  }
  return out;
}

template <class Parse>
void run(benchmark::State& state, const std::string& text, Parse parse) {
  if (text.empty()) {
    state.SkipWithError("fixture missing");
    return;
  }
  for (auto _ : state) {
    auto parsed = parse(text);
    benchmark::DoNotOptimize(parsed);
    if (!parsed) state.SkipWithError(parsed.error().message.c_str());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void BM_ParseLspci(benchmark::State& state) {
  // Repeated blocks would merge into one machine; one capture is read as is.
  run(state, fixture("lspci_esc8000a_e12_idle_gpus_highpoint_x1.txt"),
      [](const std::string& t) { return pcieval::parse_lspci(t, "bench"); });
}
void BM_ParseNvidiaSmi(benchmark::State& state) {
  run(state, fixture("nvsmi_esc8000a_e12_4xrtx6000ada_busy_c1_gen3.txt"),
      [](const std::string& t) { return pcieval::parse_nvidia_smi(t, "bench"); });
}
void BM_ParseNvidiaSmiXml(benchmark::State& state) {
  run(state, fixture("nvsmi_esc8000a_e12_4xrtx6000ada_idle.xml"),
      [](const std::string& t) { return pcieval::parse_nvidia_smi_xml(t, "bench"); });
}
void BM_ParseKernelLog(benchmark::State& state) {
  run(state, synthetic_kernel_log(), [](const std::string& t) { return pcieval::parse_kernel_log(t, "bench"); });
}
void BM_ParseKernelLogDense(benchmark::State& state) {
  run(state, synthetic_kernel_log(10), [](const std::string& t) { return pcieval::parse_kernel_log(t, "bench"); });
}
void BM_ParseNvbandwidth(benchmark::State& state) {
  run(state, repeated(fixture("nvbw_hgx_h100_8gpu_gen5.txt")),
      [](const std::string& t) { return pcieval::parse_nvbandwidth(t, "bench"); });
}
void BM_ParseNvbandwidthJson(benchmark::State& state) {
  run(state, fixture("nvbw_json_8x_rtx4090_gpu5_x8.json"),
      [](const std::string& t) { return pcieval::parse_nvbandwidth_json(t, "bench"); });
}
void BM_ParseBandwidthTest(benchmark::State& state) {
  run(state, repeated(fixture("bwtest_shmoo_dell_a100_pcie_h2d_limited.txt")),
      [](const std::string& t) { return pcieval::parse_bandwidth_test(t, "bench"); });
}
void BM_ParseNcclTests(benchmark::State& state) {
  run(state, repeated(fixture("nccl_allreduce_8x_rtx5090_pcie_only.txt")),
      [](const std::string& t) { return pcieval::parse_nccl_tests(t, "bench"); });
}
void BM_ParseNcclTestsJson(benchmark::State& state) {
  run(state, fixture("nccl_allreduce_json_2x_h100_pcie_nvlink_bridge.json"),
      [](const std::string& t) { return pcieval::parse_nccl_tests_json(t, "bench"); });
}
// Detection reads at most the first MiB of any capture.
void BM_DetectKernelLog(benchmark::State& state) {
  const std::string text = synthetic_kernel_log();
  for (auto _ : state) benchmark::DoNotOptimize(pcieval::detect_capture_format(text));
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * std::min(text.size(), pcieval::kDetectPrefixBytes)));
}

BENCHMARK(BM_ParseLspci);
BENCHMARK(BM_ParseNvidiaSmi);
BENCHMARK(BM_ParseNvidiaSmiXml);
BENCHMARK(BM_ParseKernelLog);
BENCHMARK(BM_ParseKernelLogDense);
BENCHMARK(BM_ParseNvbandwidth);
BENCHMARK(BM_ParseNvbandwidthJson);
BENCHMARK(BM_ParseBandwidthTest);
BENCHMARK(BM_ParseNcclTests);
BENCHMARK(BM_ParseNcclTestsJson);
BENCHMARK(BM_DetectKernelLog);

}  // namespace
