#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/cuda_check.cuh"
#include "kernels/device_pattern.hpp"
#include "kernels/kernels.cuh"
#include "kernels/pattern.hpp"

namespace pcieval {
namespace {

Status check_range(const std::byte* data, std::size_t bytes) {
  if (bytes % kPatternGranuleBytes != 0) {
    return make_error("a pattern range must be a multiple of 16 bytes, got " + std::to_string(bytes));
  }
  if (reinterpret_cast<std::uintptr_t>(data) % kPatternGranuleBytes != 0) {
    return make_error("a pattern range must be 16-byte aligned");
  }
  return ok_status();
}

}  // namespace

Status fill_pattern_device(const Stream& stream, std::byte* data, std::size_t bytes, std::uint32_t seed) {
  PCIEVAL_TRY_STATUS(check_range(data, bytes));
  PCIEVAL_TRY_STATUS(detail::use_device(stream.ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(stream.ordinal()));
  PCIEVAL_TRY_STATUS(detail::launch_fill_pattern(stream.handle(), blocks, data, bytes, seed));
  return stream.synchronize();
}

Status poison_device(const Stream& stream, std::byte* data, std::size_t bytes) {
  PCIEVAL_TRY_STATUS(check_range(data, bytes));
  PCIEVAL_TRY_STATUS(detail::use_device(stream.ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(stream.ordinal()));
  PCIEVAL_TRY_STATUS(detail::launch_poison(stream.handle(), blocks, data, bytes));
  return stream.synchronize();
}

Result<std::uint64_t> count_mismatches_device(const Stream& stream, const std::byte* data, std::size_t bytes,
                                              std::uint32_t seed) {
  PCIEVAL_TRY_STATUS(check_range(data, bytes));
  PCIEVAL_TRY_STATUS(detail::use_device(stream.ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(stream.ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer counter, DeviceBuffer::allocate(stream.ordinal(), sizeof(unsigned long long)));
  return detail::count_mismatches_with(stream, blocks, data, bytes, seed, counter);
}

namespace detail {

Result<std::uint64_t> count_mismatches_with(const Stream& stream, int blocks, const std::byte* data, std::size_t bytes,
                                            std::uint32_t seed, const DeviceBuffer& counter) {
  PCIEVAL_TRY_STATUS(use_device(stream.ordinal()));
  auto* count_word = reinterpret_cast<unsigned long long*>(counter.data());
  PCIEVAL_CUDA_TRY(cudaMemsetAsync(count_word, 0, sizeof(unsigned long long), stream.handle()));
  PCIEVAL_TRY_STATUS(launch_count_mismatches(stream.handle(), blocks, data, bytes, seed, count_word));
  PCIEVAL_TRY_STATUS(stream.synchronize());
  unsigned long long mismatches = 0;
  PCIEVAL_CUDA_TRY(cudaMemcpy(&mismatches, count_word, sizeof(mismatches), cudaMemcpyDeviceToHost));
  return static_cast<std::uint64_t>(mismatches);
}

}  // namespace detail

}  // namespace pcieval
