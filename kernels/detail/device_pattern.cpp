#include "kernels/detail/device_pattern.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/launchers.hpp"
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
  PCIEVAL_TRY_STATUS(detail::launch_fill_pattern(stream, blocks, data, bytes, seed));
  return stream.synchronize();
}

Status poison_device(const Stream& stream, std::byte* data, std::size_t bytes) {
  PCIEVAL_TRY_STATUS(check_range(data, bytes));
  PCIEVAL_TRY_STATUS(detail::use_device(stream.ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(stream.ordinal()));
  PCIEVAL_TRY_STATUS(detail::launch_poison(stream, blocks, data, bytes));
  return stream.synchronize();
}

Result<std::uint64_t> count_mismatches_device(const Stream& stream, const std::byte* data, std::size_t bytes,
                                              std::uint32_t seed) {
  PCIEVAL_TRY_STATUS(check_range(data, bytes));
  PCIEVAL_TRY_STATUS(detail::use_device(stream.ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(stream.ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer counter, DeviceBuffer::allocate(stream.ordinal(), sizeof(unsigned long long)));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer readback,
                           PinnedHostBuffer::allocate(stream.ordinal(), sizeof(unsigned long long)));
  return detail::count_mismatches_with(stream, blocks, data, bytes, seed, counter, readback);
}

namespace detail {

Result<std::uint64_t> read_counter(const Stream& stream, const DeviceBuffer& counter, const PinnedHostBuffer& readback,
                                   const PollPolicy& policy, const std::string& what) {
  if (counter.size_bytes() < sizeof(unsigned long long) || readback.size_bytes() < sizeof(unsigned long long)) {
    return make_error("a counter and its readback need " + std::to_string(sizeof(unsigned long long)) + " bytes each");
  }
  PCIEVAL_TRY_STATUS(use_device(stream.ordinal()));
  if (const CuResult code = cu().memcpy_dtoh_async(readback.data(), device_address(counter.data()),
                                                   sizeof(unsigned long long), stream.handle());
      code != kCudaSuccess) {
    return device_error(stream.ordinal(), "cuMemcpyDtoHAsync_v2", code);
  }
  const int ordinal = stream.ordinal();
  CuStream handle = stream.handle();
  PCIEVAL_TRY_STATUS(wait_ready(
      ordinal, [ordinal, handle] { return device_ready(ordinal, "cuStreamQuery", cu().stream_query(handle)); }, policy,
      what));
  // The stream is done, so the copy's bytes are visible to the host.
  unsigned long long value = 0;
  std::memcpy(&value, readback.data(), sizeof value);
  return static_cast<std::uint64_t>(value);
}

Result<std::uint64_t> count_mismatches_with(const Stream& stream, int blocks, const std::byte* data, std::size_t bytes,
                                            std::uint32_t seed, const DeviceBuffer& counter,
                                            const PinnedHostBuffer& readback) {
  PCIEVAL_TRY_STATUS(use_device(stream.ordinal()));
  // Two 32-bit zeros: the count is one 64-bit word.
  PCIEVAL_CU_TRY("cuMemsetD32Async", cu().memset_d32_async(device_address(counter.data()), 0U, 2, stream.handle()));
  PCIEVAL_TRY_STATUS(launch_count_mismatches(stream, blocks, data, bytes, seed, counter.data()));
  // The check may read mapped host memory over PCIe: its deadline grows
  // with the bytes, as a copy's does.
  return read_counter(
      stream, counter, readback, PollPolicy{copy_deadline_s(bytes, 0.0)},
      "the mismatch count of " + std::to_string(bytes) + " bytes on CUDA device " + std::to_string(stream.ordinal()));
}

}  // namespace detail

}  // namespace pcieval
