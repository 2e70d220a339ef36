#include "model/link.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/path.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;

struct SpeedCase {
  const char* text;
  int generation;
};

class SysfsSpeed : public ::testing::TestWithParam<SpeedCase> {};

TEST_P(SysfsSpeed, ParsesEveryKernelSpelling) {
  const auto gen = parse_sysfs_link_speed(GetParam().text);
  ASSERT_TRUE(gen.ok()) << gen.error().message;
  EXPECT_EQ(generation_number(*gen), GetParam().generation);
}

// PCIE-FACTS 4.1: pci_speed_string() since 5.7, PCIE_SPEED2STR before.
INSTANTIATE_TEST_SUITE_P(AllKernels, SysfsSpeed,
                         ::testing::Values(SpeedCase{"2.5 GT/s PCIe\n", 1}, SpeedCase{"5.0 GT/s PCIe\n", 2},
                                           SpeedCase{"8.0 GT/s PCIe\n", 3}, SpeedCase{"16.0 GT/s PCIe\n", 4},
                                           SpeedCase{"32.0 GT/s PCIe\n", 5}, SpeedCase{"64.0 GT/s PCIe\n", 6},
                                           SpeedCase{"2.5 GT/s\n", 1}, SpeedCase{"5 GT/s\n", 2},
                                           SpeedCase{"8 GT/s\n", 3}, SpeedCase{"16 GT/s\n", 4}, SpeedCase{"32 GT/s", 5},
                                           SpeedCase{"128.0 GT/s PCIe", 7}));

TEST(SysfsSpeed, UnknownIsAnErrorThatSaysSo) {
  for (const char* text : {"Unknown\n", "Unknown speed\n"}) {
    const auto gen = parse_sysfs_link_speed(text);
    ASSERT_FALSE(gen.ok()) << text;
    EXPECT_NE(gen.error().message.find("Unknown"), std::string::npos);
  }
}

TEST(SysfsSpeed, GarbageIsRejectedNotGuessed) {
  for (const char* text : {"", "fast", "16 GB/s", "16.0GT/s", "2.50 GT/s PCIe", "15.0 GT/s PCIe", "GT/s"}) {
    EXPECT_FALSE(parse_sysfs_link_speed(text).ok()) << text;
  }
}

TEST(PcieGen, RatesAndNames) {
  EXPECT_DOUBLE_EQ(transfer_rate_gts(PcieGen::kGen1), 2.5);
  EXPECT_DOUBLE_EQ(transfer_rate_gts(PcieGen::kGen5), 32.0);
  EXPECT_DOUBLE_EQ(transfer_rate_gts(PcieGen::kGen6), 64.0);
  EXPECT_EQ(to_string(PcieGen::kGen4), "Gen4");
  EXPECT_EQ(*gen_from_gts(16.0), PcieGen::kGen4);
  EXPECT_FALSE(gen_from_gts(10.0).ok());
  EXPECT_FALSE(gen_from_number(0).ok());
  EXPECT_FALSE(gen_from_number(8).ok());
}

TEST(LinkWidth, OnlySpecWidths) {
  for (int lanes : {1, 2, 4, 8, 12, 16, 32}) EXPECT_TRUE(is_valid_link_width(lanes)) << lanes;
  for (int lanes : {0, 3, 6, 24, 63, 64, -1}) EXPECT_FALSE(is_valid_link_width(lanes)) << lanes;
}

TEST(LinkState, LowerOfTakesSpeedAndWidthIndependently) {
  const LinkState gen5_x8{PcieGen::kGen5, 8};
  const LinkState gen4_x16{PcieGen::kGen4, 16};
  EXPECT_EQ(lower_of(gen5_x8, gen4_x16), (LinkState{PcieGen::kGen4, 8}));
  EXPECT_EQ(to_string(lower_of(gen5_x8, gen4_x16)), "Gen4 x8");
}

PortLinkReading port(PcieGen max_gen, int max_width, PcieGen cur_gen, int cur_width) {
  return PortLinkReading::known(LinkState{max_gen, max_width}, LinkState{cur_gen, cur_width});
}

TEST(Link, ExpectedIsTheLowerCapabilityOfBothEnds) {
  // An H100 PCIe (Gen5 x16) in a Gen4 x16 root port: Gen4 x16 is all it can do.
  Link link;
  link.downstream_end = port(PcieGen::kGen5, 16, PcieGen::kGen4, 16);
  link.upstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);
  ASSERT_TRUE(link.expected().ok());
  EXPECT_EQ(*link.expected(), (LinkState{PcieGen::kGen4, 16}));
  EXPECT_EQ(*link.negotiated(), (LinkState{PcieGen::kGen4, 16}));
}

