// libpcieval_sim_cuda.so's peer-to-peer entry points (cuda_sim.cpp has the
// rest): whether two simulated GPUs may reach each other's memory (the
// scenario's no_peer_access), the per-context peer access switch, and
// cuMemcpyPeerAsync, whose bytes move for real and take the time of the
// route the node gives them (peer_route.hpp): directly when the copying
// context enabled peer access, staged through host memory otherwise, as
// the real driver does. Declared from the driver's C ABI.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "sim/cuda_hooks.hpp"
#include "sim/cuda_results.hpp"
#include "sim/node.hpp"

namespace {

using namespace pcieval::sim::curesult;  // NOLINT: the CUresult values, as cuda.h names them
using pcieval::sim::Node;

std::mutex g_peer_mutex;
std::set<std::pair<int, int>> g_enabled;  // (from, to): from's context reaches to's memory; guarded by g_peer_mutex

int contract(const std::string& what, int code) {
  pcieval::sim::contract_violation(what);
  return code;
}

Node* node() { return Node::get().value(); }

}  // namespace

namespace pcieval::sim {

bool peer_access_enabled(int from, int to) {
  const std::lock_guard lock(g_peer_mutex);
  return g_enabled.count({from, to}) != 0;
}

}  // namespace pcieval::sim

extern "C" {

int cuDeviceCanAccessPeer(int* can_access, int device, int peer) {
  if (can_access == nullptr) return kInvalidValue;
  auto sim = Node::get();
  if (!sim) return kNotInitialized;
  const int count = static_cast<int>(sim.value()->devices().size());
  if (device < 0 || device >= count || peer < 0 || peer >= count) return kInvalidDevice;
  *can_access = sim.value()->peer_access(device, peer) ? 1 : 0;
  return kSuccess;
}

int cuCtxEnablePeerAccess(void* peer_context, unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  const int from = pcieval::sim::current_device();
  if (from < 0) return contract("cuCtxEnablePeerAccess with no current context", kInvalidContext);
  const int to = pcieval::sim::context_device(peer_context);
  if (to < 0) return contract("cuCtxEnablePeerAccess of an unknown context", kInvalidContext);
  if (from == to || !node()->peer_access(from, to)) return kPeerAccessUnsupported;
  const std::lock_guard lock(g_peer_mutex);
  return g_enabled.insert({from, to}).second ? kSuccess : kPeerAccessAlreadyEnabled;
}

int cuCtxDisablePeerAccess(void* peer_context) {
  const int from = pcieval::sim::current_device();
  if (from < 0) return contract("cuCtxDisablePeerAccess with no current context", kInvalidContext);
  const int to = pcieval::sim::context_device(peer_context);
  if (to < 0) return contract("cuCtxDisablePeerAccess of an unknown context", kInvalidContext);
  const std::lock_guard lock(g_peer_mutex);
  return g_enabled.erase({from, to}) != 0 ? kSuccess : kPeerAccessNotEnabled;
}

int cuMemcpyPeerAsync(std::uint64_t destination, void* destination_context, std::uint64_t source, void* source_context,
                      std::size_t bytes, void* stream) {
  const int initiator = pcieval::sim::stream_device(stream);
  if (initiator < 0)
    return contract("cuMemcpyPeerAsync on a stream that does not exist or was destroyed", kInvalidHandle);
  const int to = pcieval::sim::context_device(destination_context);
  const int from = pcieval::sim::context_device(source_context);
  if (to < 0 || from < 0) return contract("cuMemcpyPeerAsync with an unknown context", kInvalidContext);
  pcieval::sim::MemoryMap& memory = pcieval::sim::simulated_memory();
  if (memory.device_of(destination, bytes) != to || memory.device_of(source, bytes) != from) {
    return contract("cuMemcpyPeerAsync: " + std::to_string(bytes) +
                        " bytes at an address that is not the named context's device memory",
                    kInvalidValue);
  }
  // The other end, as the copying device sees it: direct when its context
  // reaches that device's memory.
  const int other = initiator == from ? to : from;
  const bool direct = other == initiator || pcieval::sim::peer_access_enabled(initiator, other);
  const double efficiency = node()->devices()[static_cast<std::size_t>(initiator)].spec.copy_efficiency;
  const bool queued = pcieval::sim::enqueue_on_stream(stream, [=](pcieval::sim::Worker& worker) {
    std::memcpy(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source), bytes);
    if (bytes >= 4096 && node()->has_fault(initiator, pcieval::sim::FaultKind::kCorruptCopy)) {
      reinterpret_cast<std::uint32_t*>(destination)[bytes / 8] ^= 0x00010000U;
    }
    if (from == to) return;
    auto flow = node()->start_peer_flow(initiator, from, to, static_cast<double>(bytes), efficiency, direct);
    node()->wait(worker, [flow] { return flow->done.load(std::memory_order_acquire); });
  });
  return queued ? kSuccess : kInvalidHandle;
}

}  // extern "C"
