// The check table on the hand-built Sapphire Rapids H100 node.
#include "report/table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

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

TEST_F(CheckTableTest, NegotiatedShowsTheStateUnderLoadTheVerdictSpeaksOf) {
  // Discovery read the idle GPU at Gen1 x8; under load it ran Gen5 x8, which
  // is what its verdict holds against Gen5 x16 (issue 30 item 11).
  const std::vector<LoadedLink> loaded{{*parse_pci_address("0000:17:00.0"), LinkState{PcieGen::kGen5, 8}}};
  const std::string* row = nullptr;
  const auto lines = lines_of(render_check_table(results_, {}, {}, loaded));
  row = row_for(lines, "0000:17:00.0");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(cells_of(*row)[4], "Gen5 x8 (under load)");
  // The same state as discovery read: shown once, unmarked.
  const std::vector<LoadedLink> same{{*parse_pci_address("0000:17:00.0"), LinkState{PcieGen::kGen1, 8}}};
  const auto unchanged = lines_of(render_check_table(results_, {}, {}, same));
  EXPECT_EQ(cells_of(*row_for(unchanged, "0000:17:00.0"))[4], "Gen1 x8");
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
      // Both ends of a link read its one state.
      if (link.position == LinkPosition::kUplink)
        link.downstream_end.current_width = link.upstream_end.current_width = 4;
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
  EXPECT_EQ(lines[1], "(no PCIe device with a link in the evidence)");
  EXPECT_EQ(lines[3], results.summary);
}

// The measurement engine's sections, on the sample node after its probes ran.
class ProbeSectionsTest : public ::testing::Test {
 protected:
  Results results_ = testing::hgx_spr_results_probed();
  std::vector<BandwidthBudget> budgets_ = {{"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", 57.61}};
  std::string table_ = render_check_table(results_, budgets_);
  std::vector<std::string> lines_ = lines_of(table_);

  // The line index of the first line that starts with `start`, or -1.
  [[nodiscard]] int index_of(const std::string& start) const {
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      if (lines_[i].rfind(start, 0) == 0) return static_cast<int>(i);
    }
    return -1;
  }
};

TEST_F(ProbeSectionsTest, GoldenTextBetweenTheDeviceTableAndTheVerdicts) {
  const std::string expected =
      "\n"
      "PROBE         SUBJECT       DIR     SIZE  MEDIAN GB/s     MIN     MAX  CV %  HOST NUMA  BUDGET\n"
      "h2d_ce        0000:17:00.0  h2d  256 MiB        27.61   27.58   27.63   0.1  0 local    57.6 (Gen5 x16)\n"
      "host_ceiling  numa0         h2h  256 MiB       118.42  117.90  118.61   0.3  0\n"
      "\n"
      "SIZE SWEEP (sweep_ce, median GB/s by copy size)\n"
      "0000:17:00.0 h2d: 4 KiB 0.62, 1 MiB 22.40\n"
      "\n"
      "probe h2d_ce failed: GPU 0000:ca:00.0: cudaSetDevice: all CUDA-capable devices are busy or unavailable\n"
      "probe group_ce skipped: no switch or root port is shared by two or more GPUs: each GPU's uplink carries "
      "only its own traffic\n"
      "probes: 2 ran, 1 skipped, 1 failed\n"
      "\n"
      "0000:17:00.0: link_downgraded ";
  const std::string devices = render_check_table(testing::hgx_spr_results());
  const std::size_t end_of_devices = devices.find("\n\n") + 1;
  // The device table is unchanged, and the new sections follow it.
  EXPECT_EQ(table_.substr(0, end_of_devices), devices.substr(0, end_of_devices));
  EXPECT_EQ(table_.substr(end_of_devices, expected.size()), expected);
  EXPECT_EQ(lines_.back(), results_.summary);
}

TEST_F(ProbeSectionsTest, WithoutProbesTheTableIsAsBefore) {
  Results plain = results_;
  plain.evidence.probes.clear();
  plain.evidence.measurements.clear();
  plain.evidence.probe_settings.reset();
  // Link samples, counters and NVML readings are not shown in the table.
  EXPECT_EQ(render_check_table(plain, budgets_), render_check_table(testing::hgx_spr_results()));
  EXPECT_THAT(render_check_table(plain), Not(HasSubstr("PROBE")));
  EXPECT_THAT(render_check_table(plain), Not(HasSubstr("probes:")));
}

TEST_F(ProbeSectionsTest, MeasurementRowsHaveEveryColumn) {
  const int header = index_of("PROBE ");
  ASSERT_GE(header, 0);
  EXPECT_EQ(cells_of(lines_[header]), (std::vector<std::string>{"PROBE", "SUBJECT", "DIR", "SIZE", "MEDIAN GB/s", "MIN",
                                                                "MAX", "CV %", "HOST NUMA", "BUDGET"}));
  EXPECT_EQ(cells_of(lines_[header + 1]),
            (std::vector<std::string>{"h2d_ce", "0000:17:00.0", "h2d", "256 MiB", "27.61", "27.58", "27.63", "0.1",
                                      "0 local", "57.6 (Gen5 x16)"}));
  // The sweep's points are not rows.
  EXPECT_EQ(index_of("sweep_ce "), -1);
}

