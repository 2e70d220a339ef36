// What every GPU test shares: why it cannot run here, whether a GPU is
// required (then a skip is a failure), and the ceiling above which a measured
// rate means a broken timer rather than a fast link.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/cuda_device.hpp"

// 1 when the build was configured with -DPCIEVAL_REQUIRE_GPU=ON.
#ifndef PCIEVAL_REQUIRE_GPU
#define PCIEVAL_REQUIRE_GPU 0
#endif

namespace pcieval::testing {

// No host link today moves more than this (PCIe Gen6 x16 is about 121 GB/s
// per direction, NVLink-C2C about 450): above it the timer is broken.
inline constexpr double kSaneCeilingGbps = 1000;

// nullopt when a CUDA device can be used; otherwise the reason, for GTEST_SKIP.
inline std::optional<std::string> no_gpu_reason() {
  if (!built_with_cuda()) return std::string(kBuiltWithoutCudaMessage);
  auto count = cuda_device_count();
  if (!count) return "no usable CUDA device: " + count.error().message;
  return std::nullopt;
}

// Whether a missing GPU fails the test instead of skipping it: on a GPU node
// (make gpu-check sets it when nvidia-smi lists a GPU) a run must never come
// out green by skipping. Set by the build option PCIEVAL_REQUIRE_GPU, or at
// run time by the environment variable PCIEVAL_REQUIRE_GPU=1, so that a tree
// built elsewhere (gpu-check -b) needs no rebuild.
[[nodiscard]] inline bool gpu_required_by(bool build_option, const char* environment_value) {
  return build_option || (environment_value != nullptr && std::string_view(environment_value) == "1");
}
[[nodiscard]] inline bool gpu_required() {
  return gpu_required_by(PCIEVAL_REQUIRE_GPU != 0, std::getenv("PCIEVAL_REQUIRE_GPU"));
}

enum class GpuTestAction { kRun, kSkip, kFail };

// What a GPU test does, given why it cannot run (nullopt: it can) and whether
// a GPU is required.
[[nodiscard]] inline GpuTestAction gpu_test_action(const std::optional<std::string>& cannot_run, bool required) {
  if (!cannot_run) return GpuTestAction::kRun;
  return required ? GpuTestAction::kFail : GpuTestAction::kSkip;
}

inline constexpr std::string_view kRequiredPrefix =
    "PCIEVAL_REQUIRE_GPU is set, so this GPU test fails instead of skipping: ";

}  // namespace pcieval::testing

// Skips (or, where a GPU is required, fails) the test with `reason` when the
// GPU part it needs is missing: no CUDA, no device, no hwloc topology. Not for
// a machine of the wrong shape (one GPU where two are needed, one NUMA node):
// those skip by name with GTEST_SKIP even on a GPU node.
#define GPU_TEST_SKIP(reason)                                                                                     \
  do {                                                                                                            \
    const std::string pcieval_skip_reason = (reason);                                                             \
    if (::pcieval::testing::gpu_required()) FAIL() << ::pcieval::testing::kRequiredPrefix << pcieval_skip_reason; \
    GTEST_SKIP() << pcieval_skip_reason;                                                                          \
  } while (false)

#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    if (auto pcieval_no_gpu = ::pcieval::testing::no_gpu_reason()) GPU_TEST_SKIP(*pcieval_no_gpu); \
  } while (false)
