#include "validate/probe_rules.hpp"

#include <gtest/gtest.h>

namespace pcieval {
namespace {

ProbeRun run(const char* key, ProbeStatus status, const char* reason) {
  ProbeRun r;
  r.key = key;
  r.status = status;
  r.reason = reason;
  return r;
}

TEST(ProbeRules, OnlyFailedProbesBecomeVerdicts) {
  Evidence evidence;
  evidence.probes = {run("h2d_ce", ProbeStatus::kRan, ""),
                     run("d2h_ce", ProbeStatus::kFailed, "GPU 0000:ca:00.0: 12 of 33554432 words wrong"),
                     run("sweep_ce", ProbeStatus::kSkipped, "runs with --full only")};
  const auto verdicts = judge_probes(evidence);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "probe d2h_ce");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kProbeFailed);
  EXPECT_EQ(verdicts[0].reason, "d2h_ce could not measure: GPU 0000:ca:00.0: 12 of 33554432 words wrong");
  EXPECT_FALSE(verdicts[0].link);
  EXPECT_NE(verdicts[0].remediation.find("dmesg"), std::string::npos);
  EXPECT_EQ(overall_of(verdicts), Overall::kInconclusive);
}

TEST(ProbeRules, NoProbesNoVerdicts) { EXPECT_TRUE(judge_probes(Evidence{}).empty()); }

}  // namespace
}  // namespace pcieval
