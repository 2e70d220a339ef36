// pcieval's GPU kernels (kernels/device/kernels.cu) as the simulated node
// runs them: their C++ equivalents on the same memory, by the entry names
// of pcieval's PTX module. What a kernel may touch and how its PCIe traffic
// takes time is the simulated driver's (cuda_sim.cpp), handed in as a
// KernelDevice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace pcieval::sim {

enum class Kernel { kFillPattern, kPoison, kCountMismatches, kSmCopy, kLatch, kFillRank, kCountSumMismatches };

// The kernel an entry of the PTX module names ("pcieval_sm_copy"); nullopt
// for a name pcieval's module does not have.
[[nodiscard]] std::optional<Kernel> kernel_named(std::string_view entry);

// The bytes of each kernel's parameters, in order, as kernels.cu declares
// them (pointers and size_t 8 bytes, seeds and ints 4, at their natural
// alignment), copied out of cuLaunchKernel's argument array.
[[nodiscard]] std::vector<unsigned char> pack_arguments(Kernel kernel, void** arguments);

// What a kernel of one device may do beyond its own memory accesses.
struct KernelDevice {
  // Whether the device reaches [pointer, pointer + bytes): its own memory or
  // pinned host memory.
  std::function<bool(std::uintptr_t pointer, std::size_t bytes)> reaches;
  // The device whose memory holds the range when it is another device's
  // (reachable only with peer access on); -1 otherwise.
  std::function<int(std::uintptr_t pointer, std::size_t bytes)> peer_of;
  // Moves `bytes` between this device and `peer` on the timeline (written to
  // the peer when `to_peer`), and returns when done.
  std::function<void(int peer, bool to_peer, double bytes)> peer_transfer;
  // Whether the range is pinned host memory (the SM copy then crosses PCIe).
  std::function<bool(std::uintptr_t pointer, std::size_t bytes)> pinned_host;
  // The SM copy's bytes have landed at `destination` (a fault may spoil them).
  std::function<void(void* destination, std::size_t bytes)> landed;
  // Moves `bytes` over the device's link on the timeline, and returns when done.
  std::function<void(bool to_device, double bytes)> transfer;
  // Waits on the stream's worker until `ready()` (the latch).
  std::function<void(const std::function<bool()>& ready)> wait;
};

// Runs `kernel` with `packed` arguments; false when it touched memory the
// device cannot reach (CUDA's illegal address: sticky on the context).
[[nodiscard]] bool run_kernel(Kernel kernel, const std::vector<unsigned char>& packed, const KernelDevice& device);

}  // namespace pcieval::sim