TEST_F(ProbeSectionsTest, BudgetOnlyForAPerGpuRowOfTheSameSubjectAndDirection) {
  const auto budget_of = [this](const Measurement& measurement, const std::vector<BandwidthBudget>& budgets) {
    Results results = results_;
    results.evidence.measurements = {measurement};
    const std::vector<std::string> lines = lines_of(render_check_table(results, budgets));
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
      if (lines[i].rfind("PROBE ", 0) == 0) {
        const auto cells = cells_of(lines[i + 1]);
        return cells.size() == 10 ? cells.back() : std::string("(blank)");
      }
    }
    return std::string("(no table)");
  };
  Measurement m = results_.evidence.measurements[0];
  EXPECT_EQ(budget_of(m, budgets_), "57.6 (Gen5 x16)");
  EXPECT_EQ(budget_of(m, {}), "(blank)");
  for (const Aggregation aggregation : {Aggregation::kWithPeers, Aggregation::kWithReverse}) {
    m.aggregation = aggregation;
    EXPECT_EQ(budget_of(m, budgets_), "57.6 (Gen5 x16)") << to_string(aggregation);
  }
  // A group's total over wall time is not one link's number.
  m.aggregation = Aggregation::kTotalOverWallTime;
  EXPECT_EQ(budget_of(m, budgets_), "(blank)");
  m.aggregation = Aggregation::kAlone;
  m.direction = Direction::kDeviceToHost;
  EXPECT_EQ(budget_of(m, budgets_), "(blank)");
  EXPECT_EQ(budget_of(m, {{"0000:17:00.0", Direction::kDeviceToHost, "Gen5 x8", 28.806}}), "28.8 (Gen5 x8)");
  m.subject = "0000:ca:00.0";
  EXPECT_EQ(budget_of(m, {{"0000:17:00.0", Direction::kDeviceToHost, "Gen5 x8", 28.806}}), "(blank)");
}

TEST_F(ProbeSectionsTest, HumanSizesAndNumaPlacement) {
  Results results = results_;
  Measurement m = results.evidence.measurements[0];
  results.evidence.measurements.clear();
  const std::vector<std::pair<std::uint64_t, std::string>> sizes = {
      {512, "512 B"}, {4096, "4 KiB"}, {1536, "1.5 KiB"}, {std::uint64_t{1} << 30, "1 GiB"}, {32000000, "30.5 MiB"}};
  for (const auto& [bytes, text] : sizes) {
    m.size_bytes = bytes;
    m.subject = text;
    results.evidence.measurements.push_back(m);
  }
  m.host_numa_local = false;
  m.host_numa_node = 1;
  m.subject = "remote";
  results.evidence.measurements.push_back(m);
  m.host_numa_local.reset();
  m.host_numa_node.reset();
  m.subject = "unrecorded";
  results.evidence.measurements.push_back(m);
  // Rows by subject (the second cell).
  std::map<std::string, std::vector<std::string>> rows;
  for (const auto& line : lines_of(render_check_table(results))) {
    const auto cells = cells_of(line);
    if (cells.size() >= 9 && cells[0] == "h2d_ce") rows[cells[1]] = cells;
  }
  for (const auto& [bytes, text] : sizes) {
    ASSERT_EQ(rows.count(text), 1u) << text;
    EXPECT_EQ(rows[text][3], text);
  }
  EXPECT_EQ(rows["remote"][8], "1 remote");
  EXPECT_EQ(rows["unrecorded"][8], "-");
}

TEST_F(ProbeSectionsTest, APeerPairsOneWayAndBothWaysRowsAreToldApart) {
  Results results = results_;
  Measurement m = results.evidence.measurements[0];
  results.evidence.measurements.clear();
  m.probe = "p2p_write_ce";
  m.subject = "0000:17:00.0->0000:ca:00.0";
  m.direction = Direction::kDeviceToDevice;
  for (const Aggregation aggregation :
       {Aggregation::kAlone, Aggregation::kWithReverse, Aggregation::kTotalOverWallTime}) {
    m.aggregation = aggregation;
    results.evidence.measurements.push_back(m);
  }
  std::vector<std::string> directions;
  for (const auto& line : lines_of(render_check_table(results))) {
    const auto cells = cells_of(line);
    if (cells.size() >= 9 && cells[0] == "p2p_write_ce") directions.push_back(cells[2]);
  }
  EXPECT_EQ(directions, (std::vector<std::string>{"d2d", "d2d both", "d2d sum"}));
}

