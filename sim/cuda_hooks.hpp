// What libpcieval_sim_cuda.so offers the simulator's other libraries (the
// NCCL one): the calling thread's current device and work on a simulated
// stream. Not part of any NVIDIA API.
#pragma once

#include <functional>

#include "sim/memory_sim.hpp"
#include "sim/node.hpp"

namespace pcieval::sim {

// The ordinal of the calling thread's current context; -1 when none.
[[nodiscard]] int current_device();
// The ordinal of a live stream's device; -1 when `stream` is none.
[[nodiscard]] int stream_device(void* stream);
// Queues `op` on the stream, run by its worker (which it may wait with,
// Node::wait). False when `stream` is none.
[[nodiscard]] bool enqueue_on_stream(void* stream, std::function<void(Worker&)> op);
// The ordinal of a context cuDevicePrimaryCtxRetain made; -1 for any other.
[[nodiscard]] int context_device(void* context);
// The simulated driver's memory map (memory_sim.hpp).
[[nodiscard]] MemoryMap& simulated_memory();
// Whether `from`'s context enabled peer access to `to`'s memory
// (cuCtxEnablePeerAccess; cuda_peer_sim.cpp).
[[nodiscard]] bool peer_access_enabled(int from, int to);

}  // namespace pcieval::sim
