// The fleet model: node entries from results documents, the outlier rule,
// duplicate hosts and the fleet's exit code. The documents are test data
// (fleet_test_data.hpp), not measurements.
#include "fleet/fleet.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fleet/fleet_table.hpp"
#include "fleet_test_data.hpp"

namespace pcieval {
namespace {

using testing::a100_medians;
using testing::a100_node;
using ::testing::HasSubstr;

std::vector<FleetNode> nodes_of(const std::vector<Results>& documents) {
  std::vector<FleetNode> nodes;
  for (const Results& r : documents) nodes.push_back(node_from_results(r, r.evidence.host.hostname + ".json"));
  return nodes;
}

Fleet fleet_of(const std::vector<Results>& documents, const OutlierRule& rule = {}) {
  return build_fleet(nodes_of(documents), {}, "merge", ToolInfo{"pcieval", "test"}, rule);
}

TEST(NodeFromResults, KeepsHostVerdictsAndPerGpuCopyEngineMedians) {
  Results r = a100_node("dgx-a07", a100_medians(), Overall::kFail);
  // Measurements the rule must not compare: a group total and an SM copy.
  Measurement group = r.evidence.measurements.front();
  group.aggregation = Aggregation::kTotalOverWallTime;
  r.evidence.measurements.push_back(group);
  Measurement sm = r.evidence.measurements.front();
  sm.probe = "h2d_sm";
  sm.method = CopyMethod::kSmKernel;
  r.evidence.measurements.push_back(sm);

  const FleetNode node = node_from_results(r, "results/dgx-a07.json");
  EXPECT_EQ(node.host, "dgx-a07");
  EXPECT_EQ(node.source, "results/dgx-a07.json");
  EXPECT_TRUE(node.has_results);
  EXPECT_EQ(node.overall, Overall::kFail);
  EXPECT_EQ(node.exit_code, 1);
  EXPECT_EQ(node.reason, r.summary);
  ASSERT_EQ(node.verdicts.size(), 1u);
  EXPECT_EQ(node.verdicts[0].code, "bandwidth_below_budget");
  ASSERT_EQ(node.gpus.size(), 16u);  // 8 GPUs x h2d_ce, d2h_ce
  EXPECT_EQ(node.gpus[0].gpu, "0000:07:00.0");
  EXPECT_EQ(node.gpus[0].device_id, "10de:20b2");
  EXPECT_EQ(node.gpus[0].model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(node.gpus[0].link, "Gen4 x16");
  EXPECT_EQ(node.gpus[0].probe, "h2d_ce");
  EXPECT_DOUBLE_EQ(node.gpus[0].median_gbps, r.evidence.measurements[0].stats.median_gbps);
  EXPECT_EQ(node.gpus[1].probe, "d2h_ce");
  EXPECT_EQ(node.gpus[1].direction, Direction::kDeviceToHost);
}

TEST(NodeFromResults, ExpectedLinkIsTheNarrowestHopAndUnknownWhenUnreadable) {
  Results r = a100_node("dgx-a07", a100_medians(2));
  // GPU 0's uplink can only do Gen3: its whole path should train to Gen3 x16.
  r.evidence.devices[0].path[1].upstream_end =
      PortLinkReading::known(LinkState{PcieGen::kGen3, 16}, LinkState{PcieGen::kGen3, 16});
  // GPU 1's own capability could not be read.
  r.evidence.devices[1].path[0].downstream_end = PortLinkReading::unknown(make_error("Unknown speed"));
  const FleetNode node = node_from_results(r, "x");
  EXPECT_EQ(node.gpus[0].link, "Gen3 x16");
  EXPECT_EQ(node.gpus[2].link, "unknown");
}

TEST(Outliers, SlowGpuThatClearsItsOwnFloorIsFlagged) {
  // 21.5 GB/s clears an A100's usual acceptance floor (21 GB/s) but sits far
  // below its 31 peers.
  std::vector<double> slow = a100_medians();
  slow[3] = 21.5;
  const Fleet fleet = fleet_of({a100_node("n1", a100_medians()), a100_node("n2", a100_medians()), a100_node("n3", slow),
                                a100_node("n4", a100_medians())});
  // d2h of that GPU is slow too (test data: d2h = h2d + 0.1).
  ASSERT_EQ(fleet.outliers.size(), 2u);
  for (const FleetOutlier& o : fleet.outliers) {
    EXPECT_EQ(o.host, "n3");
    EXPECT_EQ(o.gpu, "0000:37:00.0");
    EXPECT_EQ(o.group_gpus, 32u);
    EXPECT_LT(o.median_gbps, o.threshold_gbps);
  }
  EXPECT_EQ(fleet.outliers[0].probe, "h2d_ce");  // the slowest relative to its group first
  EXPECT_NEAR(fleet.outliers[0].group_median_gbps, testing::kA100H2dGbps, 0.051);
  // Outliers are reported; the exit code stays the worst node's.
  EXPECT_EQ(fleet.exit_code, 0);
  EXPECT_THAT(fleet.summary, HasSubstr("2 outlier GPUs (n3 0000:37:00.0 h2d_ce 21.50 GB/s"));
}

// Issue 27: a simulated node's numbers never meet real nodes'. Its slow
// GPU would otherwise be the fleet's outlier.
TEST(Outliers, ASimulatedNodeIsNotMergedWithRealOnes) {
  std::vector<double> slow = a100_medians();
  slow[3] = 21.5;
  Results simulated = a100_node("sim1", slow);
  simulated.evidence.host.simulated = true;
  const Fleet fleet = fleet_of(
      {a100_node("n1", a100_medians()), a100_node("n2", a100_medians()), simulated, a100_node("n4", a100_medians())});
  EXPECT_TRUE(fleet.outliers.empty());
  ASSERT_EQ(fleet.nodes.size(), 3u);
  for (const FleetNode& node : fleet.nodes) EXPECT_NE(node.host, "sim1");
  ASSERT_EQ(fleet.problems.size(), 1u);
  EXPECT_THAT(fleet.problems[0], HasSubstr("simulated node sim1"));
  // A fleet of simulated nodes alone is merged as it is.
  Results other = a100_node("sim2", a100_medians());
  other.evidence.host.simulated = true;
  const Fleet simulated_only = fleet_of({simulated, other});
  EXPECT_EQ(simulated_only.nodes.size(), 2u);
  EXPECT_TRUE(simulated_only.problems.empty());
}

TEST(Outliers, TightGroupDoesNotFlagNoise) {
  // Identical medians: MAD 0, so the robust cut alone would flag anything
  // below the median; 24.7 GB/s is 4 % low, above 90 % of the median.
  std::vector<double> medians(8, 25.7);
  medians[5] = 24.7;
  const Fleet fleet = fleet_of({a100_node("n1", std::vector<double>(8, 25.7)), a100_node("n2", medians)});
  EXPECT_TRUE(fleet.outliers.empty());
  // 23.0 is below 90 % (23.13): now both cuts agree.
  medians[5] = 23.0;
  const Fleet flagged = fleet_of({a100_node("n1", std::vector<double>(8, 25.7)), a100_node("n2", medians)});
  ASSERT_EQ(flagged.outliers.size(), 2u);
  EXPECT_EQ(flagged.outliers[0].gpu, "0000:57:00.0");
}

TEST(Outliers, WideGroupDoesNotFlagItsOwnSpread) {
  // Medians 18..26: median 22, MAD 2, robust cut 22 - 3.5 * 1.4826 * 2 = 11.6.
  // 18 is below 90 % of the median (19.8) but within the spread.
  const Fleet fleet = fleet_of({a100_node("n1", {18, 19, 20, 21, 22, 23, 24, 25, 26})});
  EXPECT_TRUE(fleet.outliers.empty());
  ASSERT_EQ(fleet.groups.size(), 2u);
  const FleetGroup& h2d = fleet.groups[1];  // groups are ordered by probe name: d2h_ce, h2d_ce
  ASSERT_EQ(h2d.probe, "h2d_ce");
  EXPECT_DOUBLE_EQ(h2d.median_gbps, 22.0);
  EXPECT_DOUBLE_EQ(h2d.mad_gbps, 2.0);
  EXPECT_NEAR(h2d.threshold_gbps, 22 - 3.5 * 1.4826 * 2, 1e-9);
}

TEST(Outliers, GroupsSmallerThanTheMinimumAreNotJudged) {
  const Fleet fleet = fleet_of({a100_node("n1", {25.7, 25.7, 25.6}), a100_node("n2", {12.0})});
  EXPECT_TRUE(fleet.outliers.empty());
  ASSERT_EQ(fleet.groups.size(), 2u);  // h2d and d2h
  EXPECT_FALSE(fleet.groups[0].judged);
  EXPECT_EQ(fleet.groups[0].gpus, 4u);
  EXPECT_THAT(render_fleet_table(fleet), HasSubstr("not judged for outliers: NVIDIA A100-SXM4-80GB Gen4 x16 "
                                                   "h2d_ce: 4 GPUs, fewer than 5"));
  // With the minimum lowered to 4 the same fleet is judged and 12.0 flagged.
  OutlierRule rule;
  rule.min_group_size = 4;
  EXPECT_EQ(fleet_of({a100_node("n1", {25.7, 25.7, 25.6}), a100_node("n2", {12.0})}, rule).outliers.size(), 2u);
}

TEST(Outliers, GpusAreComparedOnlyWithTheSameModelAndExpectedLink) {
  // Node n9's uplinks are Gen3: its GPUs run at Gen3 rates, which is right
  // for them and must not be compared with the Gen4 nodes.
  Results gen3 = a100_node("n9", std::vector<double>(8, 12.9));
  for (DeviceRecord& d : gen3.evidence.devices) {
    d.path[1].upstream_end = PortLinkReading::known(LinkState{PcieGen::kGen3, 16}, LinkState{PcieGen::kGen3, 16});
  }
  // Node n8 has another model (A100-PCIE-40GB, 20f1) at a lower rate.
  Results other = a100_node("n8", std::vector<double>(8, 22.0));
  for (DeviceRecord& d : other.evidence.devices) d.function.device_id = 0x20f1;
  const Fleet fleet = fleet_of({a100_node("n1", a100_medians()), a100_node("n2", a100_medians()), gen3, other});
  EXPECT_TRUE(fleet.outliers.empty());
  EXPECT_EQ(fleet.groups.size(), 6u);  // 3 (model, link) x 2 directions
}

TEST(ExitCodes, FailOutranksUsageOutranksInconclusiveOutranksPass) {
  EXPECT_EQ(worse_exit_code(0, 3), 3);
  EXPECT_EQ(worse_exit_code(3, 2), 2);
  EXPECT_EQ(worse_exit_code(2, 1), 1);
  EXPECT_EQ(worse_exit_code(1, 3), 1);
  EXPECT_EQ(worse_exit_code(1, 0), 1);
}

TEST(BuildFleet, ExitCodeAndOverallAreTheWorstNodes) {
  std::vector<FleetNode> nodes = nodes_of({a100_node("b", a100_medians()), a100_node("a", a100_medians())});
  nodes.push_back(node_without_results("c", "rank 2", kExitInconclusive, "no results within 5 s"));
  Fleet fleet = build_fleet(nodes, {}, "mpi", {});
  EXPECT_EQ(fleet.overall, Overall::kInconclusive);
  EXPECT_EQ(fleet.exit_code, 3);
  EXPECT_EQ(fleet.nodes[0].host, "a");  // ordered by host
  EXPECT_EQ(fleet.summary, "pcieval fleet inconclusive: 3 nodes, 2 pass, 1 inconclusive (c)");

  nodes.push_back(node_without_results("bad.json", "bad.json", kExitUsage, "unreadable"));
  EXPECT_EQ(build_fleet(nodes, {}, "merge", {}).exit_code, 2);
  nodes.push_back(node_from_results(a100_node("d", a100_medians(), Overall::kFail), "d.json"));
  fleet = build_fleet(nodes, {}, "merge", {});
  EXPECT_EQ(fleet.exit_code, 1);
  EXPECT_EQ(fleet.overall, Overall::kFail);
  EXPECT_THAT(fleet.summary, HasSubstr("1 fail (d), 2 inconclusive (bad.json, c)"));
}

TEST(BuildFleet, AnEmptyFleetIsInconclusiveNeverAPass) {
  const Fleet fleet = build_fleet({}, {}, "merge", {});
  EXPECT_EQ(fleet.overall, Overall::kInconclusive);
  EXPECT_EQ(fleet.exit_code, 3);
}

TEST(Deduplicate, TheLaterDocumentOfAHostWins) {
  std::vector<std::string> problems;
  std::vector<FleetInput> inputs;
  inputs.push_back({node_from_results(a100_node("n1", a100_medians(), Overall::kFail), "new.json"), 200.0, 0});
  inputs.push_back({node_from_results(a100_node("n1", a100_medians()), "old.json"), 100.0, 1});
  inputs.push_back({node_from_results(a100_node("n2", a100_medians()), "n2.json"), 100.0, 2});
  const std::vector<FleetNode> nodes = deduplicate_hosts(inputs, problems);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].source, "new.json");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "duplicate host n1: old.json and new.json; kept new.json (written later)");
}

