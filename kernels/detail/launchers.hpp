// The launchers of the kernels in kernels/device/kernels.cu: each queues its
// kernel on a stream with cuLaunchKernel and returns the launch's error;
// none waits. Never included by a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/resources.hpp"
#include "model/result.hpp"

namespace pcieval::detail {

// Blocks for a kernel that must keep every SM busy on device `ordinal`
// (module.hpp's saturating_blocks for the SM copy kernel, which the pattern
// kernels share: they too sweep whole buffers over PCIe).
[[nodiscard]] Result<int> saturating_blocks(int ordinal);

// The pattern kernels. REQUIRES: `data` 16-byte aligned, `bytes` a multiple
// of 16, reachable from the stream's device.
[[nodiscard]] Status launch_fill_pattern(const Stream& stream, int blocks, std::byte* data, std::size_t bytes,
                                         std::uint32_t seed);
[[nodiscard]] Status launch_poison(const Stream& stream, int blocks, std::byte* data, std::size_t bytes);
// Adds the number of mismatching words to *counter (a device word the caller
// zeroes first).
[[nodiscard]] Status launch_count_mismatches(const Stream& stream, int blocks, const std::byte* data, std::size_t bytes,
                                             std::uint32_t seed, std::byte* counter);

// Copies `bytes` from `source` to `destination` with 16-byte loads and stores,
// grid-stride. Either side may be mapped host memory (its device address).
[[nodiscard]] Status launch_sm_copy(const Stream& stream, int blocks, std::byte* destination, const std::byte* source,
                                    std::size_t bytes);

// One thread that spins until *release != 0 or `timeout_ns` has passed on
// %globaltimer; on timeout it sets *timed_out = 1. Both are device addresses
// of mapped host words.
[[nodiscard]] Status launch_latch(const Stream& stream, std::byte* release, std::byte* timed_out,
                                  unsigned long long timeout_ns);

// The all-reduce rank's kernels (nccl_rank.hpp): input[i] = the rank's
// pattern and output[i] = NaN for i < count; and the count of output words
// that differ from the sum of `ranks` ranks' patterns, added to *counter.
[[nodiscard]] Status launch_fill_rank(const Stream& stream, int blocks, std::byte* input, std::byte* output,
                                      std::size_t count, int rank);
[[nodiscard]] Status launch_count_sum_mismatches(const Stream& stream, int blocks, const std::byte* output,
                                                 std::size_t count, int ranks, std::byte* counter);

// Queues the copy of the 64-bit device word `counter` into `readback` (pinned
// host memory), waits for the stream (polled, policy) and returns the word.
// Not a synchronous copy into a host variable: that blocks for ever on a
// stuck device, and a copy it gave up on would land in the caller's frame; a
// timed-out copy can only land in `readback`, which its retired device keeps.
// `what` names the count in a timeout's message (device_pattern.cpp).
[[nodiscard]] Result<std::uint64_t> read_counter(const Stream& stream, const DeviceBuffer& counter,
                                                 const PinnedHostBuffer& readback, const PollPolicy& policy,
                                                 const std::string& what);

// Zeroes `counter` (a device word), counts the mismatches of `bytes` at `data`
// on `stream`, and reads the count back through `readback` (read_counter),
// waiting until copy_deadline_s(bytes, 0) (device_pattern.cpp). The copy streams
// keep one counter and readback for every trial; count_mismatches_device
// makes them.
[[nodiscard]] Result<std::uint64_t> count_mismatches_with(const Stream& stream, int blocks, const std::byte* data,
                                                          std::size_t bytes, std::uint32_t seed,
                                                          const DeviceBuffer& counter,
                                                          const PinnedHostBuffer& readback);

// The device address of a pointer-typed buffer address (CUdeviceptr).
[[nodiscard]] inline CuDevicePtr device_address(const std::byte* pointer) {
  return static_cast<CuDevicePtr>(reinterpret_cast<std::uintptr_t>(pointer));
}

}  // namespace pcieval::detail
