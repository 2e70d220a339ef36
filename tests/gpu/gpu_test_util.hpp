// What every GPU test shares: why it cannot run here, and the ceiling above
// which a measured rate means a broken timer rather than a fast link.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "kernels/cuda_device.hpp"

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

}  // namespace pcieval::testing

#define SKIP_WITHOUT_GPU()                                                          \
  do {                                                                              \
    if (auto reason = ::pcieval::testing::no_gpu_reason()) GTEST_SKIP() << *reason; \
  } while (false)