// The failing document of a host that a passing one replaced must not vanish
// from the fleet: the node lists it, the problem line says what it found,
// and the fleet fails (exit 1) until the operator leaves it out.
TEST(Deduplicate, AFailingDocumentSupersededByAPassIsKeptAndFailsTheFleet) {
  std::vector<std::string> problems;
  std::vector<FleetInput> inputs;
  inputs.push_back({node_from_results(a100_node("n1", a100_medians(), Overall::kFail), "old.json"), 100.0, 0});
  inputs.push_back({node_from_results(a100_node("n1", a100_medians()), "new.json"), 200.0, 1});
  inputs.push_back({node_from_results(a100_node("n2", a100_medians()), "n2.json"), 100.0, 2});
  std::vector<FleetNode> nodes = deduplicate_hosts(inputs, problems);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].source, "new.json");
  EXPECT_EQ(nodes[0].overall, Overall::kPass);
  ASSERT_EQ(nodes[0].superseded.size(), 1u);
  EXPECT_EQ(nodes[0].superseded[0].source, "old.json");
  EXPECT_EQ(nodes[0].superseded[0].overall, Overall::kFail);
  EXPECT_EQ(nodes[0].superseded[0].exit_code, kExitFail);
  EXPECT_TRUE(has_superseded_failure(nodes[0]));
  EXPECT_THAT(row_reason(nodes[0]), HasSubstr("(superseded old.json failed)"));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("kept new.json (written later); superseded old.json failed ("));
  EXPECT_THAT(problems[0], HasSubstr("keeps the fleet failing"));

  const Fleet fleet = build_fleet(std::move(nodes), problems, "merge", ToolInfo{"pcieval", "0.1.0"});
  EXPECT_EQ(fleet.exit_code, kExitFail);
  EXPECT_EQ(fleet.overall, Overall::kFail);
  EXPECT_THAT(fleet.summary, HasSubstr("1 host with a failing document superseded by a newer one (n1)"));
  const std::string table = render_fleet_table(fleet);
  EXPECT_THAT(table, HasSubstr("(superseded old.json failed)"));
  EXPECT_THAT(table, HasSubstr("problem: duplicate host n1: old.json and new.json; kept new.json"));
}

