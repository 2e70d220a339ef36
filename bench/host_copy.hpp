// A multi-threaded copy between two host buffers on one NUMA node: the most
// that node's memory can feed, and the engine's own test bed on machines with
// no GPU (the trials, statistics and registry run on it for real).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "model/result.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval {

// The bytes each host-copy worker verifies or copies are cut at this
// alignment, so no two threads share a page.
inline constexpr std::size_t kHostCopyChunkAlignBytes = 4096;

// Source and destination buffers on one node and a pool of worker threads
// bound to that node's CPUs, each owning one contiguous chunk. The threads are
// created once, so a trial times copying and nothing else.
class HostCopier {
 public:
  struct Options {
    int numa_node = 0;
    std::size_t size_bytes = std::size_t{256} << 20;
    int threads = 0;  // 0: one per processing unit of the node
  };

  // Allocates and fills both buffers (pattern in the source), page-locks them
  // when the limits allow, and starts the workers.
  [[nodiscard]] static Result<HostCopier> create(const HwlocTopology& topology, const Options& options);

  HostCopier(HostCopier&&) noexcept;
  HostCopier& operator=(HostCopier&&) noexcept;
  ~HostCopier();

  // One trial: poisons the destination (untimed), copies source to
  // destination with every worker at once, then checks every destination
  // word against the pattern (untimed). The copy is timed from the moment
  // every worker is running (a start gate the last one to wake opens, as the
  // GPU probes' latch does for their copies) to the last one finishing: the
  // time to wake the workers and the coordinator is not copying. Returns the
  // copy's seconds, or an error that counts the wrong words: a copy that did
  // not happen or went wrong is never a rate.
  [[nodiscard]] Result<double> timed_copy();

  [[nodiscard]] std::size_t size_bytes() const;
  [[nodiscard]] int threads() const;
  [[nodiscard]] int numa_node() const;
  // False when mlock was refused (RLIMIT_MEMLOCK): the pages are still bound
  // and faulted in, but not locked.
  [[nodiscard]] bool pages_locked() const;
  // Why the pages are not locked, when they are not.
  [[nodiscard]] const std::string& lock_error() const;

  // For tests: flips one byte of the destination after the next copy, as a
  // broken copy would, so the verification can be seen to catch it.
  void corrupt_next_copy_for_test();
  // For tests: worker 0 reaches the start gate `delay` late in the next copy,
  // as a worker whose CPU was slow to wake would.
  void delay_next_copy_start_for_test(std::chrono::milliseconds delay);

 private:
  struct State;
  explicit HostCopier(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The pattern written to the source: a 64-bit word per 8 bytes, a mix of its
// index and a seed, so a shifted, stale or zero-filled copy never matches.
[[nodiscard]] std::uint64_t host_pattern_word(std::uint64_t index, std::uint64_t seed);

}  // namespace pcieval
