// The data every GPU copy carries: 32-bit words computed from their index and
// a seed, so a destination can be checked without a second copy of the source
// and two buffers with different seeds never agree by accident. Host and
// device compute the same words (this header is shared with the .cu files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#if defined(__CUDACC__)
#define PCIEVAL_HOST_DEVICE __host__ __device__
#else
#define PCIEVAL_HOST_DEVICE
#endif

namespace pcieval {

// Buffers that carry the pattern are whole 16-byte vectors: the SM copy and
// check kernels move uint4 (16 bytes) per access.
inline constexpr std::size_t kPatternGranuleBytes = 16;

// The value a destination is set to before each trial, so that a copy that did
// not happen (or stopped early) leaves words that do not match the pattern. A
// pattern word equal to it by chance is harmless: that one word is not proved.
inline constexpr std::uint32_t kPoisonWord = 0xdeadbeefU;

// Word `index` of the pattern for `seed`: a multiply-xorshift mix (the
// murmur3 finalizer), cheap enough that checking runs at memory speed.
PCIEVAL_HOST_DEVICE inline constexpr std::uint32_t pattern_word(std::uint64_t index, std::uint32_t seed) {
  std::uint32_t x = static_cast<std::uint32_t>(index) ^ static_cast<std::uint32_t>(index >> 32) * 0x9e3779b9U;
  x ^= seed * 0x85ebca6bU + 0x632be5abU;
  x ^= x >> 16;
  x *= 0x85ebca6bU;
  x ^= x >> 13;
  x *= 0xc2b2ae35U;
  x ^= x >> 16;
  return x;
}

// Writes the pattern into a host buffer. REQUIRES: bytes.size() is a multiple
// of kPatternGranuleBytes and the buffer is 4-byte aligned.
void fill_pattern_host(std::span<std::byte> bytes, std::uint32_t seed);

// Sets every word of a host buffer to kPoisonWord. Same requirements.
void poison_host(std::span<std::byte> bytes);

// How many 32-bit words of a host buffer differ from the pattern. Same
// requirements.
[[nodiscard]] std::uint64_t count_mismatches_host(std::span<const std::byte> bytes, std::uint32_t seed);

}  // namespace pcieval