TEST_F(ProbeSectionsTest, SweepCurvesAreOneLinePerSubjectAndDirectionSmallestFirst) {
  Results results = results_;
  Measurement d2h = results.evidence.measurements[1];
  d2h.direction = Direction::kDeviceToHost;
  d2h.size_bytes = std::uint64_t{1} << 30;
  results.evidence.measurements.push_back(d2h);
  Measurement pageable = d2h;
  pageable.host_memory = HostMemory::kPageable;
  results.evidence.measurements.push_back(pageable);
  const std::string table = render_check_table(results);
  EXPECT_THAT(table, HasSubstr("SIZE SWEEP (sweep_ce, median GB/s by copy size)\n"
                               "0000:17:00.0 h2d: 4 KiB 0.62, 1 MiB 22.40\n"
                               "0000:17:00.0 d2h: 1 GiB 22.40\n"
                               "0000:17:00.0 d2h pageable: 1 GiB 22.40\n\n"));
}

TEST_F(ProbeSectionsTest, ProbesThatDidNotRunOrWarnedAreListedThenCounted) {
  Results results = results_;
  results.evidence.probes[1].warnings = {"latch on 0000:17:00.0 timed out after 5 s"};
  results.evidence.probes[0].warnings = {"retried once"};
  results.evidence.probes.push_back({"d2h_ce", ProbeStatus::kFailed, "", {}, 0.5});
  const std::string table = render_check_table(results);
  EXPECT_THAT(table,
              HasSubstr("\nprobe h2d_ce failed: GPU 0000:ca:00.0: cudaSetDevice: all CUDA-capable devices are busy "
                        "or unavailable\n  warning: retried once\n"
                        "probe sweep_ce ran with warnings\n"
                        "  warning: latch on 0000:17:00.0 timed out after 5 s\n"
                        "probe group_ce skipped: no switch or root port is shared"));
  EXPECT_THAT(table, HasSubstr("\nprobe d2h_ce failed\nprobes: 2 ran, 1 skipped, 2 failed\n"));
  EXPECT_THAT(table, Not(HasSubstr("probe host_ceiling")));
}

TEST_F(ProbeSectionsTest, EveryProbeRanGivesTheCountAlone) {
  Results results = results_;
  for (ProbeRun& probe : results.evidence.probes) {
    probe.status = ProbeStatus::kRan;
    probe.reason.clear();
  }
  EXPECT_THAT(render_check_table(results), HasSubstr("\n\nprobes: 4 ran, 0 skipped, 0 failed\n\n"));
}

TEST_F(ProbeSectionsTest, NoTrailingSpacesAndAsciiOnly) {
  for (const auto& line : lines_) EXPECT_EQ(line.find_last_not_of(' ') + 1, line.size()) << line;
  for (const unsigned char c : table_) EXPECT_LT(c, 0x80) << "non-ASCII byte";
}

// Issue 29: what a terminal is given is one line of printable ASCII, one
// '?' for each code point it may not show.
TEST(TerminalText, ReplacesEveryControlAndNonAsciiCodePointWithOneMark) {
  EXPECT_EQ(terminal_text("0000:84:00.0 runs Gen4 x8, expected Gen4 x16"),
            "0000:84:00.0 runs Gen4 x8, expected Gen4 x16");
  EXPECT_EQ(terminal_text("ok \x1b[1A\x1b[2K\rpcieval: pass\a"), "ok ?[1A?[2K?pcieval: pass?");
  EXPECT_EQ(terminal_text("line\nforged\ttab\x7f"), "line?forged?tab?");
  // C1 controls (CSI U+009B, NEL U+0085) and other text: one mark each.
  EXPECT_EQ(terminal_text("\xc2\x9b"
                          "2J \xc2\x85 caf\xc3\xa9 \xe2\x80\xae"),
            "?2J ? caf? ?");
  // Bytes that are not UTF-8: one mark per byte.
  EXPECT_EQ(terminal_text("\x9b\xff\xc3"), "???");
  EXPECT_EQ(terminal_text(std::string("a\0b", 3)), "a?b");
  EXPECT_EQ(terminal_lines("one\x1b\ntwo\r\n"), "one?\ntwo?\n");
}

TEST(TerminalText, TheCheckTableCarriesNoControlByteOfTheDocument) {
  Results results = testing::hgx_spr_results_probed();
  const std::string hostile = "x\x1b[2J\r\n\xc2\x9b\x07";
  results.summary += hostile;
  for (Verdict& verdict : results.verdicts) {
    verdict.subject += hostile;
    verdict.reason += hostile;
    verdict.remediation += hostile;
    verdict.status = VerdictStatus::kLinkDowngraded;  // every verdict's lines shown
  }
  for (Measurement& m : results.evidence.measurements) {
    m.probe += hostile;
    m.subject += hostile;
  }
  for (ProbeRun& probe : results.evidence.probes) {
    probe.key += hostile;
    probe.reason = hostile;
    probe.warnings.push_back(hostile);
  }
  for (DeviceRecord& device : results.evidence.devices) device.notes.push_back(hostile);
  const std::string table = render_check_table(results);
  for (const unsigned char c : table) {
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << static_cast<int>(c);
  }
  EXPECT_THAT(table, HasSubstr("x?[2J????"));
}

}  // namespace
}  // namespace pcieval
