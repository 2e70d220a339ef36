// Host memory placed on a chosen NUMA node, and threads run near it. The
// measurement engine's host buffers come from here: the node is bound
// explicitly (not left to a thread-affinity side effect, as first-touch
// allocators do) and where the pages landed is checked, because a buffer on
// the wrong node costs a GPU up to two thirds of its bandwidth.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/result.hpp"
#include "topology/hwloc_locality.hpp"

namespace pcieval {

// A page-aligned buffer bound to one NUMA node. Move-only; the destructor
// frees it. The memory is not page-locked: kernels/ registers it with CUDA
// (cudaHostRegister) when a GPU must reach it.
class NumaBuffer {
 public:
  // Allocates `bytes` with hwloc's strict bind to NUMA node `numa_node` (an
  // OS index), writes every page so the kernel places it now, then asks where
  // the pages are. Errors: an unknown node, a failed allocation, or pages that
  // landed on another node (a strict bind the kernel ignored, such as under a
  // cgroup cpuset that excludes the node).
  [[nodiscard]] static Result<NumaBuffer> allocate(const HwlocTopology& topology, int numa_node, std::size_t bytes);

  NumaBuffer(const NumaBuffer&) = delete;
  NumaBuffer& operator=(const NumaBuffer&) = delete;
  NumaBuffer(NumaBuffer&& other) noexcept;
  NumaBuffer& operator=(NumaBuffer&& other) noexcept;
  ~NumaBuffer();

  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size_bytes() const { return size_bytes_; }
  // The node the pages were found on after allocation.
  [[nodiscard]] int numa_node() const { return numa_node_; }

  // Page-locks the buffer (mlock) until it is freed, so the kernel can neither
  // swap nor migrate it while it is measured. Fails under RLIMIT_MEMLOCK
  // without CAP_IPC_LOCK; the caller decides whether that matters.
  [[nodiscard]] Status lock_pages();
  [[nodiscard]] bool pages_locked() const { return locked_; }

  // Asks again where the pages are, and errors unless every one is still on
  // numa_node(). allocate() checked once, before anyone pinned the buffer;
  // pinning (cudaHostRegister, mlock) can migrate pages (the kernel moves
  // pages out of movable zones and CMA areas before it pins them), so the
  // GPU probes check again after registration (issue 17, item 6).
  [[nodiscard]] Status verify_node() const;

 private:
  NumaBuffer(const HwlocTopology& topology, std::byte* data, std::size_t size_bytes, int numa_node)
      : topology_(&topology), data_(data), size_bytes_(size_bytes), numa_node_(numa_node) {}

  const HwlocTopology* topology_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t size_bytes_ = 0;
  int numa_node_ = -1;
  bool locked_ = false;
};

// Whether pages found on the nodes `found` (OS indices, as reported for a
// buffer) are all on `expected`; the error names where they are and `when`
// the check was made ("after registration").
[[nodiscard]] Status check_pages_on_node(int expected, const std::vector<int>& found, const std::string& when);

// OS indices of the machine's NUMA nodes, ascending. A machine without NUMA
// has one node, 0.
[[nodiscard]] std::vector<int> numa_nodes(const HwlocTopology& topology);

// The number of processing units (hardware threads) local to a NUMA node.
[[nodiscard]] Result<int> pu_count_of_node(const HwlocTopology& topology, int numa_node);

// Binds the calling thread to the CPUs of a NUMA node.
[[nodiscard]] Status bind_thread_to_node(const HwlocTopology& topology, int numa_node);

}  // namespace pcieval
