#include "validate/budget.hpp"

#include <gtest/gtest.h>

namespace pcieval {
namespace {

// Expected figures from PCIE-FACTS.md: section 1 (raw per direction, x16) and
// section 2.5/2.6 (MWr64 and CplD efficiencies at MPS 256, no ECRC). Gen6 in
// flit mode: 236 TLP bytes per 256-byte flit, headers still charged, framing
// not (section 2.2; the flit header split is marked UNVERIFIED there).
struct BudgetRow {
  int generation;
  const char* line_code;
  double raw_x16_gbps;
  double write_x16_gbps;
  double read_x16_gbps;
};

class BudgetTable : public ::testing::TestWithParam<BudgetRow> {};

TEST_P(BudgetTable, MatchesTheFactSheet) {
  const BudgetRow& row = GetParam();
  const auto budget = link_budget(LinkState{*gen_from_number(row.generation), 16});
  ASSERT_TRUE(budget.ok()) << budget.error().message;
  EXPECT_EQ(to_string(budget->line_code), row.line_code);
  EXPECT_NEAR(budget->raw_gbps, row.raw_x16_gbps, 0.001);
  EXPECT_NEAR(budget->write_gbps, row.write_x16_gbps, 0.01);
  EXPECT_NEAR(budget->read_gbps, row.read_x16_gbps, 0.01);
  EXPECT_EQ(budget->payload_bytes, 256);
}

INSTANTIATE_TEST_SUITE_P(Gen1To6, BudgetTable,
                         ::testing::Values(
                             // 2.5 GT/s x 16 x 0.8 / 8 = 4.0; x 256/280; x 256/276
                             BudgetRow{1, "8b/10b", 4.000, 3.657, 3.710}, BudgetRow{2, "8b/10b", 8.000, 7.314, 7.420},
                             BudgetRow{3, "128b/130b", 15.754, 14.40, 14.61},
                             BudgetRow{4, "128b/130b", 31.508, 28.81, 29.22},
                             BudgetRow{5, "128b/130b", 63.015, 57.61, 58.45},
                             // 64 x 16 / 8 x 236/256 = 118.0; x 256/272; x 256/268
                             BudgetRow{6, "flit", 118.000, 111.06, 112.72}));

TEST(Budget, ScalesWithWidth) {
  const auto x16 = link_budget(LinkState{PcieGen::kGen4, 16});
  const auto x8 = link_budget(LinkState{PcieGen::kGen4, 8});
  const auto x1 = link_budget(LinkState{PcieGen::kGen3, 1});
  ASSERT_TRUE(x16.ok() && x8.ok() && x1.ok());
  EXPECT_NEAR(x8->raw_gbps, 15.754, 0.001);  // PCIE-FACTS 1: Gen4 x8
  EXPECT_NEAR(x16->raw_gbps, 2 * x8->raw_gbps, 1e-9);
  EXPECT_NEAR(x1->raw_gbps, 0.98462, 0.00001);  // Gen3 per lane
}

TEST(Budget, ReturnsItsParts) {
  const auto budget = link_budget(LinkState{PcieGen::kGen5, 16});
  ASSERT_TRUE(budget.ok());
  EXPECT_DOUBLE_EQ(budget->rate_gts_per_lane, 32.0);
  EXPECT_DOUBLE_EQ(budget->encoding_efficiency, 128.0 / 130.0);
  EXPECT_EQ(budget->write_overhead_bytes, 16 + 8);       // 4-DW header + framing/LCRC
  EXPECT_EQ(budget->completion_overhead_bytes, 12 + 8);  // 3-DW header + framing/LCRC
  EXPECT_NEAR(budget->write_efficiency, 0.9143, 0.0001);
  EXPECT_NEAR(budget->read_efficiency, 0.9275, 0.0001);
}

TEST(Budget, PayloadSizeAndAddressingChangeTheEfficiency) {
  // PCIE-FACTS 2.5 constants: MWr64 at MPS 128/512 = 0.8421/0.9552; MWr32 at 128 = 0.8649.
  BudgetOptions options;
  options.max_payload_bytes = 128;
  EXPECT_NEAR(link_budget(LinkState{PcieGen::kGen4, 16}, options)->write_efficiency, 0.8421, 0.0001);
  options.max_payload_bytes = 512;
  EXPECT_NEAR(link_budget(LinkState{PcieGen::kGen4, 16}, options)->write_efficiency, 0.9552, 0.0001);
  options.max_payload_bytes = 128;
  options.address_64bit = false;
  EXPECT_NEAR(link_budget(LinkState{PcieGen::kGen4, 16}, options)->write_efficiency, 0.8649, 0.0001);
  options.ecrc = true;
  EXPECT_EQ(link_budget(LinkState{PcieGen::kGen4, 16}, options)->write_overhead_bytes, 12 + 8 + 4);
}

TEST(Budget, RejectsWhatTheSpecDoesNotDefine) {
  EXPECT_FALSE(link_budget(LinkState{PcieGen::kGen4, 3}).ok());
  BudgetOptions options;
  options.max_payload_bytes = 300;
  const auto bad = link_budget(LinkState{PcieGen::kGen4, 16}, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("300"), std::string::npos);
  options.max_payload_bytes = 8192;
  EXPECT_FALSE(link_budget(LinkState{PcieGen::kGen4, 16}, options).ok());
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

TEST(DirectionBudget, ReadsForHostToDeviceWritesForDeviceToHost) {
  const auto budget = link_budget(LinkState{PcieGen::kGen5, 16});
  ASSERT_TRUE(budget);
  EXPECT_DOUBLE_EQ(direction_budget_gbps(*budget, Direction::kHostToDevice).value(), budget->read_gbps);
  EXPECT_DOUBLE_EQ(direction_budget_gbps(*budget, Direction::kDeviceToHost).value(), budget->write_gbps);
  EXPECT_FALSE(direction_budget_gbps(*budget, Direction::kHostToHost));
}

Link link_between(LinkState down_cap, LinkState up_cap) {
  Link link;
  link.downstream_end = PortLinkReading::known(down_cap, down_cap);
  link.upstream_end = PortLinkReading::known(up_cap, up_cap);
  return link;
}

TEST(PathExpectedState, TheLowestLinkBoundsTheWholePath) {
  // An H100 PCIe (Gen5 x16) behind a Gen4 x16 switch uplink: Gen4 x16.
  const PciPath path{link_between({PcieGen::kGen5, 16}, {PcieGen::kGen5, 16}),
                     link_between({PcieGen::kGen4, 16}, {PcieGen::kGen4, 16})};
  EXPECT_EQ(path_expected_state(path).value(), (LinkState{PcieGen::kGen4, 16}));
}

TEST(PathExpectedState, SpeedAndWidthAreLoweredSeparately) {
  const PciPath path{link_between({PcieGen::kGen5, 8}, {PcieGen::kGen5, 16}),
                     link_between({PcieGen::kGen4, 16}, {PcieGen::kGen4, 16})};
  EXPECT_EQ(path_expected_state(path).value(), (LinkState{PcieGen::kGen4, 8}));
}

TEST(PathExpectedState, UnknownOrEmptyPathsAreErrors) {
  EXPECT_FALSE(path_expected_state({}));
  Link unknown;
  unknown.downstream_end = PortLinkReading::unknown(make_error("max_link_speed: Unknown"));
  unknown.upstream_end = PortLinkReading::known({PcieGen::kGen4, 16}, {PcieGen::kGen4, 16});
  EXPECT_FALSE(path_expected_state(PciPath{unknown}));
}

}  // namespace
}  // namespace pcieval
