// How pcieval finds the CUDA driver (issue 26): libcuda.so.1 loaded at run
// time, or the library PCIEVAL_CUDA_LIBRARY names, never linked; what
// --version says about it. The stand-in libraries are
// tests/kernels/fake_libcuda.cpp (no GPU behind them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(CudaDriverCli, TheBinaryLinksNoCudaLibrary) {
  const CliRun run = run_shell("readelf -d " + shell_quote(PCIEVAL_BINARY), std::filesystem::temp_directory_path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("(NEEDED)"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("libcuda"))) << run.out;
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("libcudart"))) << run.out;
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("libnvidia-ml"))) << run.out;
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("libnccl"))) << run.out;
}

TEST(CudaDriverCli, VersionNamesTheDriverApiItLoadedAndTheKernels) {
  const CliRun run =
      run_pcieval_with_environment("PCIEVAL_CUDA_LIBRARY=" + shell_quote(PCIEVAL_FAKE_LIBCUDA), "--version");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("pcieval "));
  EXPECT_THAT(run.out, HasSubstr("CUDA driver: CUDA 12.2 driver API (" + std::string(PCIEVAL_FAKE_LIBCUDA) + ")"));
  EXPECT_THAT(run.out, HasSubstr("GPU kernels: "));
}

TEST(CudaDriverCli, ALibraryThatCannotBeLoadedIsNamedWithTheLoadersReason) {
  const CliRun run = run_pcieval_with_environment("PCIEVAL_CUDA_LIBRARY=/nonexistent/libcuda.so.1", "--version");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("CUDA driver: PCIEVAL_CUDA_LIBRARY=/nonexistent/libcuda.so.1 cannot be loaded ("));
  EXPECT_THAT(run.out, HasSubstr("No such file or directory"));
}

TEST(CudaDriverCli, ADriverWithoutAnEntryPointIsTooOldAndSaysWhich) {
  const CliRun run =
      run_pcieval_with_environment("PCIEVAL_CUDA_LIBRARY=" + shell_quote(PCIEVAL_FAKE_LIBCUDA_OLD), "--version");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("lacks cuMemHostRegister_v2: the NVIDIA driver is older than pcieval supports "
                                 "(R535 or later)"));
}

TEST(CudaDriverCli, CuInitsErrorIsReportedWithTheDriversOwnNames) {
  const CliRun run = run_pcieval_with_environment(
      "PCIEVAL_FAKE_CUINIT=100 PCIEVAL_CUDA_LIBRARY=" + shell_quote(PCIEVAL_FAKE_LIBCUDA), "--version");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("CUDA driver: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"));
}

}  // namespace
}  // namespace pcieval::testing
