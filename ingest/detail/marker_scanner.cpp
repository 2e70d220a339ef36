#include "ingest/detail/marker_scanner.hpp"

#include <array>
#include <cstring>

#include "ingest/detail/stamped_lines.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace pcieval {
namespace {

bool anchor_at(const MarkerScanner::AnchorTable& table, const unsigned char* bytes, std::size_t at) {
  const unsigned key = unsigned{bytes[at]} << 8 | bytes[at + 1];
  return (table[key >> 6] >> (key & 63) & 1) != 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same search sixteen (SSSE3) or thirty-two (AVX2) bytes at a time: each
// distinct anchor has a bucket bit, and the four nibble tables give the
// buckets each byte can belong to. A position whose four lookups share a
// bucket is a candidate; with one anchor per bucket that is exact, and a
// bucket that holds two anchors can also pass their nibbles' mixtures, which
// `verify` (the anchor table, then the markers in full) rejects. Every
// candidate of a block is verified before the next block is loaded: in a log
// where an anchor starts one line in five ("type=" of audit lines, "NVRM:"),
// returning to the caller at each one cost more than the scan. About seven
// times the speed of the bytewise loop with SSSE3 (every x86-64 server CPU
// since 2006), twice that again with AVX2; the choice is made at run time.

// The buckets each byte of `block` can belong to, by the two nibble tables.
__attribute__((target("ssse3"))) __m128i buckets_of(__m128i block, __m128i low, __m128i high) {
  const __m128i low_nibble = _mm_set1_epi8(0x0f);
  const __m128i low_part = _mm_shuffle_epi8(low, _mm_and_si128(block, low_nibble));
  const __m128i high_part = _mm_shuffle_epi8(high, _mm_and_si128(_mm_srli_epi16(block, 4), low_nibble));
  return _mm_and_si128(low_part, high_part);
}

__attribute__((target("ssse3"))) __m128i load_table(const std::array<std::uint8_t, 16>& nibbles) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(nibbles.data()));
}

// The first verified candidate among the set bits of `candidates` (offsets
// from `at`), or `none`.
template <class Verify>
inline std::size_t first_verified(std::uint32_t candidates, std::size_t at, std::size_t none, const Verify& verify) {
  for (; candidates != 0; candidates &= candidates - 1) {
    const std::size_t position = at + static_cast<std::size_t>(__builtin_ctz(candidates));
    if (verify(position)) return position;
  }
  return none;
}

template <class Verify>
__attribute__((target("ssse3"))) std::size_t next_ssse3(const MarkerScanner::NibbleTables& nibbles,
                                                        const unsigned char* bytes, std::size_t size, std::size_t& at,
                                                        const Verify& verify) {
  const __m128i first_low = load_table(nibbles.first_low);
  const __m128i first_high = load_table(nibbles.first_high);
  const __m128i second_low = load_table(nibbles.second_low);
  const __m128i second_high = load_table(nibbles.second_high);
  // Each block reads 17 bytes: the second anchor byte of its last position.
  for (; at + 17 <= size; at += 16) {
    const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + at));
    const __m128i second = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + at + 1));
    const __m128i both =
        _mm_and_si128(buckets_of(first, first_low, first_high), buckets_of(second, second_low, second_high));
    const auto none = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(both, _mm_setzero_si128())));
    if (none == 0xffffU) continue;
    if (const std::size_t found = first_verified(~none & 0xffffU, at, size, verify); found != size) return found;
  }
  return size;
}

__attribute__((target("avx2"))) __m256i buckets_of(__m256i block, __m256i low, __m256i high) {
  const __m256i low_nibble = _mm256_set1_epi8(0x0f);
  const __m256i low_part = _mm256_shuffle_epi8(low, _mm256_and_si256(block, low_nibble));
  const __m256i high_part = _mm256_shuffle_epi8(high, _mm256_and_si256(_mm256_srli_epi16(block, 4), low_nibble));
  return _mm256_and_si256(low_part, high_part);
}

// pshufb looks up within each 128-bit lane: the table in both.
__attribute__((target("avx2"))) __m256i load_table_twice(const std::array<std::uint8_t, 16>& nibbles) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(nibbles.data())));
}

