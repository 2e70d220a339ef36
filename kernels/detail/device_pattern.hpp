// The pattern of kernels/pattern.hpp written and checked by GPU kernels, on
// device memory or on a mapped host range (through its device pointer). Each
// call waits for its stream: these are for setting up and checking, never for
// timed work.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/resources.hpp"
#include "model/result.hpp"

namespace pcieval {

// REQUIRES for all three: `data` is reachable by the stream's device, 16-byte
// aligned, and `bytes` is a multiple of kPatternGranuleBytes.
[[nodiscard]] Status fill_pattern_device(const Stream& stream, std::byte* data, std::size_t bytes, std::uint32_t seed);
[[nodiscard]] Status poison_device(const Stream& stream, std::byte* data, std::size_t bytes);
// How many 32-bit words differ from the pattern for `seed`.
[[nodiscard]] Result<std::uint64_t> count_mismatches_device(const Stream& stream, const std::byte* data,
                                                            std::size_t bytes, std::uint32_t seed);

}  // namespace pcieval
