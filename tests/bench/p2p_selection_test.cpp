// Which modes run the GPU-to-GPU probes (--p2p runs those a burn-in needs,
// --full every one), and how what they learn of peer access reaches the
// evidence: with test doubles, no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/measure_rounds.hpp"
#include "bench/probe.hpp"

namespace pcieval {
namespace {

PciAddress bdf(const char* text) { return *parse_pci_address(text); }

class FakeP2pProbe final : public Probe {
 public:
  FakeP2pProbe(std::string key, bool in_p2p, ProbeMeasurements output)
      : key_(std::move(key)), in_p2p_(in_p2p), output_(std::move(output)) {}
  [[nodiscard]] std::string_view key() const override { return key_; }
  [[nodiscard]] std::string_view description() const override { return "a test double"; }
  [[nodiscard]] bool in_quick() const override { return false; }
  [[nodiscard]] bool peer_to_peer() const override { return true; }
  [[nodiscard]] bool in_p2p() const override { return in_p2p_; }
  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext&) const override { return std::nullopt; }
  [[nodiscard]] ProbeMeasurements run(const ProbeContext&) const override { return output_; }

 private:
  std::string key_;
  bool in_p2p_;
  ProbeMeasurements output_;
};

ProbeMeasurements measured_with_status(const char* status) {
  ProbeMeasurements output;
  Measurement m;
  m.probe = "p2p";
  m.subject = "0000:17:00.0->0000:18:00.0";
  m.direction = Direction::kDeviceToDevice;
  m.trials_gbps = {20.0};
  m.stats = summarize_trials(m.trials_gbps);
  m.verified = true;
  output.measurements.push_back(m);
  output.peer_status.push_back(
      PeerStatus{bdf("0000:17:00.0"), bdf("0000:18:00.0"), PeerCapability::kAccess, status, "cuda"});
  return output;
}

// The status of each probe of a registry of one --p2p probe and one
// --full-only p2p probe, under `mode` and `p2p`.
std::map<std::string, std::pair<ProbeStatus, std::string>> statuses(ProbeMode mode, bool p2p,
                                                                    RoundMeasurements* out = nullptr) {
  ProbeRegistry registry;
  registry.push_back(std::make_unique<FakeP2pProbe>("p2p_write_ce", true, measured_with_status("ok")));
  registry.push_back(std::make_unique<FakeP2pProbe>("p2p_read_sm", false, measured_with_status("ok")));
  const Evidence evidence;
  RunConfig config;
  config.mode = mode;
  config.p2p = p2p;
  RoundMeasurements round = run_probes(registry, ProbeContext{evidence, config});
  std::map<std::string, std::pair<ProbeStatus, std::string>> by_key;
  for (const ProbeRun& run : round.runs) by_key[run.key] = {run.status, run.reason};
  if (out != nullptr) *out = std::move(round);
  return by_key;
}

TEST(P2pSelection, APlainQuickRunSkipsEveryP2pProbeSayingWhichFlagRunsIt) {
  const auto by_key = statuses(ProbeMode::kQuick, false);
  EXPECT_EQ(by_key.at("p2p_write_ce"), std::make_pair(ProbeStatus::kSkipped, std::string("runs with --p2p or --full")));
  EXPECT_EQ(by_key.at("p2p_read_sm"), std::make_pair(ProbeStatus::kSkipped, std::string("runs with --full only")));
}

TEST(P2pSelection, P2pRunsTheBurnInProbesOnlyAndFullRunsEveryOne) {
  auto by_key = statuses(ProbeMode::kQuick, true);
  EXPECT_EQ(by_key.at("p2p_write_ce").first, ProbeStatus::kRan);
  EXPECT_EQ(by_key.at("p2p_read_sm").first, ProbeStatus::kSkipped);
  by_key = statuses(ProbeMode::kFull, false);
  EXPECT_EQ(by_key.at("p2p_write_ce").first, ProbeStatus::kRan);
  EXPECT_EQ(by_key.at("p2p_read_sm").first, ProbeStatus::kRan);
}

TEST(P2pSelection, PeerStatusOfEveryProbeReachesTheRoundAndTheEvidenceOncePerPair) {
  RoundMeasurements round;
  static_cast<void>(statuses(ProbeMode::kFull, false, &round));
  // Both probes said the same of one ordered pair.
  ASSERT_EQ(round.peer_status.size(), 2U);
  Evidence evidence;
  RoundOutcome outcome;
  outcome.probes = round;
  ASSERT_TRUE(merge_round(evidence, outcome));
  ASSERT_EQ(evidence.peer_status.size(), 1U);
  EXPECT_EQ(evidence.peer_status[0].gpu, bdf("0000:17:00.0"));
  EXPECT_EQ(evidence.peer_status[0].peer, bdf("0000:18:00.0"));
  EXPECT_EQ(evidence.peer_status[0].capability, PeerCapability::kAccess);
  EXPECT_EQ(evidence.peer_status[0].status, "ok");
  EXPECT_EQ(evidence.peer_status[0].source, "cuda");
  // A second round says it again: still one entry.
  outcome.index = 2;
  ASSERT_TRUE(merge_round(evidence, outcome));
  EXPECT_EQ(evidence.peer_status.size(), 1U);
}

TEST(P2pSelection, TheRegistryHoldsTheFiveP2pProbesAndOnlyWriteAndStagedRunUnderP2p) {
  const ProbeRegistry registry = make_probe_registry();
  std::map<std::string, bool> p2p;
  for (const auto& probe : registry) {
    if (probe->peer_to_peer()) p2p[std::string(probe->key())] = probe->in_p2p();
    if (probe->peer_to_peer()) EXPECT_FALSE(probe->in_quick()) << probe->key();
  }
  const std::map<std::string, bool> expected = {{"p2p_write_ce", true},
                                                {"p2p_read_ce", false},
                                                {"p2p_write_sm", false},
                                                {"p2p_read_sm", false},
                                                {"p2p_staged_ce", true}};
  EXPECT_EQ(p2p, expected);
}

}  // namespace
}  // namespace pcieval
