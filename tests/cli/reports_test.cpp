// --prom and --junit on check: the files land, atomically, and say what the
// verdicts say; a failed output is exit 2 and does not cost the others.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using ReportFlags = ScratchDirTest;

TEST_F(ReportFlags, PrometheusAndJunitFollowTheVerdicts) {
  const auto prom = dir_ / "pcieval.prom";
  const auto junit = dir_ / "pcieval.xml";
  const auto run = run_pcieval("check -q " + fixture_args("hgx_a100_8gpu_gpu_x8") + " --prom " + shell_quote(prom) +
                               " --junit " + shell_quote(junit));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::string metrics = slurp(prom);
  EXPECT_THAT(metrics, HasSubstr("pcieval_overall{result=\"fail\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("pcieval_overall{result=\"pass\"} 0\n"));
  EXPECT_THAT(metrics, HasSubstr("pcieval_device_ok{bdf=\"0000:84:00.0\",kind=\"gpu\"} 0\n"));
  EXPECT_THAT(metrics, HasSubstr("pcieval_device_ok{bdf=\"0000:83:00.0\",kind=\"gpu\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("pcieval_last_run_timestamp_seconds "));
  EXPECT_THAT(metrics, HasSubstr("pcieval_last_run_duration_seconds "));
  const std::string xml = slurp(junit);
  EXPECT_THAT(xml, HasSubstr("failures=\"1\""));
  EXPECT_THAT(xml, HasSubstr("link_width_below_expected"));
}

TEST_F(ReportFlags, OneUnwritableOutputIsExit2AndTheOthersAreStillWritten) {
  const auto junit = dir_ / "pcieval.xml";
  // A directory where the metrics file should go: found only when the file is
  // written. (A missing folder is refused before the run, and then nothing is
  // written: quiet_failures_test.cpp.)
  const auto taken = dir_ / "pcieval.prom";
  std::filesystem::create_directories(taken / "occupied");
  const auto run = run_pcieval("check -q " + fixture_args("hgx_a100_8gpu_gen4") + " --prom " + shell_quote(taken) +
                               " --junit " + shell_quote(junit));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("pcieval.prom"));
  EXPECT_THAT(slurp(junit), HasSubstr("failures=\"0\""));
  EXPECT_THAT(slurp(junit), Not(HasSubstr("<failure")));
}

}  // namespace
}  // namespace pcieval::testing
