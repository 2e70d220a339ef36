// One process's part of a fleet all-reduce on this machine's GPUs, as the
// only process of the "fleet": its unique id made here, ranks 0..n-1 of n.
// The MPI exchange around it is tested in tests/mpi_exchange; this runs the
// NCCL side for real. Skips, with the reason, without CUDA, with fewer than
// 2 GPUs, or without libnccl.so.2.
#include <gtest/gtest.h>

#include "bench/nccl_part.hpp"
#include "gpu/gpu_test_util.hpp"
#include "kernels/cuda_device.hpp"

namespace pcieval {
namespace {

TEST(NcclFleetPartOnGpu, EveryLocalGpuIsARankAndEveryTrialIsTimed) {
  SKIP_WITHOUT_GPU();
  auto ordinals = allreduce_part_ordinals();
  if (!ordinals) GTEST_SKIP() << ordinals.error().message;
  if (ordinals.value().size() < 2) GTEST_SKIP() << "an all-reduce needs 2 or more GPUs";
  auto id = make_nccl_unique_id();
  ASSERT_TRUE(id.ok()) << id.error().message;
  AllReducePart part;
  part.id = id.value();
  part.first_rank = 0;
  part.total_ranks = static_cast<int>(ordinals.value().size());
  part.ordinals = ordinals.value();
  part.size_bytes = std::uint64_t{64} << 20;
  part.warmup_trials = 1;
  part.trials = 3;
  int barriers = 0;
  part.before_trial = [&] {
    ++barriers;
    return ok_status();
  };
  NcclProbeOptions options;
  options.timeout_s = 30;
  const auto result = run_allreduce_part(part, options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(barriers, 4);
  ASSERT_EQ(result.value().trial_s.size(), 3U);
  for (double seconds : result.value().trial_s) {
    // 64 MiB through any transport takes more than 10 us and less than 10 s.
    EXPECT_GT(seconds, 1e-5);
    EXPECT_LT(seconds, 10.0);
  }
  EXPECT_FALSE(result.value().warnings.empty()) << "the transport is stated";
}

}  // namespace
}  // namespace pcieval
