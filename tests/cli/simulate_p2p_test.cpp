// `pcieval check --simulate SCENARIO --p2p` end to end (issue 28): the p2p
// probes on the simulated node, whose peer traffic takes the route the
// machine's tree gives it (sim/peer_route.hpp): across a switch at the
// narrowest link, through the root complex between root ports, and up to
// the root port and back when a switch port's ACS Control redirects. The
// measurements are asserted here; what the rules make of them is theirs.
// Copies are 32 MiB (--copy-mib) so that a run takes seconds of CPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_runner.hpp"
#include "validate/budget.hpp"

namespace pcieval::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const char* const kHgxGpus[] = {"0000:03:00.0", "0000:04:00.0", "0000:23:00.0", "0000:24:00.0",
                                "0000:83:00.0", "0000:84:00.0", "0000:a3:00.0", "0000:a4:00.0"};

class SimulateP2p : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pcieval-simulate-p2p-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun simulate(const std::string& machine, const Json& more = Json::object(), const std::string& flags = "--p2p") {
    Json scenario{{"machine", (fs::path(PCIEVAL_FIXTURES_DIR) / machine).string()}};
    scenario.update(more);
    const fs::path file = dir_ / "scenario.json";
    std::ofstream(file) << scenario.dump(2);
    const fs::path out = dir_ / "results.json";
    const CliRun run = run_shell(std::string(PCIEVAL_BINARY) + " check --simulate " + shell_quote(file.string()) +
                                     " --copy-mib 32 -q -o " + shell_quote(out.string()) + " " + flags,
                                 dir_);
    document_ = Json::parse(slurp(out), nullptr, false);
    return run;
  }

  // The p2p measurements of `probe` by subject and aggregation.
  [[nodiscard]] std::map<std::pair<std::string, std::string>, Json> measured(const std::string& probe) const {
    std::map<std::pair<std::string, std::string>, Json> found;
    if (document_.is_discarded()) return found;
    for (const Json& m : document_["measurements"]) {
      if (m["probe"] == probe) found[{m["subject"].get<std::string>(), m["aggregation"].get<std::string>()}] = m;
    }
    return found;
  }

  [[nodiscard]] Json probe_run(const std::string& key) const {
    for (const Json& run : document_["probes"]) {
      if (run["key"] == key) return run;
    }
    return Json();
  }

  fs::path dir_;
  Json document_;
};

std::string pair(const std::string& from, const std::string& to) { return from + "->" + to; }

// A lone peer copy across one switch on Gen4 x16 links: 0.9 (the default
// copy efficiency) of the lower of the two directions' budgets (up the
// source's link, down the destination's).
double switch_model_gbps() {
  const auto budget = link_budget(LinkState{PcieGen::kGen4, 16});
  return 0.9 * std::min(direction_budget_gbps(budget.value(), Direction::kHostToDevice).value(),
                        direction_budget_gbps(budget.value(), Direction::kDeviceToHost).value());
}

// Every ordered pair of the HGX's GPUs, with or without the pair a scenario
// took peer access from.
std::vector<std::pair<std::string, std::string>> ordered_pairs() {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const char* a : kHgxGpus) {
    for (const char* b : kHgxGpus) {
      if (std::string(a) != b) pairs.emplace_back(a, b);
    }
  }
  return pairs;
}

// Each measurement's contract: d2d, the two GPUs initiating first, verified,
// trials kept.
void expect_contract(const Json& m, const std::string& from, const std::string& to) {
  EXPECT_EQ(m["direction"], "d2d") << m.dump();
  EXPECT_EQ(m["gpus"], Json::array({from, to})) << m.dump();
  EXPECT_EQ(m["verified"], true) << m.dump();
  EXPECT_EQ(m["trials_gbps"].size(), 5U) << m.dump();
}

