// MarkerScanner on its own: every marker found wherever it falls in a
// 16-byte block (the vector loop and its bytewise tail), and anchors that
// share a bucket passing nothing but their own markers. The kernel log's own
// markers are tested through parse_kernel_log (KernelLog.EveryMarkerAnywhere).
#include "ingest/detail/marker_scanner.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace pcieval {
namespace {

// "dw" and "bw" differ in the first byte's low nibble only; nine distinct
// anchors put a ninth ("bw") in the first one's bucket, as the kernel log's do.
constexpr std::array kTestMarkers{
    ScanMarker{"bandwidth", 3},  // "dw"
    ScanMarker{"aa=", 1},        // "a="
    ScanMarker{"Crp", 1},        // "rp"
    ScanMarker{"SDx", 0},        // "SD"
    ScanMarker{"Xi", 0},         // "Xi"
    ScanMarker{"VRx", 0},        // "VR"
    ScanMarker{"R:", 0},         // "R:"
    ScanMarker{"k=k", 0},        // "k="
    ScanMarker{"bwx", 0},        // "bw"
};
constexpr MarkerScanner kScanner{kTestMarkers};

TEST(MarkerScanner, FindsEveryMarkerAtEveryOffset) {
  for (const ScanMarker& marker : kTestMarkers) {
    for (std::size_t offset = 0; offset < 40; ++offset) {
      const std::string text = std::string(offset, '.') + std::string(marker.text) + std::string(40, '.');
      EXPECT_EQ(kScanner.next(text, 0), offset + marker.anchor) << marker.text << " at " << offset;
      // Past it: nothing more.
      EXPECT_EQ(kScanner.next(text, offset + marker.anchor + 1), text.size()) << marker.text << " at " << offset;
    }
  }
}

TEST(MarkerScanner, AnAnchorAloneOrABucketMixtureIsNoMarker) {
  // "dw" without "bandwidth" around it; "bw" without "x" after it; "dw"'s and
  // "bw"'s bucket also passes the nibble mixtures "bw"/"dw" only, and "fw"
  // shares no bucket bit.
  for (const std::string text : {std::string(50, '.') + "dw", std::string(33, '-') + "bw." + std::string(20, '-'),
                                 std::string(17, ' ') + "fw fw fw" + std::string(17, ' '), std::string("ba")}) {
    EXPECT_EQ(kScanner.next(text, 0), text.size()) << text;
  }
}

TEST(MarkerScanner, EmptyAndShortTexts) {
  EXPECT_EQ(kScanner.next("", 0), 0U);
  EXPECT_EQ(kScanner.next("X", 0), 1U);
  EXPECT_EQ(kScanner.next("Xi", 0), 0U);
  EXPECT_EQ(kScanner.next("Xi", 1), 2U);
}

}  // namespace
}  // namespace pcieval
