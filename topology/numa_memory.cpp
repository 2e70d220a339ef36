#include "topology/numa_memory.hpp"

#include <hwloc.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "model/text.hpp"

namespace pcieval {
namespace {

hwloc_obj_t numa_node_obj(hwloc_topology_t topology, int numa_node) {
  if (numa_node < 0) return nullptr;
  return hwloc_get_numanode_obj_by_os_index(topology, static_cast<unsigned>(numa_node));
}

// Owns an hwloc bitmap for the span of one function.
struct Bitmap {
  hwloc_bitmap_t bits = hwloc_bitmap_alloc();
  Bitmap() = default;
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
  ~Bitmap() { hwloc_bitmap_free(bits); }
};

}  // namespace

Result<NumaBuffer> NumaBuffer::allocate(const HwlocTopology& topology, int numa_node, std::size_t bytes) {
  hwloc_topology_t handle = topology.handle();
  if (hwloc_topology_is_thissystem(handle) == 0) {
    return make_error("the hwloc topology was loaded from a file and does not describe this machine");
  }
  if (bytes == 0) return make_error("cannot allocate an empty host buffer");
  hwloc_obj_t node = numa_node_obj(handle, numa_node);
  if (node == nullptr) return make_error("NUMA node " + std::to_string(numa_node) + " does not exist");

  const int node_count = hwloc_get_nbobjs_by_type(handle, HWLOC_OBJ_NUMANODE);
  void* memory = nullptr;
  if (node_count == 1) {
    // One node: every page lands on it, and a strict bind would only add a
    // way to fail (containers often forbid mbind).
    memory = hwloc_alloc(handle, bytes);
  } else {
    memory = hwloc_alloc_membind(handle, bytes, node->nodeset, HWLOC_MEMBIND_BIND,
                                 HWLOC_MEMBIND_STRICT | HWLOC_MEMBIND_BYNODESET);
  }
  if (memory == nullptr) {
    return make_error("cannot allocate " + std::to_string(bytes) + " bytes on NUMA node " + std::to_string(numa_node) +
                      ": " + errno_text(errno));
  }
  NumaBuffer buffer(topology, static_cast<std::byte*>(memory), bytes, numa_node);
  // Fault every page in now, so placement is decided here and not during the
  // first timed copy.
  std::memset(memory, 0, bytes);

  if (node_count > 1) {
    Bitmap where;
    if (hwloc_get_area_memlocation(handle, memory, bytes, where.bits, HWLOC_MEMBIND_BYNODESET) != 0) {
      return make_error("cannot tell where the pages of a buffer bound to NUMA node " + std::to_string(numa_node) +
                        " landed: " + errno_text(errno));
    }
    if (hwloc_bitmap_isequal(where.bits, node->nodeset) == 0) {
      char* text = nullptr;
      hwloc_bitmap_list_asprintf(&text, where.bits);
      std::string landed = text != nullptr ? text : "?";
      std::free(text);  // NOLINT(cppcoreguidelines-no-malloc): hwloc allocates with malloc
      return make_error("a buffer bound to NUMA node " + std::to_string(numa_node) + " landed on node(s) " + landed +
                        " (a cpuset or memory policy overrides the bind)");
    }
  }
  return buffer;
}

NumaBuffer::NumaBuffer(NumaBuffer&& other) noexcept
    : topology_(std::exchange(other.topology_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)),
      numa_node_(std::exchange(other.numa_node_, -1)),
      locked_(std::exchange(other.locked_, false)) {}

NumaBuffer& NumaBuffer::operator=(NumaBuffer&& other) noexcept {
  if (this != &other) {
    NumaBuffer old(std::move(*this));
    topology_ = std::exchange(other.topology_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
    numa_node_ = std::exchange(other.numa_node_, -1);
    locked_ = std::exchange(other.locked_, false);
  }
  return *this;
}

NumaBuffer::~NumaBuffer() {
  if (data_ == nullptr) return;
  if (locked_) munlock(data_, size_bytes_);
  hwloc_free(topology_->handle(), data_, size_bytes_);
}

Status NumaBuffer::lock_pages() {
  if (locked_) return ok_status();
  if (mlock(data_, size_bytes_) != 0) {
    const int err = errno;
    return make_error(
        "cannot page-lock " + std::to_string(size_bytes_) + " bytes: " + errno_text(err) +
        (err == ENOMEM || err == EPERM ? " (RLIMIT_MEMLOCK; raise it with ulimit -l or run as root)" : ""));
  }
  locked_ = true;
  return ok_status();
}

Status check_pages_on_node(int expected, const std::vector<int>& found, const std::string& when) {
  if (found.size() == 1 && found.front() == expected) return ok_status();
  std::string where;
  for (int node : found) where += (where.empty() ? "" : ",") + std::to_string(node);
  if (where.empty()) where = "no node";
  return make_error("the pages of a host buffer placed on NUMA node " + std::to_string(expected) + " were on " +
                    (found.size() > 1 ? "nodes " : "node ") + where + " " + when +
                    " (pinning migrated them, or a memory policy moved them)");
}

Status NumaBuffer::verify_node() const {
  hwloc_topology_t handle = topology_->handle();
  // One node: every page is on it.
  if (hwloc_get_nbobjs_by_type(handle, HWLOC_OBJ_NUMANODE) <= 1) return ok_status();
  Bitmap where;
  if (hwloc_get_area_memlocation(handle, data_, size_bytes_, where.bits, HWLOC_MEMBIND_BYNODESET) != 0) {
    return make_error("cannot tell where the pages of a buffer on NUMA node " + std::to_string(numa_node_) +
                      " are: " + errno_text(errno));
  }
  std::vector<int> found;
  for (int index = hwloc_bitmap_first(where.bits); index >= 0; index = hwloc_bitmap_next(where.bits, index)) {
    found.push_back(index);
  }
  return check_pages_on_node(numa_node_, found, "after registration");
}

std::vector<int> numa_nodes(const HwlocTopology& topology) {
  std::vector<int> nodes;
  hwloc_topology_t handle = topology.handle();
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(handle, HWLOC_OBJ_NUMANODE, nullptr); node != nullptr;
       node = hwloc_get_next_obj_by_type(handle, HWLOC_OBJ_NUMANODE, node)) {
    nodes.push_back(static_cast<int>(node->os_index));
  }
  return nodes;
}

Result<int> pu_count_of_node(const HwlocTopology& topology, int numa_node) {
  hwloc_topology_t handle = topology.handle();
  hwloc_obj_t node = numa_node_obj(handle, numa_node);
  if (node == nullptr) return make_error("NUMA node " + std::to_string(numa_node) + " does not exist");
  const int count = hwloc_get_nbobjs_inside_cpuset_by_type(handle, node->cpuset, HWLOC_OBJ_PU);
  if (count <= 0) return make_error("NUMA node " + std::to_string(numa_node) + " has no CPUs (a memory-only node)");
  return count;
}

Status bind_thread_to_node(const HwlocTopology& topology, int numa_node) {
  hwloc_topology_t handle = topology.handle();
  hwloc_obj_t node = numa_node_obj(handle, numa_node);
  if (node == nullptr) return make_error("NUMA node " + std::to_string(numa_node) + " does not exist");
  if (hwloc_set_cpubind(handle, node->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    return make_error("cannot bind a thread to the CPUs of NUMA node " + std::to_string(numa_node) + ": " +
                      errno_text(errno));
  }
  return ok_status();
}

}  // namespace pcieval