template <class Verify>
__attribute__((target("avx2"))) std::size_t next_avx2(const MarkerScanner::NibbleTables& nibbles,
                                                      const unsigned char* bytes, std::size_t size, std::size_t& at,
                                                      const Verify& verify) {
  const __m256i first_low = load_table_twice(nibbles.first_low);
  const __m256i first_high = load_table_twice(nibbles.first_high);
  const __m256i second_low = load_table_twice(nibbles.second_low);
  const __m256i second_high = load_table_twice(nibbles.second_high);
  for (; at + 33 <= size; at += 32) {
    const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + at));
    const __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + at + 1));
    const __m256i both =
        _mm256_and_si256(buckets_of(first, first_low, first_high), buckets_of(second, second_low, second_high));
    const auto none = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(both, _mm256_setzero_si256())));
    if (none == 0xffffffffU) continue;
    if (const std::size_t found = first_verified(~none, at, size, verify); found != size) return found;
  }
  return size;
}

// next_avx2 that also stops at a line that does not begin with '[' and
// counts the newlines it passes: the block's newlines and the bytes
// after them come from the two loads the anchor search makes anyway.
// Returns `size` with `at` where the blocks ended when it found neither.
template <class Verify>
__attribute__((target("avx2,popcnt"))) std::size_t next_or_line_avx2(const MarkerScanner::NibbleTables& nibbles,
                                                                     const unsigned char* bytes, std::size_t size,
                                                                     std::size_t& at, std::size_t& lines,
                                                                     const Verify& verify) {
  const __m256i first_low = load_table_twice(nibbles.first_low);
  const __m256i first_high = load_table_twice(nibbles.first_high);
  const __m256i second_low = load_table_twice(nibbles.second_low);
  const __m256i second_high = load_table_twice(nibbles.second_high);
  const __m256i newline = _mm256_set1_epi8('\n');
  const __m256i bracket = _mm256_set1_epi8('[');
  for (; at + 33 <= size; at += 32) {
    const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + at));
    const __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + at + 1));
    const __m256i both =
        _mm256_and_si256(buckets_of(first, first_low, first_high), buckets_of(second, second_low, second_high));
    const auto none = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(both, _mm256_setzero_si256())));
    const auto newlines = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(first, newline)));
    const auto headed = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(second, bracket)));
    // Bit i: byte i is a newline and the line after it, from i + 1, is
    // not stamped.
    const std::uint32_t other = newlines & ~headed;
    if ((~none | other) == 0) {
      lines += static_cast<std::size_t>(__builtin_popcount(newlines));
      continue;
    }
    // Candidates up to that newline: a marker anchored at the line start
    // after it counts as that line's.
    const std::uint64_t through = other == 0 ? ~std::uint64_t{0} : (std::uint64_t{2} << __builtin_ctz(other)) - 1;
    for (std::uint32_t candidates = ~none & static_cast<std::uint32_t>(through); candidates != 0;
         candidates &= candidates - 1) {
      const int offset = __builtin_ctz(candidates);
      if (verify(at + static_cast<std::size_t>(offset))) {
        lines += static_cast<std::size_t>(__builtin_popcount(newlines & ((std::uint32_t{1} << offset) - 1U)));
        return at + static_cast<std::size_t>(offset);
      }
    }
    if (other != 0) {
      lines += static_cast<std::size_t>(__builtin_popcount(newlines & static_cast<std::uint32_t>(through)));
      return at + static_cast<std::size_t>(__builtin_ctz(other)) + 1;
    }
    lines += static_cast<std::size_t>(__builtin_popcount(newlines));
  }
  return size;
}

// The positions of `text` (at most kShortText bytes) where an anchor may
// start, bit i of word i / 32 for position i: the search of next_avx2 over
// a copy padded with zeros (no anchor byte), so a line needs no bytewise
// tail. Positions past the second to last byte are cleared.
constexpr std::size_t kShortText = 256;
__attribute__((target("avx2"))) void candidates_avx2(const MarkerScanner::NibbleTables& nibbles, std::string_view text,
                                                     std::array<std::uint32_t, kShortText / 32>& words) {
  alignas(32) std::array<unsigned char, kShortText + 64> padded;
  std::memcpy(padded.data(), text.data(), text.size());
  std::memset(padded.data() + text.size(), 0, 64);
  const __m256i first_low = load_table_twice(nibbles.first_low);
  const __m256i first_high = load_table_twice(nibbles.first_high);
  const __m256i second_low = load_table_twice(nibbles.second_low);
  const __m256i second_high = load_table_twice(nibbles.second_high);
  for (std::size_t at = 0, word = 0; at < text.size(); at += 32, ++word) {
    const __m256i first = _mm256_load_si256(reinterpret_cast<const __m256i*>(padded.data() + at));
    const __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(padded.data() + at + 1));
    const __m256i both =
        _mm256_and_si256(buckets_of(first, first_low, first_high), buckets_of(second, second_low, second_high));
    words[word] = ~static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(both, _mm256_setzero_si256())));
    if (at + 32 >= text.size()) {
      // An anchor is two bytes: none starts at the last one.
      const std::size_t valid = text.size() - 1 - at;
      words[word] &= valid >= 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << valid) - 1U;
    }
  }
}
#endif

}  // namespace

