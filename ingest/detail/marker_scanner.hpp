// Finding any of a few fixed substrings ("markers") in a large text at
// memory speed: the kernel log reader's first pass (kernel_log.cpp), where
// almost every line of a pasted month of journal holds none of them.
//
// Each marker names two adjacent bytes of its text as its anchor. One pass
// looks for every anchor at once, thirty-two bytes at a time where the CPU
// has AVX2 and sixteen where it has SSSE3 (as Hyperscan's and ripgrep's
// "Teddy" does), byte by byte otherwise, and only a position that holds an
// anchor is compared with the markers in full. Anchors rare in the text make the scan seldom stop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace pcieval {

struct ScanMarker {
  std::string_view text;
  std::size_t anchor = 0;  // offset of the two anchor bytes in `text`
};

class MarkerScanner {
 public:
  // Builds the anchor tables at compile time where the markers are constants.
  // REQUIRES: anchor + 2 <= text.size() for every marker; `markers` outlives
  // the scanner.
  constexpr explicit MarkerScanner(std::span<const ScanMarker> markers) : markers_(markers) {
    // Distinct anchors in marker order, each with a bucket bit. The first
    // eight have a bucket each; a ninth and later one joins the bucket where
    // it adds the fewest byte pairs that are no anchor: a bucket passes every
    // mixture of its anchors' nibbles, which the full comparison then
    // rejects, at a cost per position. ("bw" joins "dw", which passes exactly
    // those two; first come first served once put "bw" with "y=", whose
    // mixture "r=" is in one line of five of a GPU node's log: "idVendor=",
    // "major=".)
    std::array<unsigned, 64> seen{};  // past 64 distinct anchors, buckets are only shared more
    std::array<int, 8> anchors_in{};  // distinct anchors per bucket
    std::size_t distinct = 0;
    for (const ScanMarker& marker : markers_) {
      const unsigned char first = anchor_byte(marker, 0);
      const unsigned char second = anchor_byte(marker, 1);
      const unsigned key = anchor_key(first, second);
      anchor_table_[key >> 6] |= std::uint64_t{1} << (key & 63);
      bool known = false;
      for (std::size_t i = 0; i < distinct && i < seen.size(); ++i) known = known || seen[i] == key;
      if (known) continue;
      if (distinct < seen.size()) seen[distinct] = key;
      std::size_t bucket = distinct;
      if (distinct >= 8) {
        int fewest = -1;
        for (std::size_t b = 0; b < 8; ++b) {
          const int extra = mixtures_with(b, first, second) - (anchors_in[b] + 1);
          if (fewest < 0 || extra < fewest) {
            fewest = extra;
            bucket = b;
          }
        }
      }
      ++distinct;
      ++anchors_in[bucket];
      const auto bit = static_cast<std::uint8_t>(1U << bucket);
      nibbles_.first_low[first & 15U] |= bit;
      nibbles_.first_high[first >> 4U] |= bit;
      nibbles_.second_low[second & 15U] |= bit;
      nibbles_.second_high[second >> 4U] |= bit;
    }
  }

  // A position inside the first marker at or after `from` (where its anchor
  // starts), or text.size() when there is none.
  [[nodiscard]] std::size_t next(std::string_view text, std::size_t from) const;

  // Bit i set when markers[i] is in `text` (the first 64 markers): one scan
  // of a line that a dozen substring searches asked the same of, one by one.
  [[nodiscard]] std::uint64_t markers_in(std::string_view text) const;

  // next(), or the start of a line after `from`'s that does not begin with
  // '[' (stamped_lines.hpp), whichever comes first (the line's start when
  // both are there); adds to `lines` the newlines before the position
  // returned, and the last line when it returns text.size() and the text
  // does not end with a newline. `from` begins a line. The kernel log
  // reader's walk over a dmesg log's stamped lines: it needs the next marker
  // and the lines before it, and a scan for each walked the log twice.
  [[nodiscard]] std::size_t next_or_unstamped_line(std::string_view text, std::size_t from, std::size_t& lines) const;
  // The same in two scans, next() then next_unstamped_line() up to the
  // marker's line: where the CPU has no AVX2.
  [[nodiscard]] std::size_t next_then_unstamped_line(std::string_view text, std::size_t from, std::size_t& lines) const;

  // The SSSE3 search's lookup tables: for the low and the high nibble of the
  // first and the second anchor byte, the buckets that nibble can belong to.
  struct NibbleTables {
    std::array<std::uint8_t, 16> first_low{}, first_high{}, second_low{}, second_high{};
  };
  // Bit k set when some marker's anchor is the byte pair k: 8 KiB, stays in L1.
  using AnchorTable = std::array<std::uint64_t, 1024>;

 private:
  static constexpr unsigned char anchor_byte(const ScanMarker& marker, std::size_t which) {
    return static_cast<unsigned char>(marker.text[marker.anchor + which]);
  }
  static constexpr unsigned anchor_key(unsigned char first, unsigned char second) {
    return unsigned{first} << 8 | second;
  }
  // The byte pairs bucket `bucket` would pass with the anchor (first,
  // second) added: the product of the nibbles it would hold at each place.
  [[nodiscard]] constexpr int mixtures_with(std::size_t bucket, unsigned char first, unsigned char second) const {
    const auto count = [bucket](const std::array<std::uint8_t, 16>& table, unsigned nibble) {
      int n = 0;
      for (unsigned i = 0; i < 16; ++i) n += (i == nibble || ((table[i] >> bucket) & 1U) != 0) ? 1 : 0;
      return n;
    };
    return count(nibbles_.first_low, first & 15U) * count(nibbles_.first_high, first >> 4U) *
           count(nibbles_.second_low, second & 15U) * count(nibbles_.second_high, second >> 4U);
  }

  // True when a marker whose anchor sits at `at` is there in full.
  [[nodiscard]] bool marker_at(std::string_view text, std::size_t at) const;

  std::span<const ScanMarker> markers_;
  AnchorTable anchor_table_{};
  NibbleTables nibbles_{};
};

}  // namespace pcieval
