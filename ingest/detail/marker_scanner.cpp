#include "ingest/detail/marker_scanner.hpp"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace pcieval {
namespace {

bool anchor_at(const MarkerScanner::AnchorTable& table, const unsigned char* bytes, std::size_t at) {
  const unsigned key = unsigned{bytes[at]} << 8 | bytes[at + 1];
  return (table[key >> 6] >> (key & 63) & 1) != 0;
}

// The first anchor at or after `from`, or `size`: the portable loop, and the
// tail of the vector one.
std::size_t next_anchor_bytewise(const MarkerScanner::AnchorTable& table, const unsigned char* bytes, std::size_t size,
                                 std::size_t from) {
  for (std::size_t at = from; at + 1 < size; ++at) {
    if (anchor_at(table, bytes, at)) return at;
  }
  return size;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same search sixteen bytes at a time: each distinct anchor has a bucket
// bit, and the four nibble tables give the buckets each byte can belong to. A
// position whose four lookups share a bucket is a candidate; with one anchor
// per bucket that is exact, and a bucket that holds two anchors can also pass
// their nibbles' mixtures, which marker_at() then rejects. About seven times
// the speed of the bytewise loop; pshufb needs SSSE3 (every x86-64 server
// CPU since 2006), so the choice is made at run time.

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

__attribute__((target("ssse3"))) std::size_t next_anchor_ssse3(const MarkerScanner::NibbleTables& nibbles,
                                                               const MarkerScanner::AnchorTable& table,
                                                               const unsigned char* bytes, std::size_t size,
                                                               std::size_t from) {
  const __m128i first_low = load_table(nibbles.first_low);
  const __m128i first_high = load_table(nibbles.first_high);
  const __m128i second_low = load_table(nibbles.second_low);
  const __m128i second_high = load_table(nibbles.second_high);
  std::size_t at = from;
  // Each block reads 17 bytes: the second anchor byte of its last position.
  for (; at + 17 <= size; at += 16) {
    const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + at));
    const __m128i second = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + at + 1));
    const __m128i both =
        _mm_and_si128(buckets_of(first, first_low, first_high), buckets_of(second, second_low, second_high));
    const auto none = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(both, _mm_setzero_si128())));
    if (none != 0xffffU) return at + static_cast<std::size_t>(__builtin_ctz(~none & 0xffffU));
  }
  return next_anchor_bytewise(table, bytes, size, at);
}
#endif

}  // namespace

std::size_t MarkerScanner::next_anchor(const unsigned char* bytes, std::size_t size, std::size_t from) const {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool ssse3 = __builtin_cpu_supports("ssse3") != 0;
  if (ssse3) return next_anchor_ssse3(nibbles_, anchor_table_, bytes, size, from);
#endif
  return next_anchor_bytewise(anchor_table_, bytes, size, from);
}

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
  for (std::size_t at = next_anchor(bytes, text.size(), from); at < text.size();
       at = next_anchor(bytes, text.size(), at + 1)) {
    if (marker_at(text, at)) return at;
  }
  return text.size();
}

}  // namespace pcieval