bool MarkerScanner::marker_at(std::string_view text, std::size_t at) const {
  for (const ScanMarker& marker : markers_) {
    if (text[at] != marker.text[marker.anchor] || text[at + 1] != marker.text[marker.anchor + 1]) continue;
    if (at < marker.anchor) continue;
    const std::size_t start = at - marker.anchor;
    if (text.size() - start >= marker.text.size() &&
        std::memcmp(text.data() + start, marker.text.data(), marker.text.size()) == 0) {
      return true;
    }
  }
  return false;
}

std::size_t MarkerScanner::next(std::string_view text, std::size_t from) const {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  const auto verify = [&](std::size_t at) { return anchor_at(anchor_table_, bytes, at) && marker_at(text, at); };
  std::size_t at = from;
#if defined(__x86_64__) && defined(__GNUC__)
  static const int level = __builtin_cpu_supports("avx2") != 0 ? 2 : __builtin_cpu_supports("ssse3") != 0 ? 1 : 0;
  if (level == 2) {
    if (const std::size_t found = next_avx2(nibbles_, bytes, size, at, verify); found != size) return found;
  } else if (level == 1) {
    if (const std::size_t found = next_ssse3(nibbles_, bytes, size, at, verify); found != size) return found;
  }
#endif
  // The portable loop, and the tail of the vector ones.
  for (; at + 1 < size; ++at) {
    if (verify(at)) return at;
  }
  return size;
}

std::uint64_t MarkerScanner::markers_in(std::string_view text) const {
  std::uint64_t held = 0;
  // Every marker anchored at `at`, looked at in full.
  const auto mark = [&](std::size_t at) {
    for (std::size_t i = 0; i < markers_.size() && i < 64; ++i) {
      const ScanMarker& marker = markers_[i];
      if (text[at] != marker.text[marker.anchor] || text[at + 1] != marker.text[marker.anchor + 1]) continue;
      if (at < marker.anchor || text.size() - (at - marker.anchor) < marker.text.size()) continue;
      if (std::memcmp(text.data() + at - marker.anchor, marker.text.data(), marker.text.size()) == 0) {
        held |= std::uint64_t{1} << i;
      }
    }
  };
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  if (avx2 && text.size() >= 2 && text.size() <= kShortText) {
    std::array<std::uint32_t, kShortText / 32> words{};
    candidates_avx2(nibbles_, text, words);
    for (std::size_t word = 0; word < words.size(); ++word) {
      for (std::uint32_t bits = words[word]; bits != 0; bits &= bits - 1) mark(word * 32 + __builtin_ctz(bits));
    }
    return held;
  }
#endif
  for (std::size_t at = next(text, 0); at < text.size(); at = next(text, at + 1)) mark(at);
  return held;
}

std::size_t MarkerScanner::next_or_unstamped_line(std::string_view text, std::size_t from, std::size_t& lines) const {
  const std::size_t size = text.size();
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("popcnt") != 0;
  if (avx2) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const auto verify = [&](std::size_t at) { return anchor_at(anchor_table_, bytes, at) && marker_at(text, at); };
    std::size_t at = from;
    std::size_t passed = 0;
    if (const std::size_t found = next_or_line_avx2(nibbles_, bytes, size, at, passed, verify); found != size) {
      lines += passed;
      return found;
    }
    // The tail, byte by byte.
    for (; at < size; ++at) {
      if (at + 1 < size && verify(at)) {
        lines += passed;
        return at;
      }
      if (bytes[at] != '\n') continue;
      ++passed;
      if (at + 1 < size && text[at + 1] != '[') {
        lines += passed;
        return at + 1;
      }
    }
    if (from < size && text.back() != '\n') ++passed;
    lines += passed;
    return size;
  }
#endif
  return next_then_unstamped_line(text, from, lines);
}

std::size_t MarkerScanner::next_then_unstamped_line(std::string_view text, std::size_t from, std::size_t& lines) const {
  const std::size_t size = text.size();
  const std::size_t marker = next(text, from);
  std::size_t marker_line = size;
  if (marker < size) {
    const std::size_t newline = text.rfind('\n', marker);
    marker_line = newline == std::string_view::npos || newline < from ? from : newline + 1;
  }
  const std::size_t stop = next_unstamped_line(text.substr(0, marker_line), from, lines);
  if (stop < marker_line || marker == size) return stop;
  // The marker's own line, when it is not stamped.
  if (marker_line > from && text[marker_line] != '[') return marker_line;
  return marker;
}

}  // namespace pcieval