// A rerun after an inconclusive check (a busy GPU) is the fix for it: the
// superseded document is listed but does not hold the fleet back.
TEST(Deduplicate, AnInconclusiveDocumentSupersededByAPassLeavesTheFleetPassing) {
  std::vector<std::string> problems;
  std::vector<FleetInput> inputs;
  inputs.push_back({node_from_results(a100_node("n1", a100_medians(), Overall::kInconclusive), "old.json"), 100, 0});
  inputs.push_back({node_from_results(a100_node("n1", a100_medians()), "new.json"), 200.0, 1});
  std::vector<FleetNode> nodes = deduplicate_hosts(inputs, problems);
  ASSERT_EQ(nodes.size(), 1u);
  ASSERT_EQ(nodes[0].superseded.size(), 1u);
  EXPECT_EQ(nodes[0].superseded[0].overall, Overall::kInconclusive);
  EXPECT_FALSE(has_superseded_failure(nodes[0]));
  const Fleet fleet = build_fleet(std::move(nodes), problems, "merge", ToolInfo{"pcieval", "0.1.0"});
  EXPECT_EQ(fleet.exit_code, kExitPass);
  EXPECT_EQ(fleet.overall, Overall::kPass);
}

// Three documents of one host: the kept one lists both others, oldest first.
TEST(Deduplicate, EverySupersededDocumentIsListedOldestFirst) {
  std::vector<std::string> problems;
  std::vector<FleetInput> inputs;
  inputs.push_back({node_from_results(a100_node("n1", a100_medians()), "b.json"), 200.0, 0});
  inputs.push_back({node_from_results(a100_node("n1", a100_medians()), "c.json"), 300.0, 1});
  inputs.push_back({node_from_results(a100_node("n1", a100_medians(), Overall::kFail), "a.json"), 100.0, 2});
  const std::vector<FleetNode> nodes = deduplicate_hosts(inputs, problems);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].source, "c.json");
  ASSERT_EQ(nodes[0].superseded.size(), 2u);
  EXPECT_EQ(nodes[0].superseded[0].source, "a.json");
  EXPECT_EQ(nodes[0].superseded[1].source, "b.json");
}

