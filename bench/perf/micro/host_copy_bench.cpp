// Google Benchmark suite for the host copy: the host ceiling probe's copy
// (HostCopier, timed the way the probe times it) beside a plain
// multi-threaded memcpy of the same bytes. bench/perf/host_ceiling_vs_memcpy.sh
// compares the two: the engine must not hide bandwidth behind its overhead.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "bench/host_copy.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace {

using pcieval::HostCopier;
using pcieval::HwlocTopology;

const HwlocTopology* live_topology() {
  static std::optional<HwlocTopology> topology = [] {
    auto loaded = HwlocTopology::load_live();
    return loaded ? std::optional<HwlocTopology>(std::move(loaded).value()) : std::nullopt;
  }();
  return topology ? &*topology : nullptr;
}

int first_node_threads(const HwlocTopology& topology) {
  const auto nodes = pcieval::numa_nodes(topology);
  if (nodes.empty()) return 1;
  return pcieval::pu_count_of_node(topology, nodes.front()).value_or(1);
}

// The probe's copy: workers bound to the first NUMA node, timed from release
// to the last worker's end (manual time), poison and verification untimed.
void BM_HostCeilingCopy(benchmark::State& state) {
  const HwlocTopology* topology = live_topology();
  if (topology == nullptr) {
    state.SkipWithError("hwloc cannot load this machine");
    return;
  }
  const auto nodes = pcieval::numa_nodes(*topology);
  const auto bytes = static_cast<std::size_t>(state.range(0));
  auto copier = HostCopier::create(*topology, {.numa_node = nodes.front(), .size_bytes = bytes, .threads = 0});
  if (!copier) {
    state.SkipWithError(copier.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto seconds = copier.value().timed_copy();
    if (!seconds) {
      state.SkipWithError(seconds.error().message.c_str());
      return;
    }
    state.SetIterationTime(seconds.value());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["workers"] = copier->threads();
}
BENCHMARK(BM_HostCeilingCopy)->Arg(64 << 20)->Arg(256 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);

// The reference: as many threads as the probe uses, each memcpy'ing its slice
// of ordinary malloc'd (and pre-faulted) buffers, created and joined per
// iteration, timed by the wall clock.
void BM_PlainThreadedMemcpy(benchmark::State& state) {
  const HwlocTopology* topology = live_topology();
  const int threads = topology != nullptr ? first_node_threads(*topology) : 1;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<char[]> source(new char[bytes]);
  std::unique_ptr<char[]> destination(new char[bytes]);
  std::memset(source.get(), 1, bytes);
  std::memset(destination.get(), 0, bytes);
  const std::size_t slice = bytes / static_cast<std::size_t>(threads);
  for (auto _ : state) {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      const std::size_t begin = slice * static_cast<std::size_t>(t);
      const std::size_t length = t == threads - 1 ? bytes - begin : slice;
      workers.emplace_back(
          [&, begin, length] { std::memcpy(destination.get() + begin, source.get() + begin, length); });
    }
    for (auto& worker : workers) worker.join();
    benchmark::DoNotOptimize(destination.get());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["workers"] = threads;
}
BENCHMARK(BM_PlainThreadedMemcpy)->Arg(64 << 20)->Arg(256 << 20)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
