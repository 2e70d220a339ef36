#include "kernels/pattern.hpp"

#include <cstring>

namespace pcieval {
namespace {

std::size_t word_count(std::size_t bytes) { return bytes / sizeof(std::uint32_t); }

}  // namespace

void fill_pattern_host(std::span<std::byte> bytes, std::uint32_t seed) {
  auto* words = reinterpret_cast<std::uint32_t*>(bytes.data());
  const std::size_t count = word_count(bytes.size());
  for (std::size_t i = 0; i < count; ++i) words[i] = pattern_word(i, seed);
}

void poison_host(std::span<std::byte> bytes) {
  auto* words = reinterpret_cast<std::uint32_t*>(bytes.data());
  const std::size_t count = word_count(bytes.size());
  for (std::size_t i = 0; i < count; ++i) words[i] = kPoisonWord;
}

std::uint64_t count_mismatches_host(std::span<const std::byte> bytes, std::uint32_t seed) {
  const auto* words = reinterpret_cast<const std::uint32_t*>(bytes.data());
  const std::size_t count = word_count(bytes.size());
  // Summing comparison results (no early exit, no branch) lets the compiler
  // vectorize the loop: a 256 MiB destination is checked after every trial.
  std::uint64_t mismatches = 0;
  for (std::size_t i = 0; i < count; ++i) mismatches += words[i] != pattern_word(i, seed) ? 1U : 0U;
  return mismatches;
}

}  // namespace pcieval
