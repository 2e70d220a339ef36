// Issue 29 item 12 end to end: a sysfs read that never returns (a config read
// held by a wedged GPU) ends `check` within the sysfs deadline with an
// inconclusive verdict naming the file, not a hang and never a pass. The
// stall is injected with PCIEVAL_TEST_STALL_SYSFS_READ (app/check_command.cpp):
// a FIFO can no longer stand in for it, sysfs reads refuse one on its type.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// hgx_a100_8gpu_gen4: an HGX A100 8-GPU board, every GPU at Gen4 x16; GPU
// 0000:84:00.0 is the one the reproduction attacks.
TEST(SysfsDeadline, AHungReadOfAGpusLinkIsInconclusiveNamingTheFileWithinTheDeadline) {
  const fs::path root = fs::canonical(fixture("hgx_a100_8gpu_gen4"));
  const fs::path gpu = fs::canonical(root / "sys" / "bus" / "pci" / "devices" / "0000:84:00.0");
  const std::string stalled = (gpu / "current_link_speed").string();
  const fs::path out = fs::temp_directory_path() / ("pcieval-deadline-" + std::to_string(::getpid()) + ".json");

  const auto started = std::chrono::steady_clock::now();
  const CliRun stalled_run =
      run_shell("PCIEVAL_TEST_STALL_SYSFS_READ=" + shell_quote(stalled) + " " + std::string(PCIEVAL_BINARY) +
                    " check --no-probes -q --sysfs-root " + shell_quote((root / "sys").string()) + " --topology-xml " +
                    shell_quote((root / "topology.xml").string()) + " -o " + shell_quote(out.string()),
                fs::temp_directory_path());
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  EXPECT_EQ(stalled_run.exit_code, 3) << stalled_run.out << stalled_run.err;
  EXPECT_LT(took_s, 15.0) << "the 5 s deadline, not a hang";
  const auto document = nlohmann::json::parse(slurp(out), nullptr, false);
  fs::remove(out);
  ASSERT_FALSE(document.is_discarded());
  bool named = false;
  for (const auto& verdict : document["verdicts"]) {
    if (verdict["subject"] != "0000:84:00.0") continue;
    EXPECT_EQ(verdict["status"], "inconclusive") << verdict.dump();
    EXPECT_THAT(verdict["reason"].get<std::string>(), HasSubstr(stalled + " did not return within 5 s"));
    named = true;
  }
  EXPECT_TRUE(named) << document["verdicts"].dump();
  // Every other device (the seven other GPUs, the switches' NVMe drives and
  // NICs) was read and judged as usual.
  std::size_t passes = 0;
  for (const auto& verdict : document["verdicts"]) passes += verdict["status"] == "pass" ? 1 : 0;
  EXPECT_GE(document["verdicts"].size(), 9U);
  EXPECT_EQ(passes, document["verdicts"].size() - 1) << document["verdicts"].dump();
}

}  // namespace
}  // namespace pcieval::testing