TEST(Deduplicate, OnATieTheLaterArgumentWinsAndResultsBeatNoResults) {
  std::vector<std::string> problems;
  std::vector<FleetInput> inputs;
  inputs.push_back({node_from_results(a100_node("n1", a100_medians()), "a.json"), 100.0, 0});
  inputs.push_back({node_from_results(a100_node("n1", a100_medians()), "b.json"), 100.0, 1});
  inputs.push_back({node_without_results("n1", "c.json", kExitUsage, "unreadable"), 300.0, 2});
  const std::vector<FleetNode> nodes = deduplicate_hosts(inputs, problems);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].source, "b.json");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0], HasSubstr("kept b.json (given later)"));
  EXPECT_THAT(problems[1], HasSubstr("kept b.json (the readable one)"));
}

TEST(MedianOf, OddAndEvenCounts) {
  std::vector<double> odd{3, 1, 2};
  std::vector<double> even{4, 1, 3, 2};
  std::vector<double> none;
  EXPECT_DOUBLE_EQ(median_of(odd), 2);
  EXPECT_DOUBLE_EQ(median_of(even), 2.5);
  EXPECT_DOUBLE_EQ(median_of(none), 0);
}

TEST(FleetTable, NodesThenOutliersThenProblemsAndSummary) {
  std::vector<double> slow = a100_medians();
  slow[0] = 20.0;
  std::vector<FleetNode> nodes = nodes_of({a100_node("n1", a100_medians()), a100_node("n2", slow)});
  nodes.push_back(node_without_results("bad.json", "bad.json", kExitUsage, "unreadable results document: x"));
  const Fleet fleet = build_fleet(nodes, {"bad.json: /host: missing"}, "merge", {});
  const std::string table = render_fleet_table(fleet);
  EXPECT_THAT(table, HasSubstr("HOST      VERDICT       EXIT  REASON\n"));
  EXPECT_THAT(table, HasSubstr("n1        pass          0     8 GPUs at expected link state and bandwidth\n"));
  EXPECT_THAT(table, HasSubstr("bad.json  inconclusive  2     unreadable results document: x\n"));
  EXPECT_THAT(table, HasSubstr("n2    0000:07:00.0  NVIDIA A100-SXM4-80GB  Gen4 x16  h2d_ce  20.00"));
  EXPECT_THAT(table, HasSubstr("problem: bad.json: /host: missing\n"));
  EXPECT_THAT(table, HasSubstr("\npcieval fleet inconclusive: 3 nodes, 2 pass, 1 inconclusive (bad.json); 2 outlier"));
  EXPECT_EQ(table.find(" \n"), std::string::npos);
}

}  // namespace
}  // namespace pcieval
