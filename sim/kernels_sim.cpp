#include "sim/kernels_sim.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <string>

#include "kernels/pattern.hpp"

namespace pcieval::sim {
namespace {

using Clock = std::chrono::steady_clock;

// The pattern kernels are most of a simulated run's CPU time (a GPU runs
// them beside the copies; here the host does): a mix of 32-bit multiplies per
// word that SSE2 cannot vectorise. Built at -O3 (sim/CMakeLists.txt) and, on
// x86-64, also for AVX2, chosen at load time: 3-4x the words per second.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PCIEVAL_SIM_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PCIEVAL_SIM_VECTOR_CLONES
#endif

PCIEVAL_SIM_VECTOR_CLONES void fill_pattern_words(std::uint32_t* words, std::size_t count, std::uint32_t seed) {
  for (std::size_t i = 0; i < count; ++i) words[i] = pcieval::pattern_word(i, seed);
}

PCIEVAL_SIM_VECTOR_CLONES std::uint64_t count_pattern_mismatches(const std::uint32_t* words, std::size_t count,
                                                                 std::uint32_t seed) {
  std::uint64_t mismatches = 0;
  for (std::size_t i = 0; i < count; ++i) mismatches += words[i] != pcieval::pattern_word(i, seed) ? 1 : 0;
  return mismatches;
}

}  // namespace

std::optional<Kernel> kernel_named(std::string_view entry) {
  static const std::map<std::string, Kernel, std::less<>> names = {
      {"pcieval_fill_pattern", Kernel::kFillPattern},
      {"pcieval_poison", Kernel::kPoison},
      {"pcieval_count_mismatches", Kernel::kCountMismatches},
      {"pcieval_sm_copy", Kernel::kSmCopy},
      {"pcieval_latch", Kernel::kLatch},
      {"pcieval_fill_rank", Kernel::kFillRank},
      {"pcieval_count_sum_mismatches", Kernel::kCountSumMismatches}};
  const auto found = names.find(entry);
  if (found == names.end()) return std::nullopt;
  return found->second;
}

bool run_kernel(Kernel kernel, const std::vector<unsigned char>& packed, const KernelDevice& device) {
  const auto illegal = [] { return false; };
  const auto reaches = [&device](std::uintptr_t pointer, std::size_t bytes) { return device.reaches(pointer, bytes); };
  auto word_at = [&packed](std::size_t offset, auto sample) {
    decltype(sample) value{};
    std::memcpy(&value, packed.data() + offset, sizeof value);
    return value;
  };
  switch (kernel) {
    case Kernel::kFillPattern:
    case Kernel::kPoison:
    case Kernel::kCountMismatches: {
      const auto data = word_at(0, std::uintptr_t{});
      const auto vectors = word_at(8, std::size_t{});
      const std::size_t bytes = vectors * 16;
      if (!reaches(data, bytes)) return illegal();
      auto* words = reinterpret_cast<std::uint32_t*>(data);
      if (kernel == Kernel::kPoison) {
        std::fill(words, words + vectors * 4, pcieval::kPoisonWord);
        return true;
      }
      const auto seed = word_at(16, std::uint32_t{});
      if (kernel == Kernel::kFillPattern) {
        fill_pattern_words(words, vectors * 4, seed);
        return true;
      }
      const auto counter = word_at(24, std::uintptr_t{});
      if (!reaches(counter, 8)) return illegal();
      *reinterpret_cast<std::uint64_t*>(counter) += count_pattern_mismatches(words, vectors * 4, seed);
      return true;
    }
    case Kernel::kSmCopy: {
      const auto destination = word_at(0, std::uintptr_t{});
      const auto source = word_at(8, std::uintptr_t{});
      const std::size_t bytes = word_at(16, std::size_t{}) * 16;
      if (!reaches(destination, bytes) || !reaches(source, bytes)) return illegal();
      std::memcpy(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source), bytes);
      device.landed(reinterpret_cast<void*>(destination), bytes);
      const int read_peer = device.peer_of ? device.peer_of(source, bytes) : -1;
      const int write_peer = device.peer_of ? device.peer_of(destination, bytes) : -1;
      if (write_peer >= 0 || read_peer >= 0) {
        device.peer_transfer(write_peer >= 0 ? write_peer : read_peer, write_peer >= 0, static_cast<double>(bytes));
        return true;
      }
      const bool from_host = device.pinned_host(source, bytes);
      const bool to_host = device.pinned_host(destination, bytes);
      if (from_host != to_host) device.transfer(from_host, static_cast<double>(bytes));  // over PCIe
      return true;
    }
    case Kernel::kLatch: {
      const auto release = word_at(0, std::uintptr_t{});
      const auto timed_out = word_at(8, std::uintptr_t{});
      const auto timeout_ns = word_at(16, std::uint64_t{});
      if (!reaches(release, 4) || !reaches(timed_out, 4)) return illegal();
      const auto give_up = Clock::now() + std::chrono::nanoseconds(timeout_ns);
      auto* flag = reinterpret_cast<int*>(release);
      device.wait([flag, give_up] {
        return std::atomic_ref<int>(*flag).load(std::memory_order_acquire) != 0 || Clock::now() > give_up;
      });
      if (std::atomic_ref<int>(*flag).load(std::memory_order_acquire) == 0) {
        std::atomic_ref<int>(*reinterpret_cast<int*>(timed_out)).store(1, std::memory_order_release);
      }
      return true;
    }
    case Kernel::kFillRank:
    case Kernel::kCountSumMismatches: {
      // Rank r's element i is (i + 7r) % 61 + 1 (kernels.cu). It depends on
      // i only through i % 61, so the loops walk that period with a counter:
      // a division per element and rank was most of a simulated all-reduce.
      constexpr std::size_t kPeriod = 61;
      const auto phase_of = [](int rank) { return (7U * static_cast<std::size_t>(rank)) % kPeriod; };
      if (kernel == Kernel::kFillRank) {
        const auto input = word_at(0, std::uintptr_t{});
        const auto output = word_at(8, std::uintptr_t{});
        const auto count = word_at(16, std::size_t{});
        const auto rank = word_at(24, int{});
        if (!reaches(input, count * 4) || !reaches(output, count * 4)) return illegal();
        const std::uint32_t nan = 0x7fc00000U;
        std::size_t phase = phase_of(rank);
        for (std::size_t i = 0; i < count; ++i) {
          reinterpret_cast<float*>(input)[i] = static_cast<float>(phase + 1);
          std::memcpy(reinterpret_cast<float*>(output) + i, &nan, 4);
          if (++phase == kPeriod) phase = 0;
        }
        return true;
      }
      const auto output = word_at(0, std::uintptr_t{});
      const auto count = word_at(8, std::size_t{});
      const auto ranks = word_at(16, int{});
      const auto counter = word_at(24, std::uintptr_t{});
      if (!reaches(output, count * 4) || !reaches(counter, 8)) return illegal();
      // The expected sum of each phase, added in rank order as the kernel adds.
      std::array<float, kPeriod> expected{};
      for (std::size_t p = 0; p < kPeriod; ++p) {
        for (int r = 0; r < ranks; ++r) expected[p] += static_cast<float>((p + phase_of(r)) % kPeriod + 1);
      }
      std::uint64_t mismatches = 0;
      std::size_t phase = 0;
      for (std::size_t i = 0; i < count; ++i) {
        if (!(reinterpret_cast<const float*>(output)[i] == expected[phase])) ++mismatches;
        if (++phase == kPeriod) phase = 0;
      }
      *reinterpret_cast<std::uint64_t*>(counter) += mismatches;
      return true;
    }
  }
  return true;  // every Kernel is handled above; this only quiets -Wreturn-type
}

std::vector<unsigned char> pack_arguments(Kernel kernel, void** arguments) {
  // Each parameter's bytes, in kernels.cu's order; 0 past the last. Each
  // starts at 8 * its index: a 4-byte parameter is last or followed by an
  // 8-byte one, which C aligns to the next 8.
  using Sizes = std::array<std::size_t, 4>;
  static const std::map<Kernel, Sizes> sizes = {
      {Kernel::kFillPattern, {8, 8, 4, 0}},
      {Kernel::kCountMismatches, {8, 8, 4, 8}},
      {Kernel::kPoison, {8, 8, 0, 0}},
      {Kernel::kSmCopy, {8, 8, 8, 0}},
      {Kernel::kLatch, {8, 8, 8, 0}},
      {Kernel::kFillRank, {8, 8, 8, 4}},
      {Kernel::kCountSumMismatches, {8, 8, 4, 8}},
  };
  std::vector<unsigned char> packed(32, 0);
  const Sizes& of_kernel = sizes.at(kernel);
  for (std::size_t i = 0; i < of_kernel.size() && of_kernel[i] != 0; ++i) {
    std::memcpy(packed.data() + 8 * i, arguments[i], of_kernel[i]);
  }
  return packed;
}

}  // namespace pcieval::sim
