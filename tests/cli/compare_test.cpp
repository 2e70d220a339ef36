// `pcieval compare` on documents that `check` wrote for fixture machines: the
// HGX A100 node with a GPU at x8 (before a reseat) and healthy (after).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class CompareCommand : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    ASSERT_EQ(run_pcieval("check -q " + fixture_args("hgx_a100_8gpu_gpu_x8") + " -o " + shell_quote(path("x8.json")))
                  .exit_code,
              1);
    ASSERT_EQ(
        run_pcieval("check -q " + fixture_args("hgx_a100_8gpu_gen4") + " -o " + shell_quote(path("ok.json"))).exit_code,
        0);
  }
};

TEST_F(CompareCommand, AFixIsExit0AndShowsTheTransition) {
  const auto run = run_pcieval("compare " + shell_quote(path("x8.json")) + " " + shell_quote(path("ok.json")));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("0000:84:00.0 link Gen4 x8 -> Gen4 x16, link_downgraded -> pass\n"));
  EXPECT_THAT(run.out, HasSubstr("compare: nothing got worse; after: pass"));
  EXPECT_THAT(run.out, Not(HasSubstr("WORSE")));
}

TEST_F(CompareCommand, ARegressionIsExit1AndSaysWhat) {
  const auto run = run_pcieval("compare " + shell_quote(path("ok.json")) + " " + shell_quote(path("x8.json")));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("pass -> link_downgraded (WORSE: verdict pass became link_downgraded)"));
  EXPECT_THAT(run.out, HasSubstr("compare: something got worse (after: fail)"));
}

TEST_F(CompareCommand, UnreadableInputIsExit2OnOneLine) {
  const auto run = run_pcieval("compare " + shell_quote(path("ok.json")) + " " + shell_quote(path("missing.json")));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("missing.json"));
  EXPECT_EQ(line_count(run.err), 1);
  EXPECT_EQ(run_pcieval("compare " + shell_quote(path("ok.json"))).exit_code, 2);
}

}  // namespace
}  // namespace pcieval::testing
