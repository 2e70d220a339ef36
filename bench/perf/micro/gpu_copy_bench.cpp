// Google Benchmark suite for the GPU copy paths: copy engine and SM kernels,
// host-to-device and device-to-host, at a few sizes, through the same streams
// and latch the probes use. Manual time is the CUDA event time of the copies
// alone; the host buffer is pinned on device 0's NUMA node. Every iteration is
// verified (run_latched_trial returns no time for wrong data). Without a
// usable GPU every benchmark is skipped with the reason.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "kernels/copy_stream.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/latch.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace {

using pcieval::CopyMethod;
using pcieval::Direction;

constexpr int kDevice = 0;
constexpr double kLatchTimeoutS = 5.0;

// Why no GPU benchmark can run here, or nullopt.
std::optional<std::string> no_gpu_reason() {
  if (!pcieval::built_with_cuda()) return std::string(pcieval::kBuiltWithoutCudaMessage);
  auto count = pcieval::cuda_device_count();
  if (!count) return "no usable CUDA device: " + count.error().message;
  return std::nullopt;
}

const pcieval::HwlocTopology* live_topology() {
  static std::optional<pcieval::HwlocTopology> topology = [] {
    auto loaded = pcieval::HwlocTopology::load_live();
    return loaded ? std::optional<pcieval::HwlocTopology>(std::move(loaded).value()) : std::nullopt;
  }();
  return topology ? &*topology : nullptr;
}

// Device 0's NUMA node as hwloc sees it, else the first node.
int device_node(const pcieval::HwlocTopology& topology) {
  if (auto address = pcieval::cuda_pci_address(kDevice)) {
    if (auto locality = topology.locality_of(address.value()); locality && locality->numa_node) {
      return *locality->numa_node;
    }
  }
  const auto nodes = pcieval::numa_nodes(topology);
  return nodes.empty() ? 0 : nodes.front();
}

template <Direction TheDirection, CopyMethod TheMethod>
void bm_gpu_copy(benchmark::State& state) {
  if (auto reason = no_gpu_reason()) {
    state.SkipWithError(reason->c_str());
    return;
  }
  const pcieval::HwlocTopology* topology = live_topology();
  if (topology == nullptr) {
    state.SkipWithError("hwloc cannot load this machine: host buffers cannot be bound");
    return;
  }
  const auto bytes = static_cast<std::size_t>(state.range(0));
  auto buffer = pcieval::NumaBuffer::allocate(*topology, device_node(*topology), bytes);
  if (!buffer) {
    state.SkipWithError(buffer.error().message.c_str());
    return;
  }
  auto stream = pcieval::CopyStream::create(
      kDevice, TheDirection, TheMethod, std::span<std::byte>(buffer.value().data(), buffer.value().size_bytes()), 1);
  auto latch = pcieval::Latch::create(kDevice, kLatchTimeoutS);
  if (!stream || !latch) {
    state.SkipWithError((!stream ? stream.error() : latch.error()).message.c_str());
    return;
  }
  pcieval::CopyStream* streams[] = {&stream.value()};
  for (auto _ : state) {
    auto timing = pcieval::run_latched_trial(streams, latch.value());
    if (!timing) {
      state.SkipWithError(timing.error().message.c_str());
      return;
    }
    state.SetIterationTime(timing.value().stream_s[0]);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["numa_node"] = buffer.value().numa_node();
}

// 1 MiB shows per-copy overhead, 16 MiB and 256 MiB the link.
#define PCIEVAL_GPU_COPY_BENCHMARK(name, direction, method) \
  BENCHMARK_TEMPLATE(bm_gpu_copy, direction, method)        \
      ->Name("BM_GpuCopy/" name)                            \
      ->Arg(1 << 20)                                        \
      ->Arg(16 << 20)                                       \
      ->Arg(256 << 20)                                      \
      ->UseManualTime()                                     \
      ->Unit(benchmark::kMillisecond)

PCIEVAL_GPU_COPY_BENCHMARK("h2d_ce", Direction::kHostToDevice, CopyMethod::kCopyEngine);
PCIEVAL_GPU_COPY_BENCHMARK("d2h_ce", Direction::kDeviceToHost, CopyMethod::kCopyEngine);
PCIEVAL_GPU_COPY_BENCHMARK("h2d_sm", Direction::kHostToDevice, CopyMethod::kSmKernel);
PCIEVAL_GPU_COPY_BENCHMARK("d2h_sm", Direction::kDeviceToHost, CopyMethod::kSmKernel);

}  // namespace