TEST_F(SimulateP2p, AHealthyHgxCopiesEveryPairAtItsLinksAndStillPasses) {
  const CliRun run = simulate("hgx_a100_8gpu_gen4");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_FALSE(document_.is_discarded());
  EXPECT_EQ(probe_run("p2p_write_ce")["status"], "ran") << probe_run("p2p_write_ce").dump();
  EXPECT_EQ(probe_run("p2p_staged_ce")["status"], "ran") << probe_run("p2p_staged_ce").dump();
  // --p2p leaves reads and SM copies to --full.
  for (const char* full_only : {"p2p_read_ce", "p2p_write_sm", "p2p_read_sm"}) {
    EXPECT_EQ(probe_run(full_only)["status"], "skipped") << full_only;
    EXPECT_EQ(probe_run(full_only)["reason"], "runs with --full only") << full_only;
  }
  const auto writes = measured("p2p_write_ce");
  const auto staged = measured("p2p_staged_ce");
  EXPECT_EQ(writes.size(), 56U * 2);  // every ordered pair alone, and both ways at once
  EXPECT_EQ(staged.size(), 56U);
  const double model = switch_model_gbps();
  for (const auto& [from, to] : ordered_pairs()) {
    for (const char* aggregation : {"alone", "with_reverse"}) {
      const auto found = writes.find({pair(from, to), aggregation});
      ASSERT_NE(found, writes.end()) << pair(from, to) << " " << aggregation;
      expect_contract(found->second, from, to);
      // Switch pairs and root-complex pairs alike: the links set the rate
      // (the root complex forwards at 26.3 GB/s by default).
      EXPECT_NEAR(found->second["median_gbps"].get<double>() / model, 1.0, 0.02) << pair(from, to);
    }
    const auto host = staged.find({pair(from, to), "alone"});
    ASSERT_NE(host, staged.end()) << pair(from, to);
    expect_contract(host->second, from, to);
    // Through host memory: 22.2/26.3 of the direct rate (the ESC8000A-E12
    // capture the simulator models it on).
    EXPECT_NEAR(host->second["median_gbps"].get<double>() / model, 22.2 / 26.3, 0.02) << pair(from, to);
  }
}

TEST_F(SimulateP2p, AcsRedirectOnOneSwitchMakesItsPairSlowAndLeavesTheOtherSwitchPairsAtTheirLinks) {
  const CliRun run = simulate("hgx_a100_8gpu_acs_redirect",
                              {{"no_peer_access", Json::parse(R"([["0000:03:00.0", "0000:a4:00.0"]])")}});
  ASSERT_FALSE(document_.is_discarded());
  // The verdicts: the redirecting ports named from config space, and the
  // pair's copies low against its own links and slower than staged; every
  // other switch pair passes; the pair without peer access is no fault (it
  // crosses the root complex anyway).
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  std::multimap<std::string, std::string> verdicts;
  for (const Json& v : document_["verdicts"]) {
    verdicts.emplace(v["subject"].get<std::string>(),
                     v["status"].get<std::string>() + " " + v["code"].get<std::string>());
    if (v["code"] == "acs_redirects_peer_traffic") {
      EXPECT_THAT(v["reason"].get<std::string>(), HasSubstr("0000:82:00.0"));
      EXPECT_THAT(v["remediation"].get<std::string>(), HasSubstr("setpci -s 0000:82:00.0 ECAP_ACS+0x6.w=0000"));
    }
  }
  const auto codes_of = [&verdicts](const std::string& subject) {
    std::vector<std::string> codes;
    for (auto [it, end] = verdicts.equal_range(subject); it != end; ++it) codes.push_back(it->second);
    return codes;
  };
  for (const char* gpu : {"0000:83:00.0", "0000:84:00.0"}) {
    EXPECT_THAT(codes_of(gpu), ::testing::Contains("misconfigured acs_redirects_peer_traffic")) << gpu;
  }
  for (const auto& subject : {pair("0000:83:00.0", "0000:84:00.0"), pair("0000:84:00.0", "0000:83:00.0")}) {
    EXPECT_THAT(codes_of(subject), ::testing::UnorderedElementsAre("misconfigured peer_slower_than_host_staged",
                                                                   "bandwidth_low peer_bandwidth_below_budget"))
        << subject;
  }
  for (const auto& subject : {pair("0000:03:00.0", "0000:04:00.0"), pair("0000:a4:00.0", "0000:a3:00.0")}) {
    EXPECT_THAT(codes_of(subject), ::testing::ElementsAre("pass peer_bandwidth_at_budget")) << subject;
  }
  EXPECT_TRUE(codes_of(pair("0000:03:00.0", "0000:a4:00.0")).empty());
  EXPECT_THAT(codes_of("0000:03:00.0"), ::testing::Contains("pass path_settings_as_expected"));
  const auto writes = measured("p2p_write_ce");
  const auto median = [&writes](const std::string& from, const std::string& to, const char* aggregation = "alone") {
    const auto found = writes.find({pair(from, to), aggregation});
    if (found == writes.end()) {
      ADD_FAILURE() << "no p2p_write_ce " << aggregation << " of " << pair(from, to);
      return 0.0;
    }
    expect_contract(found->second, from, to);
    return found->second["median_gbps"].get<double>();
  };
  const double model = switch_model_gbps();
  for (const auto& [a, b] : {std::pair{"0000:03:00.0", "0000:04:00.0"}, std::pair{"0000:23:00.0", "0000:24:00.0"},
                             std::pair{"0000:a3:00.0", "0000:a4:00.0"}}) {
    EXPECT_NEAR(median(a, b) / model, 1.0, 0.02) << a;
    EXPECT_NEAR(median(b, a) / model, 1.0, 0.02) << b;
  }
  // The redirected pair, both ways and both at once: the detour's rate
  // (acs_detour_peer_gbps, 10.5 by default), well below its neighbours'.
  for (const char* aggregation : {"alone", "with_reverse"}) {
    for (const auto& [from, to] :
         {std::pair{"0000:83:00.0", "0000:84:00.0"}, std::pair{"0000:84:00.0", "0000:83:00.0"}}) {
      const double slow = median(from, to, aggregation);
      EXPECT_NEAR(slow, 10.5, 0.2) << pair(from, to) << " " << aggregation;
      EXPECT_LT(slow, 0.5 * median("0000:03:00.0", "0000:04:00.0")) << pair(from, to);
    }
  }
  // The same pair staged through the host is faster than its peer copy:
  // the signature of a detour, not of a slow link.
  const auto staged = measured("p2p_staged_ce");
  const auto host = staged.find({pair("0000:83:00.0", "0000:84:00.0"), "alone"});
  ASSERT_NE(host, staged.end());
  EXPECT_GT(host->second["median_gbps"].get<double>(), median("0000:83:00.0", "0000:84:00.0"));

  // The pair without peer access: said so, never a slow peer copy, and
  // measured staged both ways.
  const Json write_run = probe_run("p2p_write_ce");
  EXPECT_EQ(write_run["status"], "ran") << write_run.dump();
  std::vector<std::string> warnings = write_run["warnings"];
  for (const auto& [from, to] :
       {std::pair{"0000:03:00.0", "0000:a4:00.0"}, std::pair{"0000:a4:00.0", "0000:03:00.0"}}) {
    EXPECT_THAT(warnings, ::testing::Contains(HasSubstr(pair(from, to) + ": no peer access"))) << write_run.dump();
    EXPECT_EQ(writes.count({pair(from, to), "alone"}), 0U) << pair(from, to);
    EXPECT_EQ(writes.count({pair(from, to), "with_reverse"}), 0U) << pair(from, to);
    ASSERT_EQ(staged.count({pair(from, to), "alone"}), 1U) << pair(from, to);
    expect_contract(staged.at({pair(from, to), "alone"}), from, to);
  }
  EXPECT_EQ(writes.size(), 54U * 2);
  EXPECT_EQ(staged.size(), 56U);
}

