// The fleet all-reduce's bookkeeping over real MPI ranks, with no GPU:
// `mpirun --oversubscribe -np 3` of this binary, each rank a node whose CUDA
// and NCCL are test doubles (the hooks), so the offers, the plan with the
// unique id and first ranks, the barriers and the slowest-node arithmetic
// cross real MPI. Every rank runs every test in the same order (each is a
// collective); a failed assertion on any rank fails mpirun.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "app/mpi_fleet_allreduce.hpp"

namespace pcieval::app {
namespace {

const std::vector<std::string> kHosts{"gpu-a01", "gpu-a02", "gpu-a03"};
constexpr std::uint64_t kSizeBytes = std::uint64_t{256} << 20;

int node_index() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

NcclUniqueId test_id() {
  NcclUniqueId id{};
  for (std::size_t i = 0; i < kNcclUniqueIdBytes; ++i) id.internal[i] = static_cast<char>(255 - i);
  return id;
}

FleetAllReduceSettings settings() {
  FleetAllReduceSettings s;
  s.size_bytes = kSizeBytes;
  s.warmup_trials = 1;
  s.trials = 3;
  s.timeout_s = 30;
  s.barrier_timeout_s = 5;
  return s;
}

// Node i offers i + 1 GPUs; node 1 is twice as slow as the others, and its
// times grow with the trial.
double trial_seconds(int node, int trial) { return 0.01 * (trial + 1) * (node == 1 ? 2 : 1); }

struct Calls {
  int parts = 0;
  int barriers = 0;
  AllReducePart seen;
};

FleetAllReduceHooks hooks(Calls& calls, std::string failing_gpus = {}, std::string failing_part = {}) {
  const int node = node_index();
  FleetAllReduceHooks h;
  h.local_gpus = [node, failing_gpus]() -> Result<std::vector<int>> {
    if (!failing_gpus.empty() && node == 2) return make_error(failing_gpus);
    std::vector<int> ordinals;
    for (int i = 0; i <= node; ++i) ordinals.push_back(i);
    return ordinals;
  };
  h.unique_id = [node]() -> Result<NcclUniqueId> {
    EXPECT_EQ(node, 0) << "only node 0 makes the unique id";
    return test_id();
  };
  h.run_part = [node, failing_part, &calls](const AllReducePart& part) -> Result<AllReducePartResult> {
    ++calls.parts;
    calls.seen = part;
    AllReducePartResult result;
    for (int trial = 0; trial < part.warmup_trials + part.trials; ++trial) {
      if (auto lined_up = part.before_trial(); !lined_up) return lined_up.error();
      ++calls.barriers;
      if (trial >= part.warmup_trials) result.trial_s.push_back(trial_seconds(node, trial - part.warmup_trials));
    }
    // A failure after the last barrier leaves no peer waiting at one.
    if (!failing_part.empty() && node == 1) return make_error(failing_part);
    result.warnings.push_back("NCCL 2.28.3, transport left to NCCL");
    return result;
  };
  return h;
}

TEST(FleetAllReduceExchange, EveryNodeGetsTheIdAndItsRanksAndNodeZeroTheSlowestTimes) {
  Calls calls;
  const FleetAllReduceOutcome outcome = run_fleet_allreduce(MPI_COMM_WORLD, kHosts, true, settings(), hooks(calls));
  const int node = node_index();
  ASSERT_EQ(calls.parts, 1);
  EXPECT_EQ(calls.barriers, 4);  // one warm-up and three timed trials
  EXPECT_EQ(std::string(calls.seen.id.internal, kNcclUniqueIdBytes),
            std::string(test_id().internal, kNcclUniqueIdBytes));
  const int first_rank[] = {0, 1, 3};
  EXPECT_EQ(calls.seen.first_rank, first_rank[node]);
  EXPECT_EQ(calls.seen.total_ranks, 6);
  EXPECT_EQ(calls.seen.ordinals.size(), static_cast<std::size_t>(node + 1));
  EXPECT_EQ(calls.seen.size_bytes, kSizeBytes);
  EXPECT_EQ(calls.seen.trials, 3);
  EXPECT_FALSE(outcome.abandoned);
  if (node != 0) return;
  const FleetAllReduce& entry = outcome.entry;
  EXPECT_EQ(entry.status, FleetAllReduceStatus::kMeasured) << entry.reason;
  EXPECT_EQ(entry.nodes, 3);
  EXPECT_EQ(entry.gpus, 6);
  ASSERT_EQ(entry.trials_busbw_gbps.size(), 3U);
  for (int trial = 0; trial < 3; ++trial) {
    // The slowest node (1) sets each trial's time; busbw = algbw x 2(6-1)/6.
    const double algbw = static_cast<double>(kSizeBytes) / trial_seconds(1, trial) / 1e9;
    EXPECT_NEAR(entry.trials_busbw_gbps[static_cast<std::size_t>(trial)], algbw * 10.0 / 6.0, 1e-9);
  }
  EXPECT_NEAR(entry.median_algbw_gbps, static_cast<double>(kSizeBytes) / trial_seconds(1, 1) / 1e9, 1e-9);
  ASSERT_EQ(entry.notes.size(), 3U);
  EXPECT_EQ(entry.notes[1], "gpu-a02: NCCL 2.28.3, transport left to NCCL");
}

TEST(FleetAllReduceExchange, ANodeWithoutNcclSkipsItForEveryNodeNamingIt) {
  Calls calls;
  const FleetAllReduceOutcome outcome = run_fleet_allreduce(
      MPI_COMM_WORLD, kHosts, true, settings(), hooks(calls, "NCCL not loadable: libnccl.so.2: cannot open"));
  EXPECT_EQ(calls.parts, 0) << "no node may start a collective that one node cannot join";
  EXPECT_FALSE(outcome.abandoned);
  if (node_index() != 0) return;
  EXPECT_EQ(outcome.entry.status, FleetAllReduceStatus::kSkipped);
  EXPECT_EQ(outcome.entry.reason,
            "not every node can take part: gpu-a03: NCCL not loadable: libnccl.so.2: cannot open");
}

// Last: a failed share makes the job end with MPI_Abort in pcieval-mpi; here
// the failure comes after the last barrier, so no request stays pending.
TEST(FleetAllReduceExchange, ANodeWhoseShareFailsFailsTheAllReduceNamingIt) {
  Calls calls;
  const FleetAllReduceOutcome outcome =
      run_fleet_allreduce(MPI_COMM_WORLD, kHosts, true, settings(),
                          hooks(calls, {}, "CUDA device 1: 12 of 67108864 floats of the all-reduce result differ"));
  EXPECT_EQ(calls.parts, 1);
  if (node_index() != 0) return;
  EXPECT_EQ(outcome.entry.status, FleetAllReduceStatus::kFailed);
  EXPECT_EQ(outcome.entry.reason, "gpu-a02: CUDA device 1: 12 of 67108864 floats of the all-reduce result differ");
  EXPECT_TRUE(outcome.abandoned);
}

// The other ranks' failures, one line each, named by rank: their full
// printers would repeat rank 0's output.
class FailureLines : public ::testing::EmptyTestEventListener {
 public:
  explicit FailureLines(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "rank %d: %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace pcieval::app

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints; every rank's failures still count.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new pcieval::app::FailureLines(rank));
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