TEST(Link, UnknownCapabilityMakesExpectedUnknownWithTheReason) {
  Link link;
  link.downstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);
  link.upstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);
  link.upstream_end.max_speed = make_error("kernel reports link speed 'Unknown'");
  ASSERT_FALSE(link.expected().ok());
  EXPECT_NE(link.expected().error().message.find("Unknown"), std::string::npos);
}

TEST(Link, JoinedStatesReadAsAList) {
  EXPECT_EQ(join_states({}), "");
  EXPECT_EQ(join_states({LinkState{PcieGen::kGen4, 8}}), "Gen4 x8");
  EXPECT_EQ(join_states({LinkState{PcieGen::kGen3, 16}, LinkState{PcieGen::kGen4, 8}, LinkState{PcieGen::kGen5, 4}}),
            "Gen3 x16, Gen4 x8 or Gen5 x4");
}

// Issue 29, item 1: a broken reading at either end was covered by the other
// end's, and a disagreement went to the downstream end. Neither is a reading.
TEST(Link, ABrokenReadingAtEitherEndLeavesTheStateUnknownNamingTheEnd) {
  Link link;
  link.downstream = *parse_pci_address("0000:84:00.0");
  link.upstream = *parse_pci_address("0000:82:08.0");
  link.downstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);
  link.upstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);
  link.downstream_end.current_width = make_error("current_link_width: device not responding (reads as 0xffff)");
  ASSERT_FALSE(link.negotiated().ok());
  EXPECT_EQ(link.negotiated().error().message,
            "negotiated state of 0000:84:00.0 unknown: current_link_width: device not responding (reads as 0xffff)");
  EXPECT_FALSE(link.disagreement());

  link.downstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);
  link.upstream_end.current_speed = make_error("current_link_speed: unrecognised link speed '999 GT/s'");
  ASSERT_FALSE(link.negotiated().ok());
  EXPECT_THAT(link.negotiated().error().message, HasSubstr("0000:82:08.0"));
  EXPECT_THAT(link.negotiated().error().message, HasSubstr("'999 GT/s'"));
}

TEST(Link, EndsThatDisagreeAreNamedBothAndNeverSettled) {
  Link link;
  link.downstream = *parse_pci_address("0000:84:00.0");
  link.upstream = *parse_pci_address("0000:82:08.0");
  link.downstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);
  link.upstream_end = port(PcieGen::kGen4, 16, PcieGen::kGen4, 8);
  ASSERT_FALSE(link.negotiated().ok());
  EXPECT_EQ(link.negotiated().error().message,
            "the two ends disagree: 0000:84:00.0 reads Gen4 x16, 0000:82:08.0 reads Gen4 x8");
  ASSERT_TRUE(link.disagreement());
  EXPECT_EQ(link.disagreement()->first, (LinkState{PcieGen::kGen4, 16}));
  EXPECT_EQ(link.disagreement()->second, (LinkState{PcieGen::kGen4, 8}));
}

TEST(Link, AnEndWithoutLinkRegistersLeavesTheOtherEndsReading) {
  // A PCIe device below a bridge that has no PCIe capability: only the
  // device's end describes the link, and nothing contradicts it.
  Link link;
  link.downstream = *parse_pci_address("0000:01:00.0");
  link.upstream = *parse_pci_address("0000:00:1e.0");
  link.downstream_end = port(PcieGen::kGen3, 16, PcieGen::kGen3, 8);
  link.upstream_end = PortLinkReading::without_link("0000:00:1e.0");
  EXPECT_TRUE(link.upstream_end.has_no_link());
  ASSERT_TRUE(link.negotiated().ok());
  EXPECT_EQ(*link.negotiated(), (LinkState{PcieGen::kGen3, 8}));
  EXPECT_FALSE(link.expected().ok()) << "the port's capability is still unknown";
  // The words survive a results document, which prefixes the attribute.
  link.upstream_end.max_speed = make_error("max_link_speed: 0000:00:1e.0 exposes no PCIe link attributes");
  EXPECT_TRUE(link.upstream_end.has_no_link());
  // One reading that fails for another reason makes it an end that does not read.
  link.upstream_end.current_width = make_error("current_link_width missing");
  EXPECT_FALSE(link.upstream_end.has_no_link());
  EXPECT_FALSE(link.negotiated().ok());
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

TEST(PortLinkReading, UnknownCarriesOneReasonToEveryHalf) {
  const auto reading = PortLinkReading::unknown(make_error("0000:00:14.0 exposes no PCIe link attributes"));
  ASSERT_FALSE(reading.capable().ok());
  ASSERT_FALSE(reading.negotiated().ok());
  EXPECT_EQ(reading.capable().error().message, "0000:00:14.0 exposes no PCIe link attributes");
  EXPECT_EQ(reading.current_width.error().message, "0000:00:14.0 exposes no PCIe link attributes");
}

}  // namespace
}  // namespace pcieval