// Data that does not verify is no number: the pair whose copies land wrong
// is a probe failure naming the pair and the copy, and the other way of the
// pair (copied by the healthy GPU) is still measured.
TEST_F(SimulateP2p, ACorruptedPeerCopyIsAFailureNamingThePairAndNoNumber) {
  static_cast<void>(simulate("two_gpus_shared_x8_uplink",
                             {{"gpus", {{"0000:04:00.0", {{"faults", {{{"event", "corrupt_copy"}}}}}}}}}));
  ASSERT_FALSE(document_.is_discarded());
  const Json write_run = probe_run("p2p_write_ce");
  EXPECT_EQ(write_run["status"], "failed") << write_run.dump();
  const std::string reason = write_run["reason"];
  EXPECT_THAT(reason, HasSubstr("0000:04:00.0->0000:03:00.0"));
  EXPECT_THAT(reason, HasSubstr("differ from the source after the copy"));
  const auto writes = measured("p2p_write_ce");
  EXPECT_EQ(writes.count({pair("0000:04:00.0", "0000:03:00.0"), "alone"}), 0U);
  EXPECT_EQ(writes.count({pair("0000:03:00.0", "0000:04:00.0"), "alone"}), 1U);
}

TEST_F(SimulateP2p, WithoutP2pNoPeerProbeRunsAndEachSaysWhichFlagRunsIt) {
  const CliRun run = simulate("two_gpus_shared_x8_uplink", Json::object(), "");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(probe_run("p2p_write_ce")["reason"], "runs with --p2p or --full");
  EXPECT_EQ(probe_run("p2p_staged_ce")["reason"], "runs with --p2p or --full");
  EXPECT_EQ(probe_run("p2p_read_sm")["reason"], "runs with --full only");
  EXPECT_TRUE(measured("p2p_write_ce").empty());
}

}  // namespace
}  // namespace pcieval::testing
