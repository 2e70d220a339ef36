#include "ingest/detail/stamped_lines.hpp"

#include <bit>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pcieval {
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
// The sum of the 32 byte counters of `passed`.
__attribute__((target("avx2"))) std::size_t sum_of_lanes(__m256i passed) {
  const __m256i sums = _mm256_sad_epu8(passed, _mm256_setzero_si256());
  const __m128i pair = _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
  return static_cast<std::size_t>(_mm_cvtsi128_si64(pair)) + static_cast<std::size_t>(_mm_extract_epi64(pair, 1));
}

// The SSE2 loop below, thirty-two bytes at a time: the section split passes
// a kernel log's stamped lines here when no reader walks them
// (split_capture_sections without a walker), and the reader the lines up to
// a marker already found. Diagnose's own walk over a large log counts lines
// in the marker scan itself (MarkerScanner::next_or_unstamped_line). Returns
// the start of the first unstamped line, or text.size() with `at` where the
// blocks ended.
__attribute__((target("avx2"))) std::size_t next_unstamped_avx2(std::string_view text, std::size_t& at,
                                                                std::size_t& lines) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const __m256i newline = _mm256_set1_epi8('\n');
  const __m256i bracket = _mm256_set1_epi8('[');
  const __m256i zero = _mm256_setzero_si256();
  __m256i passed = zero;
  int blocks = 0;
  for (; at + 33 <= text.size(); at += 32) {
    const __m256i newlines =
        _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + at)), newline);
    const __m256i stamped =
        _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + at + 1)), bracket);
    const auto unstamped = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_andnot_si256(stamped, newlines)));
    if (unstamped != 0) {
      lines += sum_of_lanes(passed);
      const int offset = std::countr_zero(unstamped);
      const std::uint64_t before =
          static_cast<std::uint32_t>(_mm256_movemask_epi8(newlines)) & ((std::uint64_t{2} << offset) - 1U);
      lines += static_cast<std::size_t>(std::popcount(before));
      return at + static_cast<std::size_t>(offset) + 1;
    }
    passed = _mm256_sub_epi8(passed, newlines);
    if (++blocks == 255) {
      lines += sum_of_lanes(passed);
      passed = zero;
      blocks = 0;
    }
  }
  lines += sum_of_lanes(passed);
  return text.size();
}
#endif

}  // namespace

std::size_t next_unstamped_line(std::string_view text, std::size_t start, std::size_t& lines) {
  std::size_t at = start;
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  if (avx2) {
    if (const std::size_t found = next_unstamped_avx2(text, at, lines); found != text.size()) return found;
  }
#endif
#if defined(__SSE2__)
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i bracket = _mm_set1_epi8('[');
  const __m128i zero = _mm_setzero_si128();
  // Newlines passed, per byte lane (a compare is 0 or -1, subtracted), added
  // to `lines` before a lane can wrap: baseline x86-64 has no popcnt, and a
  // call per block cost more than the scan.
  __m128i passed = zero;
  int blocks = 0;
  const auto flush = [&] {
    const __m128i sums = _mm_sad_epu8(passed, zero);
    lines += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) + static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
    passed = zero;
    blocks = 0;
  };
  // Each block also reads the byte after it, so it stops 16 + 1 from the end.
  for (; at + 17 <= text.size(); at += 16) {
    const __m128i newlines = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + at)), newline);
    const __m128i stamped = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + at + 1)), bracket);
    const auto unstamped = static_cast<unsigned>(_mm_movemask_epi8(_mm_andnot_si128(stamped, newlines)));
    if (unstamped != 0) {
      flush();
      const int offset = std::countr_zero(unstamped);
      const auto before = static_cast<unsigned>(_mm_movemask_epi8(newlines)) & ((2U << offset) - 1U);
      lines += static_cast<std::size_t>(std::popcount(before));
      return at + static_cast<std::size_t>(offset) + 1;
    }
    passed = _mm_sub_epi8(passed, newlines);
    if (++blocks == 255) flush();
  }
  flush();
#endif
  for (; at < text.size(); ++at) {
    if (text[at] != '\n') continue;
    ++lines;
    if (at + 1 == text.size() || text[at + 1] != '[') return at + 1;
  }
  // The last line has no newline: it is passed too.
  if (start < text.size() && text.back() != '\n') ++lines;
  return text.size();
}

}  // namespace pcieval
