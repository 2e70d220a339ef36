// The GPU kernels of kernels/, behind host-side launchers. CUDA-only (never
// included by a .hpp). Every launcher queues work and returns the launch
// error; none waits.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/resources.hpp"
#include "model/result.hpp"

namespace pcieval::detail {

// Blocks for a kernel that must keep every SM busy: as many 256-thread blocks
// as the device can keep resident at once. Reading host memory over PCIe
// takes about a microsecond per access, so saturating a Gen5 x16 link needs
// tens of thousands of 16-byte loads in flight; a full device provides them.
[[nodiscard]] Result<int> saturating_blocks(int ordinal);

// The pattern kernels. REQUIRES: `data` 16-byte aligned, `bytes` a multiple
// of 16, reachable from the stream's device.
[[nodiscard]] Status launch_fill_pattern(cudaStream_t stream, int blocks, std::byte* data, std::size_t bytes,
                                         std::uint32_t seed);
[[nodiscard]] Status launch_poison(cudaStream_t stream, int blocks, std::byte* data, std::size_t bytes);
// Adds the number of mismatching words to *counter (a device word the caller
// zeroes first).
[[nodiscard]] Status launch_count_mismatches(cudaStream_t stream, int blocks, const std::byte* data, std::size_t bytes,
                                             std::uint32_t seed, unsigned long long* counter);

// Queues the copy of the 64-bit device word `counter` into `readback` (pinned
// host memory), waits for the stream (polled, policy) and returns the word.
// Not cudaMemcpy into a host variable: that blocks for ever on a stuck
// device, and a copy it gave up on would land in the caller's frame; a
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

// Copies `bytes` from `source` to `destination` with 16-byte loads and stores,
// grid-stride. Either side may be mapped host memory (its device address).
[[nodiscard]] Status launch_sm_copy(cudaStream_t stream, int blocks, std::byte* destination, const std::byte* source,
                                    std::size_t bytes);

// One thread that spins until *release != 0 or `timeout_ns` has passed on
// %globaltimer; on timeout it sets *timed_out = 1. Both are device addresses
// of mapped host words.
[[nodiscard]] Status launch_latch(cudaStream_t stream, const int* release, int* timed_out,
                                  unsigned long long timeout_ns);

// cudaFuncGetAttributes on every kernel above, which loads them into the
// current device's context (see preload_kernels).
[[nodiscard]] Status load_kernels_on_current_device();

// The same for the all-reduce rank's kernels (nccl_rank.cu), which live in
// that file's own module: preloading kernels.cu's does not load them, and
// their first launch may queue behind a latch (a check of the all-reduce's
// result while a stream is held).
[[nodiscard]] Status load_all_reduce_kernels_on_current_device();

}  // namespace pcieval::detail
