// The fleet all-reduce's pure part: who takes part, what the nodes' trial
// times add up to, and how the entry shows in the fleet document, table and
// page. The MPI exchange itself runs under mpirun in
// tests/mpi_exchange/fleet_allreduce_exchange.cpp.
#include "fleet/fleet_allreduce.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fleet/fleet.hpp"
#include "fleet/fleet_html.hpp"
#include "fleet/fleet_json.hpp"
#include "fleet/fleet_table.hpp"
#include "fleet_test_data.hpp"
#include "report/schema_validation.hpp"

namespace pcieval {
namespace {

using testing::a100_medians;
using testing::a100_node;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::uint64_t k256MiB = std::uint64_t{256} << 20;

TEST(FleetAllReducePlan, RanksFollowTheNodesInOrder) {
  const AllReducePlan plan = plan_fleet_allreduce({{"dgx-01", 8, ""}, {"dgx-02", 4, ""}, {"dgx-03", 8, ""}});
  ASSERT_TRUE(plan.go) << plan.reason;
  EXPECT_EQ(plan.first_ranks, (std::vector<int>{0, 8, 12}));
  EXPECT_EQ(plan.total_ranks, 20);
}

TEST(FleetAllReducePlan, OneNodeIsItsOwnProbe) {
  const AllReducePlan plan = plan_fleet_allreduce({{"dgx-01", 8, ""}});
  EXPECT_FALSE(plan.go);
  EXPECT_THAT(plan.reason, HasSubstr("a fleet of one node"));
}

TEST(FleetAllReducePlan, ANodeThatCannotTakePartStopsItForAllAndIsNamed) {
  const AllReducePlan plan = plan_fleet_allreduce(
      {{"dgx-01", 8, ""}, {"dgx-02", 0, "NCCL not loadable: libnccl.so.2: cannot open"}, {"dgx-03", 0, ""}});
  EXPECT_FALSE(plan.go);
  EXPECT_EQ(plan.reason,
            "not every node can take part: dgx-02: NCCL not loadable: libnccl.so.2: cannot open; dgx-03: no GPU");
}

TEST(FleetAllReducePlan, TheSameReasonEverywhereIsOneLine) {
  std::vector<AllReduceOffer> offers;
  for (int i = 0; i < 500; ++i) offers.push_back({"node" + std::to_string(i), 0, "built without CUDA"});
  EXPECT_EQ(plan_fleet_allreduce(offers).reason, "not every node can take part: every node: built without CUDA");
  offers[0].why_not.clear();
  offers[0].gpus = 8;
  EXPECT_EQ(plan_fleet_allreduce(offers).reason,
            "not every node can take part: node1, node2, node3 and 496 more: built without CUDA");
}

TEST(FleetAllReduceMeasured, EachTrialTakesTheSlowestNodeAndBusbwUsesAllRanks) {
  // Two nodes of 8 GPUs: 16 ranks, busbw factor 2 x 15 / 16.
  const FleetAllReduce entry =
      measured_fleet_allreduce(2, 16, k256MiB, {{0.010, 0.011, 0.012}, {0.020, 0.010, 0.013}}, {"dgx-01: NCCL"});
  ASSERT_EQ(entry.status, FleetAllReduceStatus::kMeasured) << entry.reason;
  const double bytes = static_cast<double>(k256MiB);
  ASSERT_EQ(entry.trials_busbw_gbps.size(), 3U);
  EXPECT_DOUBLE_EQ(entry.trials_busbw_gbps[0], bytes / 0.020 / 1e9 * 30 / 16);
  EXPECT_DOUBLE_EQ(entry.trials_busbw_gbps[1], bytes / 0.011 / 1e9 * 30 / 16);
  EXPECT_DOUBLE_EQ(entry.trials_busbw_gbps[2], bytes / 0.013 / 1e9 * 30 / 16);
  EXPECT_DOUBLE_EQ(entry.median_algbw_gbps, bytes / 0.013 / 1e9);
  EXPECT_DOUBLE_EQ(entry.median_busbw_gbps, bytes / 0.013 / 1e9 * 30 / 16);
  EXPECT_EQ(entry.notes, std::vector<std::string>{"dgx-01: NCCL"});
}

TEST(FleetAllReduceMeasured, MismatchedOrZeroTimesAreAnErrorNotANumber) {
  EXPECT_EQ(measured_fleet_allreduce(2, 16, k256MiB, {{0.01, 0.01}, {0.01}}, {}).status, FleetAllReduceStatus::kFailed);
  EXPECT_EQ(measured_fleet_allreduce(2, 16, k256MiB, {}, {}).status, FleetAllReduceStatus::kFailed);
  const FleetAllReduce zero = measured_fleet_allreduce(2, 16, k256MiB, {{0.0}, {0.0}}, {});
  EXPECT_EQ(zero.status, FleetAllReduceStatus::kFailed);
  EXPECT_TRUE(zero.trials_busbw_gbps.empty());
}

Fleet two_node_fleet() {
  return build_fleet({node_from_results(a100_node("dgx-01", a100_medians()), "rank 0"),
                      node_from_results(a100_node("dgx-02", a100_medians()), "rank 1")},
                     {}, "mpi", ToolInfo{"pcieval", "0.1.0"});
}

TEST(FleetAllReduceOnTheFleet, AFailedOneMakesAPassingFleetInconclusive) {
  Fleet fleet = two_node_fleet();
  ASSERT_EQ(fleet.exit_code, kExitPass);
  FleetAllReduce failed;
  failed.status = FleetAllReduceStatus::kFailed;
  failed.reason = "dgx-02: all-reduce did not complete within 60 s; communicators aborted";
  attach_fleet_allreduce(fleet, failed);
  EXPECT_EQ(fleet.overall, Overall::kInconclusive);
  EXPECT_EQ(fleet.exit_code, kExitInconclusive);
  EXPECT_THAT(fleet.summary, HasSubstr("the fleet all-reduce failed: dgx-02: all-reduce did not complete"));
}

TEST(FleetAllReduceOnTheFleet, MeasuredOrSkippedLeavesTheVerdictAlone) {
  for (FleetAllReduceStatus status : {FleetAllReduceStatus::kMeasured, FleetAllReduceStatus::kSkipped}) {
    Fleet fleet = two_node_fleet();
    FleetAllReduce entry;
    entry.status = status;
    attach_fleet_allreduce(fleet, entry);
    EXPECT_EQ(fleet.exit_code, kExitPass);
    EXPECT_EQ(fleet.overall, Overall::kPass);
    ASSERT_TRUE(fleet.allreduce.has_value());
  }
}

TEST(FleetAllReduceOnTheFleet, WrittenToTheSchemaReadBackAndShownInTableAndPage) {
  Fleet fleet = two_node_fleet();
  attach_fleet_allreduce(fleet, measured_fleet_allreduce(2, 16, k256MiB, {{0.0125, 0.0126}, {0.0124, 0.0127}},
                                                         {"dgx-01: NCCL 2.28.3, transport left to NCCL"}));
  const std::string text = fleet_to_json(fleet);
  const auto schema = std::filesystem::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "pcieval-fleet.schema.json";
  EXPECT_THAT(testing::schema_errors(text, schema), IsEmpty());
  auto document = nlohmann::json::parse(text);
  document["allreduce"]["status"] = "judged";
  EXPECT_THAT(testing::schema_errors(document.dump(), schema), Not(IsEmpty()));

  const auto read = fleet_from_json(text, "fleet.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read.value().allreduce.has_value());
  EXPECT_EQ(read.value().allreduce->trials_busbw_gbps, fleet.allreduce->trials_busbw_gbps);
  EXPECT_EQ(read.value().allreduce->notes, fleet.allreduce->notes);
  EXPECT_EQ(fleet_to_json(read.value()), text);

  // Slowest node per trial: 12.5 and 12.7 ms; 256 MiB over them is 21.47 and
  // 21.14 GB/s algbw, median 21.31; x 30/16 = 39.95 GB/s busbw.
  const std::string line =
      "fleet all-reduce over 2 nodes, 16 GPUs at 256 MiB: busbw 39.95 GB/s (algbw 21.31), median of 2 trials; "
      "measured, not judged";
  EXPECT_EQ(describe_fleet_allreduce(*fleet.allreduce), line);
  EXPECT_THAT(render_fleet_table(fleet), HasSubstr(line + "\n"));
  const std::string page = render_fleet_html(fleet);
  EXPECT_THAT(page, HasSubstr("<p id=\"allreduce-line\">" + line + "</p>"));
  EXPECT_THAT(page, HasSubstr("dgx-01: NCCL 2.28.3, transport left to NCCL"));
}

TEST(FleetAllReduceOnTheFleet, AMergeHasNoneAndAnOlderDocumentReads) {
  const Fleet fleet = two_node_fleet();
  const std::string text = fleet_to_json(fleet);
  EXPECT_EQ(nlohmann::json::parse(text).count("allreduce"), 0U);
  EXPECT_THAT(render_fleet_table(fleet), Not(HasSubstr("all-reduce")));
  EXPECT_THAT(render_fleet_html(fleet), Not(HasSubstr("allreduce-line")));
  const auto read = fleet_from_json(text, "fleet.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_FALSE(read.value().allreduce.has_value());
}

TEST(FleetAllReduceOnTheFleet, SkippedSaysWhy) {
  FleetAllReduce entry;
  entry.reason = "--no-fleet-allreduce";
  EXPECT_EQ(describe_fleet_allreduce(entry), "fleet all-reduce skipped: --no-fleet-allreduce");
}

}  // namespace
}  // namespace pcieval
