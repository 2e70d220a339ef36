// The p2p probes' engine (bench/p2p_probes.cpp) on the simulated node: every
// probe --full runs, on two A100s behind one switch (fixture
// two_gpus_shared_x8_uplink), with the contract of its measurements and the
// peer access it leaves as it found it. These need the simulator's libcuda:
// ctest's bench_sim.p2p_probes_on_the_simulated_node sets it up
// (tests/CMakeLists.txt); run without PCIEVAL_SIM_SCENARIO they skip, saying so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "bench/probe.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/peer_access.hpp"
#include "topology/discover.hpp"

namespace pcieval {
namespace {

constexpr const char* kFirst = "0000:03:00.0";
constexpr const char* kSecond = "0000:04:00.0";

class P2pProbesOnSimulatedNode : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* scenario = std::getenv("PCIEVAL_SIM_SCENARIO");
    if (scenario == nullptr || *scenario == '\0') {
      GTEST_SKIP() << "needs the simulated node: ctest runs this as bench_sim.p2p_probes_on_the_simulated_node";
    }
    DiscoveryOptions options;
    options.sysfs_root = std::filesystem::path(PCIEVAL_FIXTURES_DIR) / "two_gpus_shared_x8_uplink" / "sys";
    auto discovered = discover(options);
    ASSERT_TRUE(discovered.ok()) << discovered.error().message;
    evidence_ = std::move(discovered).value();
    config_.mode = ProbeMode::kFull;
    config_.size_bytes = std::uint64_t{4} << 20;
  }

  Evidence evidence_;
  RunConfig config_;
};

TEST_F(P2pProbesOnSimulatedNode, EveryP2pProbeCopiesThePairEachWayAndBothWaysVerifiedAtItsRoute) {
  const ProbeContext context{evidence_, config_};
  // Each probe's method and rate as a fraction of the copy engine's direct
  // rate on this switch route: the SM copy's efficiency is 0.85 where the
  // copy engine's is 0.9. Staged copies go up to the host and back, over the
  // switch's x8 uplink (half the rate) both ways, at 22.2/26.3 of it.
  const std::map<std::string, std::pair<CopyMethod, double>> expected = {
      {"p2p_write_ce", {CopyMethod::kCopyEngine, 1.0}},
      {"p2p_read_ce", {CopyMethod::kCopyEngine, 1.0}},
      {"p2p_write_sm", {CopyMethod::kSmKernel, 0.85 / 0.9}},
      {"p2p_read_sm", {CopyMethod::kSmKernel, 0.85 / 0.9}},
      {"p2p_staged_ce", {CopyMethod::kCopyEngine, 0.5 * 22.2 / 26.3}}};
  // Set by p2p_write_ce, the registry's first p2p probe: 0.9 of a Gen4 x16
  // link (the x8 uplink above the switch is not on the route).
  double direct_gbps = 0;
  int probes = 0;
  for (const auto& probe : make_probe_registry()) {
    if (!probe->peer_to_peer()) continue;
    ++probes;
    const std::string key(probe->key());
    ASSERT_FALSE(probe->skip_reason(context).has_value()) << key << ": " << *probe->skip_reason(context);
    const ProbeMeasurements out = probe->run(context);
    EXPECT_TRUE(out.errors.empty()) << key << ": " << ::testing::PrintToString(out.errors);
    EXPECT_TRUE(out.gpu_faults.empty()) << key;
    const bool staged = key == "p2p_staged_ce";
    std::set<std::pair<std::string, std::string>> seen;
    for (const Measurement& m : out.measurements) {
      EXPECT_EQ(m.probe, key);
      EXPECT_EQ(m.direction, Direction::kDeviceToDevice);
      EXPECT_EQ(m.method, expected.at(key).first) << key;
      EXPECT_TRUE(m.verified);
      ASSERT_EQ(m.gpus.size(), 2U);
      // The arrow follows the bytes: a read's come from the peer, gpus[1].
      const bool read = key.find("read") != std::string::npos;
      EXPECT_EQ(m.subject, read ? to_string(m.gpus[1]) + "->" + to_string(m.gpus[0])
                                : to_string(m.gpus[0]) + "->" + to_string(m.gpus[1]));
      if (key == "p2p_write_ce" && direct_gbps == 0) {
        direct_gbps = m.stats.median_gbps;
        EXPECT_GT(direct_gbps, 20.0);
        EXPECT_LT(direct_gbps, 28.0);
      }
      EXPECT_NEAR(m.stats.median_gbps / (direct_gbps * expected.at(key).second), 1.0, 0.02) << key << " " << m.subject;
      seen.insert({m.subject, std::string(to_string(m.aggregation))});
    }
    std::set<std::pair<std::string, std::string>> wanted = {{std::string(kFirst) + "->" + kSecond, "alone"},
                                                            {std::string(kSecond) + "->" + kFirst, "alone"}};
    if (!staged) {
      wanted.insert({std::string(kFirst) + "->" + kSecond, "with_reverse"});
      wanted.insert({std::string(kSecond) + "->" + kFirst, "with_reverse"});
    }
    EXPECT_EQ(seen, wanted) << key;
    // CUDA's answer for each ordered pair, once per probe.
    ASSERT_EQ(out.peer_status.size(), 2U) << key;
    for (const PeerStatus& status : out.peer_status) {
      EXPECT_EQ(status.capability, PeerCapability::kAccess);
      EXPECT_EQ(status.status, "ok");
      EXPECT_EQ(status.source, "cuda");
    }
  }
  EXPECT_EQ(probes, 5);
  // Every probe put peer access back as it found it (off): enabling it now
  // is a change again.
  const int first = cuda_ordinal_of(parse_pci_address(kFirst).value()).value();
  const int second = cuda_ordinal_of(parse_pci_address(kSecond).value()).value();
  auto enabled = PeerAccessScope::enable(first, second);
  ASSERT_TRUE(enabled.ok()) << enabled.error().message;
  EXPECT_TRUE(enabled.value().changed());
}

}  // namespace
}  // namespace pcieval
