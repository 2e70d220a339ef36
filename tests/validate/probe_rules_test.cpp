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

// The faults below model an 8-GPU H100 HGX node (GPUs at 0000:18:00.0,
// 0000:2a:00.0 and 0000:3a:00.0 of its first PCIe switches) where one GPU
// stopped completing copies mid-run, as the engine records it.
GpuFault fault(const char* gpu, const char* error, bool retired) {
  return GpuFault{parse_pci_address(gpu).value(), error, retired};
}

ProbeRun failed_with(const char* key, std::vector<GpuFault> faults, bool only_gpu_faults, const char* reason) {
  ProbeRun r = run(key, ProbeStatus::kFailed, reason);
  r.gpu_faults = std::move(faults);
  r.only_gpu_faults = only_gpu_faults;
  return r;
}

constexpr const char* kHang = "cudaMemcpyAsync h2d did not complete within 30 s on 0000:2a:00.0";
constexpr const char* kRefused = "CUDA device 1 is not used again in this run: cudaMemcpyAsync h2d did not complete";

TEST(ProbeRules, AGpuThatHungFailsOnItsOwnAndItsProbesGiveNoVerdict) {
  Evidence evidence;
  evidence.probes = {
      failed_with("h2d_ce", {fault("0000:2a:00.0", kHang, true)}, true, "GPU 0000:2a:00.0: ..."),
      failed_with("d2h_ce", {fault("0000:2a:00.0", kRefused, true)}, true, "GPU 0000:2a:00.0: ..."),
      run("h2d_sm", ProbeStatus::kRan, ""),
      failed_with("bidir_ce", {fault("0000:2a:00.0", kRefused, true)}, true, "GPU 0000:2a:00.0: ..."),
  };
  const auto verdicts = judge_probes(evidence);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:2a:00.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkErrors);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kGpuUnresponsive);
  EXPECT_EQ(verdicts[0].reason, std::string("0000:2a:00.0 stopped responding in h2d_ce: ") + kHang +
                                    "; it was not used again in this run (not measured by d2h_ce, bidir_ce)");
  EXPECT_NE(verdicts[0].remediation.find("Xid 79"), std::string::npos);
  EXPECT_NE(verdicts[0].remediation.find("nvidia-smi -q -i 0000:2a:00.0"), std::string::npos);
  EXPECT_FALSE(verdicts[0].link);
  EXPECT_EQ(overall_of(verdicts), Overall::kFail);
}

TEST(ProbeRules, AGpuErrorIsAnInconclusiveVerdictForThatGpuNamingEveryProbe) {
  Evidence evidence;
  const char* busy = "cudaSetDevice: all CUDA-capable devices are busy or unavailable";
  const char* wrong = "12 of 33554432 words wrong";
  evidence.probes = {failed_with("h2d_ce", {fault("0000:18:00.0", busy, false)}, true, "GPU 0000:18:00.0: busy"),
                     failed_with("d2h_ce", {fault("0000:18:00.0", busy, false)}, true, "GPU 0000:18:00.0: busy"),
                     failed_with("h2d_sm", {fault("0000:18:00.0", wrong, false)}, true, "GPU 0000:18:00.0: wrong")};
  const auto verdicts = judge_probes(evidence);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:18:00.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kProbeFailed);
  EXPECT_EQ(verdicts[0].reason,
            std::string("0000:18:00.0 could not be measured: h2d_ce, d2h_ce: ") + busy + "; h2d_sm: " + wrong);
  EXPECT_EQ(overall_of(verdicts), Overall::kInconclusive);
}

TEST(ProbeRules, EachFailedGpuHasItsOwnVerdictAndAGroupErrorKeepsTheProbeVerdict) {
  Evidence evidence;
  evidence.probes = {
      failed_with("h2d_ce",
                  {fault("0000:18:00.0", "host buffer: mbind failed", false), fault("0000:2a:00.0", kHang, true)}, true,
                  "GPU 0000:18:00.0: host buffer: mbind failed; GPU 0000:2a:00.0: ..."),
      // An error of the group besides a GPU's fault: the probe is judged too.
      failed_with("group_ce", {fault("0000:2a:00.0", kRefused, true)}, false,
                  "port 0000:17:00.0: fewer than two of its GPUs are usable by CUDA; GPU 0000:2a:00.0: ..."),
  };
  const auto verdicts = judge_probes(evidence);
  ASSERT_EQ(verdicts.size(), 3U);
  EXPECT_EQ(verdicts[0].subject, "probe group_ce");
  EXPECT_EQ(verdicts[0].code, ReasonCode::kProbeFailed);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[1].subject, "0000:18:00.0");
  EXPECT_EQ(verdicts[1].code, ReasonCode::kProbeFailed);
  EXPECT_EQ(verdicts[1].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[2].subject, "0000:2a:00.0");
  EXPECT_EQ(verdicts[2].code, ReasonCode::kGpuUnresponsive);
  EXPECT_EQ(verdicts[2].status, VerdictStatus::kLinkErrors);
  EXPECT_NE(verdicts[2].reason.find("(not measured by group_ce)"), std::string::npos);
  EXPECT_EQ(overall_of(verdicts), Overall::kFail);
}

TEST(ProbeRules, ErrorsAGpuAnsweredBeforeItHungAreNamedInItsVerdict) {
  Evidence evidence;
  evidence.probes = {
      failed_with("h2d_ce", {fault("0000:3a:00.0", "7 of 33554432 words wrong", false)}, true, "..."),
      failed_with("d2h_ce", {fault("0000:3a:00.0", kHang, true)}, true, "..."),
  };
  const auto verdicts = judge_probes(evidence);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kGpuUnresponsive);
  EXPECT_EQ(verdicts[0].reason, std::string("0000:3a:00.0 stopped responding in d2h_ce: ") + kHang +
                                    "; it was not used again in this run; it also failed in h2d_ce: 7 of 33554432 "
                                    "words wrong");
}

TEST(ProbeRules, GpuFaultsOfAProbeThatDidNotFailAreNotJudged) {
  // The reader refuses such a document; the rule still judges only failures.
  Evidence evidence;
  ProbeRun ran = run("h2d_ce", ProbeStatus::kRan, "");
  ran.gpu_faults = {fault("0000:18:00.0", "stale", false)};
  evidence.probes = {ran};
  EXPECT_TRUE(judge_probes(evidence).empty());
}

TEST(ProbeRules, OnlyGpuFaultsWithoutFaultsStillGivesTheProbeVerdict) {
  // Fail closed: a failed probe is never left without a verdict.
  Evidence evidence;
  evidence.probes = {failed_with("h2d_ce", {}, true, "the probe returned no measurement")};
  const auto verdicts = judge_probes(evidence);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "probe h2d_ce");
}

}  // namespace
}  // namespace pcieval
