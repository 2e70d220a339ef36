// kernels/cuda_driver.hpp without a GPU: the table of entry points resolved
// from a symbol lookup (fakes here; dlsym on libcuda.so.1 in pcieval), the
// texts --version prints, and the embedded PTX module the driver compiles
// (kernels/detail/module.hpp). Loading a real library file is tested end to
// end in tests/cli/cuda_driver_cli_test.cpp (one load per process).
#include "kernels/cuda_driver.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "kernels/cuda_device.hpp"
#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/module.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A lookup that finds every symbol but `absent`, each at a distinct non-null
// address (never called).
auto lookup_without(std::set<std::string> absent) {
  return [absent = std::move(absent), fake = 0](const char* symbol) mutable -> void* {
    if (absent.count(symbol) != 0) return nullptr;
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 + 16 * ++fake));
  };
}

TEST(CudaDriverApi, EveryEntryPointIsBoundFromItsVersionedSymbol) {
  std::set<std::string> asked;
  const auto api = resolve_cuda_driver_api(
      [&asked](const char* symbol) -> void* {
        asked.insert(symbol);
        return reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000));
      },
      "libcuda.so.1");
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_NE(api.value().mem_alloc, nullptr);
  EXPECT_NE(api.value().occupancy_max_active_blocks_per_multiprocessor, nullptr);
  // The 64-bit entry points, never their CUDA 3.x namesakes (cuda.h's macros
  // rename them; dlsym does not).
  for (const char* versioned :
       {"cuMemAlloc_v2", "cuMemFree_v2", "cuMemHostRegister_v2", "cuMemHostGetDevicePointer_v2", "cuMemcpyHtoDAsync_v2",
        "cuMemcpyDtoHAsync_v2", "cuStreamDestroy_v2", "cuEventDestroy_v2"}) {
    EXPECT_EQ(asked.count(versioned), 1U) << versioned;
  }
  for (const char* unversioned : {"cuMemAlloc", "cuMemFree", "cuMemHostRegister", "cuMemcpyHtoDAsync"}) {
    EXPECT_EQ(asked.count(unversioned), 0U) << unversioned;
  }
  // cuEventElapsedTime_v2 arrived with CUDA 12.8: an R535 driver lacks it.
  EXPECT_EQ(asked.count("cuEventElapsedTime"), 1U);
  EXPECT_EQ(asked.count("cuEventElapsedTime_v2"), 0U);
  EXPECT_EQ(asked.size(), cuda_driver_symbols().size());
}

TEST(CudaDriverApi, AMissingEntryPointIsAnErrorNamingItAndTheSupportedDrivers) {
  const auto api = resolve_cuda_driver_api(lookup_without({"cuMemHostRegister_v2", "cuLaunchKernel"}), "libcuda.so.1");
  ASSERT_FALSE(api.ok());
  EXPECT_THAT(api.error().message, HasSubstr("libcuda.so.1 lacks cuMemHostRegister_v2, cuLaunchKernel"));
  EXPECT_THAT(api.error().message, HasSubstr("R535 or later"));
}

TEST(CudaDriverText, VersionsReadAsPeopleWriteThem) {
  EXPECT_EQ(cuda_version_text(12020), "CUDA 12.2");
  EXPECT_EQ(cuda_version_text(13000), "CUDA 13.0");
  EXPECT_EQ(cuda_version_text(12080), "CUDA 12.8");
  EXPECT_EQ(cuda_version_text(0), "CUDA (version unknown)");
  // /proc/driver/nvidia/version of a proprietary and an open kernel module.
  EXPECT_EQ(nvidia_module_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 "
                                  "UTC 2023\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"),
            "535.129.03");
  EXPECT_EQ(nvidia_module_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  "
                                  "(dvs-builder@U16-I3-B13-4-3)  Thu Jan 23 00:43:04 UTC 2025\n"),
            "570.86.15");
  EXPECT_EQ(nvidia_module_version(""), "");
  EXPECT_EQ(nvidia_module_version("GCC version: gcc 12 Kernel Module\n"), "");
}

TEST(CudaDriverErrors, StickyErrorsAreTheOnesThatLeaveTheContextUnusable) {
  for (CuResult sticky : {214, 700, 702, 714, 715, 716, 717, 718, 719}) EXPECT_TRUE(cuda_error_is_sticky(sticky));
  // Out of memory, an invalid value, not ready, no device: the context lives on.
  for (CuResult recoverable : {0, 1, 2, 100, 101, 600, 999}) EXPECT_FALSE(cuda_error_is_sticky(recoverable));
}

// An error names the driver's entry point as a user can look it up, not the
// C++ expression that called it (which read "api.stream_create(...)").
Status create_stream_failing_with(CuResult code) {
  PCIEVAL_CU_TRY("cuStreamCreate", code);
  return ok_status();
}

TEST(CudaDriverErrors, AFailedCallNamesItsEntryPoint) {
  const Status failed = create_stream_failing_with(801);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.error().message, ::testing::StartsWith("cuStreamCreate: "));
  EXPECT_TRUE(create_stream_failing_with(0).ok());
}

// The module the driver compiles on every GPU: what R535 accepts, and every
// kernel that module.cpp loads (and so preloads) and nothing else.
TEST(KernelsModule, DeclaresPtxAnR535DriverCompilesAndHoldsExactlyTheListedKernels) {
  const std::string ptx(detail::kernels_ptx());
  if (ptx.empty()) GTEST_SKIP() << kBuiltWithoutCudaMessage;
  std::smatch version;
  ASSERT_TRUE(std::regex_search(ptx, version, std::regex(R"(\n\.version ([0-9]+)\.([0-9]+)\n)"))) << ptx.substr(0, 400);
  const int major = std::stoi(version[1].str());
  const int minor = std::stoi(version[2].str());
  EXPECT_TRUE(major < 8 || (major == 8 && minor <= 2)) << "PTX " << major << "." << minor << ": R535 reads up to 8.2";
  EXPECT_EQ(version[1].str() + "." + version[2].str(), detail::kKernelsPtxVersion);
  EXPECT_THAT(ptx, HasSubstr("\n.target sm_75\n"));

  std::set<std::string> entries;
  const std::regex entry(R"(\.entry\s+(\w+)\s*\()");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it) {
    entries.insert((*it)[1].str());
  }
  const std::set<std::string> listed(detail::kKernelNames.begin(), detail::kKernelNames.end());
  EXPECT_EQ(entries, listed) << "a kernel of kernels/device/kernels.cu that module.cpp does not load would be "
                                "loaded lazily at its first launch, which can hang behind a latch";
  // The driver reads the image as a C string.
  EXPECT_EQ(detail::kernels_ptx().data()[detail::kernels_ptx().size()], '\0');
  EXPECT_THAT(ptx, Not(HasSubstr(std::string(1, '\0'))));
}

TEST(KernelsModule, GridsAreWholeWarpsAndNeverEmpty) {
  EXPECT_EQ(detail::kThreadsPerBlock % 32, 0U);
  EXPECT_EQ(detail::grid_for(528, 0), 1U);
  EXPECT_EQ(detail::grid_for(528, 1), 1U);
  EXPECT_EQ(detail::grid_for(528, 256 * 10 + 1), 11U);
  EXPECT_EQ(detail::grid_for(528, std::size_t{1} << 30), 528U);
  EXPECT_EQ(detail::grid_for(0, 1000), 1U);
}

}  // namespace
}  // namespace pcieval
