// Google Benchmark suite for the host copy: the host ceiling probe's copy
// (HostCopier, timed the way the probe times it) beside a plain
// multi-threaded memcpy of the same bytes. bench/perf/host_ceiling_vs_memcpy.sh
// compares the two: the engine must not hide bandwidth behind its overhead.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
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
// of ordinary (page-aligned, pre-faulted) heap buffers. The threads are created
// once, outside the timed loop. Each iteration the benchmark's thread lets
// them go (`go`), they meet at a barrier of their own (`start`), whose
// completion step, run by the last to arrive, reads the clock as it releases
// them all, and each reads it again when its slice is copied: the copy is
// timed from the barrier to the last thread's end, as the probe times its
// own. Waking the workers from the benchmark's thread is not timed, so the
// reference is never slower than a plain copy for want of a wake-up.
// Creating and joining threads inside the loop, as this benchmark once did,
// added their start-up to the copy and made the probe look faster than a
// plain copy (issue 30, item 13).
void BM_PlainThreadedMemcpy(benchmark::State& state) {
  const HwlocTopology* topology = live_topology();
  const int threads = topology != nullptr ? first_node_threads(*topology) : 1;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  // Page-aligned, as the probe's buffers are: new char[] of this size sits 16
  // bytes into a page, and memcpy then reads every source line split in two,
  // which slowed this reference below the probe.
  const auto page_aligned = [bytes] {
    return std::unique_ptr<char, decltype(&std::free)>(static_cast<char*>(std::aligned_alloc(4096, bytes)),
                                                       &std::free);  // NOLINT(cppcoreguidelines-no-malloc)
  };
  auto source = page_aligned();
  auto destination = page_aligned();
  if (!source || !destination) {
    state.SkipWithError("cannot allocate the buffers");
    return;
  }
  std::memset(source.get(), 1, bytes);
  std::memset(destination.get(), 0, bytes);
  const std::size_t slice = bytes / static_cast<std::size_t>(threads);

  using Clock = std::chrono::steady_clock;
  Clock::time_point released;
  const auto release = [&released]() noexcept { released = Clock::now(); };
  // `stop` is written before `go` and read after it, which orders the two.
  std::barrier go(threads + 1);
  std::barrier start(threads, release);
  std::barrier done(threads + 1);
  bool stop = false;
  std::vector<Clock::time_point> ended(static_cast<std::size_t>(threads));
  std::vector<std::jthread> workers;
  for (int t = 0; t < threads; ++t) {
    const std::size_t begin = slice * static_cast<std::size_t>(t);
    const std::size_t length = t == threads - 1 ? bytes - begin : slice;
    workers.emplace_back([&, t, begin, length] {
      for (;;) {
        go.arrive_and_wait();
        if (stop) return;
        start.arrive_and_wait();
        std::memcpy(destination.get() + begin, source.get() + begin, length);
        ended[static_cast<std::size_t>(t)] = Clock::now();
        done.arrive_and_wait();
      }
    });
  }
  for (auto _ : state) {
    go.arrive_and_wait();
    done.arrive_and_wait();
    benchmark::DoNotOptimize(destination.get());
    state.SetIterationTime(
        std::chrono::duration<double>(*std::max_element(ended.begin(), ended.end()) - released).count());
  }
  stop = true;
  go.arrive_and_wait();
  workers.clear();  // joins
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["workers"] = threads;
}
BENCHMARK(BM_PlainThreadedMemcpy)->Arg(64 << 20)->Arg(256 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
