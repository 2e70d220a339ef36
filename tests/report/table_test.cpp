// The check table on the hand-built Sapphire Rapids H100 node.
#include "report/table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "report/sample_results.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Splits a row on runs of two or more spaces (cells hold single spaces only).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (start < line.size()) {
    std::size_t gap = line.find("  ", start);
    if (gap == std::string::npos) gap = line.size();
    cells.push_back(line.substr(start, gap - start));
    start = line.find_first_not_of(' ', gap);
    if (start == std::string::npos) break;
  }
  return cells;
}

const std::string* row_for(const std::vector<std::string>& lines, const std::string& address) {
  for (const auto& line : lines) {
    if (line.rfind(address + " ", 0) == 0) return &line;
  }
  return nullptr;
}

class CheckTableTest : public ::testing::Test {
 protected:
  Results results_ = testing::hgx_spr_results();
  std::string table_ = render_check_table(results_);
  std::vector<std::string> lines_ = lines_of(table_);
};

TEST_F(CheckTableTest, HeaderAndOneRowPerDevice) {
  ASSERT_GE(lines_.size(), 6u);
  EXPECT_EQ(cells_of(lines_[0]),
            (std::vector<std::string>{"DEVICE", "KIND", "PATH", "EXPECTED", "NEGOTIATED", "VERDICT"}));
  for (std::size_t i = 0; i < results_.evidence.devices.size(); ++i) {
    EXPECT_THAT(lines_[i + 1], StartsWith(to_string(results_.evidence.devices[i].function.bdf)));
  }
  EXPECT_EQ(lines_[6], "");
}

TEST_F(CheckTableTest, DowngradedGpuRowShowsPathAndTheVerdictsLink) {
  const std::string* row = row_for(lines_, "0000:17:00.0");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(cells_of(*row), (std::vector<std::string>{"0000:17:00.0", "gpu",
                                                      "0000:17:00.0 < 0000:16:10.0 < 0000:15:00.0 < 0000:14:01.0",
                                                      "Gen5 x16", "Gen1 x8", "link_downgraded"}));
}

TEST_F(CheckTableTest, UnknownStateIsQuestionMarkAndNoLinkIsDash) {
  EXPECT_EQ(cells_of(*row_for(lines_, "0000:3b:00.0")),
            (std::vector<std::string>{"0000:3b:00.0", "nvme", "0000:3b:00.0 < 0000:3a:01.0", "?", "Gen5 x4",
                                      "inconclusive"}));
  EXPECT_EQ(cells_of(*row_for(lines_, "0000:02:00.0")),
            (std::vector<std::string>{"0000:02:00.0", "other", "-", "-", "-", "not judged"}));
}

TEST_F(CheckTableTest, PassingDeviceWithoutVerdictLinkShowsItsOwnLink) {
  EXPECT_EQ(
      cells_of(*row_for(lines_, "0000:18:00.0")),
      (std::vector<std::string>{"0000:18:00.0", "nic", "0000:18:00.0 < 0000:16:14.0 < 0000:15:00.0 < 0000:14:01.0",
                                "Gen5 x16", "Gen5 x16", "pass"}));
}

TEST_F(CheckTableTest, VerdictOnASharedUplinkShowsThatLink) {
  // The NIC's verdict names the switch uplink, which trained at x4.
  for (DeviceRecord& record : results_.evidence.devices) {
    for (Link& link : record.path) {
      if (link.position == LinkPosition::kUplink) link.downstream_end.current_width = 4;
    }
  }
  results_.verdicts[1] = {"0000:18:00.0",
                          VerdictStatus::kLinkDowngraded,
                          ReasonCode::kLinkWidthBelowExpected,
                          LinkRef{testing::bdf("0000:15:00.0"), testing::bdf("0000:14:01.0")},
                          "link 0000:15:00.0 <-> 0000:14:01.0 (switch uplink) runs Gen5 x4, expected Gen5 x16",
                          "reseat the switch board"};
  const auto cells = cells_of(*row_for(lines_of(render_check_table(results_)), "0000:18:00.0"));
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_EQ(cells[3], "Gen5 x16");
  EXPECT_EQ(cells[4], "Gen5 x4");
  EXPECT_EQ(cells[5], "link_downgraded");
}

TEST_F(CheckTableTest, ColumnsLineUp) {
  const std::size_t verdict_column = lines_[0].find("VERDICT");
  for (std::size_t i = 1; i <= results_.evidence.devices.size(); ++i) {
    const auto cells = cells_of(lines_[i]);
    EXPECT_EQ(lines_[i].rfind(cells.back()), verdict_column) << lines_[i];
  }
  for (const auto& line : lines_) EXPECT_EQ(line.find_last_not_of(' ') + 1, line.size()) << "trailing space";
}

TEST_F(CheckTableTest, NonPassVerdictsListedWithRemediationThenSummary) {
  EXPECT_THAT(table_, HasSubstr("\n0000:17:00.0: link_downgraded [link_width_below_expected] link 0000:17:00.0 <-> "
                                "0000:16:10.0 (device link) runs Gen1 x8, expected Gen5 x16\n"
                                "  -> Lanes are missing: reseat 0000:17:00.0\n"));
  EXPECT_THAT(table_, HasSubstr("\n0000:ca:00.0: inconclusive [gpu_link_speed_idle] "));
  EXPECT_THAT(table_, HasSubstr("\nnode: missing [gpus_missing] found 2 GPUs, expected 4 (0000:17:00.0, "
                                "0000:ca:00.0)\n  -> Compare `nvidia-smi -L` with the inventory\n"));
  EXPECT_THAT(table_, Not(HasSubstr("0000:18:00.0: pass")));
  EXPECT_EQ(lines_.back(), results_.summary);
}

TEST_F(CheckTableTest, WorstOfSeveralVerdictsForOneDevice) {
  results_.verdicts.push_back({"0000:17:00.0", VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, std::nullopt,
                               "bandwidth within band", ""});
  EXPECT_EQ(cells_of(*row_for(lines_of(render_check_table(results_)), "0000:17:00.0")).back(), "link_downgraded");
}

TEST_F(CheckTableTest, AsciiOnly) {
  for (const unsigned char c : table_) EXPECT_LT(c, 0x80) << "non-ASCII byte";
}

TEST(CheckTableEmptyTest, NoDevicesSaysSo) {
  Results results;
  results.summary = "pcieval pass: no PCIe links to judge (0 devices, none behind a PCIe port with link attributes)";
  const auto lines = lines_of(render_check_table(results));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(cells_of(lines[0]).size(), 6u);
  EXPECT_EQ(lines[1], "(no PCIe devices found)");
  EXPECT_EQ(lines[3], results.summary);
}

}  // namespace
}  // namespace pcieval
