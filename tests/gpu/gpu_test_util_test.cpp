// The rule every GPU test follows when it cannot run (gpu_test_util.hpp):
// skip with the reason, or fail where a GPU is required (PCIEVAL_REQUIRE_GPU),
// so a run on a GPU node never comes out green by skipping. Needs no GPU.
#include "gpu/gpu_test_util.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace pcieval {
namespace {

using testing::gpu_required_by;
using testing::gpu_test_action;
using testing::GpuTestAction;

TEST(GpuTestRule, AMissingGpuSkipsUnlessAGpuIsRequired) {
  const std::optional<std::string> missing = "no usable CUDA device: CUDA reports no device";
  EXPECT_EQ(gpu_test_action(missing, false), GpuTestAction::kSkip);
  EXPECT_EQ(gpu_test_action(missing, true), GpuTestAction::kFail);
}

TEST(GpuTestRule, AUsableGpuRunsWhetherOrNotItIsRequired) {
  EXPECT_EQ(gpu_test_action(std::nullopt, false), GpuTestAction::kRun);
  EXPECT_EQ(gpu_test_action(std::nullopt, true), GpuTestAction::kRun);
}

TEST(GpuTestRule, TheBuildOptionOrTheEnvironmentRequiresAGpu) {
  EXPECT_FALSE(gpu_required_by(false, nullptr));
  EXPECT_FALSE(gpu_required_by(false, "0"));
  EXPECT_FALSE(gpu_required_by(false, ""));
  EXPECT_TRUE(gpu_required_by(false, "1"));
  EXPECT_TRUE(gpu_required_by(true, nullptr));
  EXPECT_TRUE(gpu_required_by(true, "0")) << "the build option is not undone by the environment";
}

}  // namespace
}  // namespace pcieval
