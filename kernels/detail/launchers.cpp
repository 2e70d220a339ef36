#include "kernels/detail/launchers.hpp"

#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/module.hpp"

namespace pcieval::detail {
namespace {

// The kernels read uint4, 16 bytes at a time.
constexpr std::size_t kVectorBytes = 16;

// A grid-stride kernel over `elements` on `stream`; `arguments` point at the
// kernel's parameters, in order and of the kernel's exact types.
Status launch_grid(const Stream& stream, Kernel kernel, int blocks, std::size_t elements, void** arguments) {
  return launch(stream.ordinal(), kernel, grid_for(blocks, elements), kThreadsPerBlock, stream.handle(), arguments);
}

}  // namespace

Result<int> saturating_blocks(int ordinal) { return saturating_blocks(ordinal, Kernel::kSmCopy); }

Status launch_fill_pattern(const Stream& stream, int blocks, std::byte* data, std::size_t bytes, std::uint32_t seed) {
  CuDevicePtr data_address = device_address(data);
  std::size_t vectors = bytes / kVectorBytes;
  void* arguments[] = {&data_address, &vectors, &seed};
  return launch_grid(stream, Kernel::kFillPattern, blocks, vectors, arguments);
}

Status launch_poison(const Stream& stream, int blocks, std::byte* data, std::size_t bytes) {
  CuDevicePtr data_address = device_address(data);
  std::size_t vectors = bytes / kVectorBytes;
  void* arguments[] = {&data_address, &vectors};
  return launch_grid(stream, Kernel::kPoison, blocks, vectors, arguments);
}

Status launch_count_mismatches(const Stream& stream, int blocks, const std::byte* data, std::size_t bytes,
                               std::uint32_t seed, std::byte* counter) {
  CuDevicePtr data_address = device_address(data);
  std::size_t vectors = bytes / kVectorBytes;
  CuDevicePtr counter_address = device_address(counter);
  void* arguments[] = {&data_address, &vectors, &seed, &counter_address};
  return launch_grid(stream, Kernel::kCountMismatches, blocks, vectors, arguments);
}

Status launch_sm_copy(const Stream& stream, int blocks, std::byte* destination, const std::byte* source,
                      std::size_t bytes) {
  CuDevicePtr destination_address = device_address(destination);
  CuDevicePtr source_address = device_address(source);
  std::size_t vectors = bytes / kVectorBytes;
  void* arguments[] = {&destination_address, &source_address, &vectors};
  return launch_grid(stream, Kernel::kSmCopy, blocks, vectors, arguments);
}

Status launch_latch(const Stream& stream, std::byte* release, std::byte* timed_out, unsigned long long timeout_ns) {
  CuDevicePtr release_address = device_address(release);
  CuDevicePtr timed_out_address = device_address(timed_out);
  void* arguments[] = {&release_address, &timed_out_address, &timeout_ns};
  return launch(stream.ordinal(), Kernel::kLatch, 1, 1, stream.handle(), arguments);
}

Status launch_fill_rank(const Stream& stream, int blocks, std::byte* input, std::byte* output, std::size_t count,
                        int rank) {
  CuDevicePtr input_address = device_address(input);
  CuDevicePtr output_address = device_address(output);
  void* arguments[] = {&input_address, &output_address, &count, &rank};
  return launch_grid(stream, Kernel::kFillRank, blocks, count, arguments);
}

Status launch_count_sum_mismatches(const Stream& stream, int blocks, const std::byte* output, std::size_t count,
                                   int ranks, std::byte* counter) {
  CuDevicePtr output_address = device_address(output);
  CuDevicePtr counter_address = device_address(counter);
  void* arguments[] = {&output_address, &count, &ranks, &counter_address};
  return launch_grid(stream, Kernel::kCountSumMismatches, blocks, count, arguments);
}

}  // namespace pcieval::detail
