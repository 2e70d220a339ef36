// Issue 29, item 2: a physical link belongs to the device's function 0, and a
// function other than 0 is judged by function 0's link, not by its own
// LnkCap. On every HGX H100 board the NVSwitch management path is a Switchtec
// switch whose function 0 (81:00.0, the switch upstream port) says LnkCap x2
// and whose function 1 (81:00.1, its management endpoint) claims x16 on the
// same x2 link; judged by its own LnkCap it failed the node
// (link_downgraded), a false drain. Live (a generated sysfs tree) and in
// diagnose (an lspci capture written for this project).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/diagnose_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;

const std::string kMachine = "hgx_h100_8gpu_switchtec_mgmt";
const std::string kManagement = "0000:81:00.1";
const std::string kSharedLink =
    "0000:81:00.1 shares the physical link of its function 0 (0000:81:00.0) and is judged by that link, not by its "
    "own LnkCap (Gen4 x16)";

const json* verdict_of(const json& document, const std::string& subject) {
  for (const json& v : document["verdicts"]) {
    if (v["subject"] == subject) return &v;
  }
  return nullptr;
}

class SharedFunctionLink : public DiagnoseRunner {};

TEST_F(SharedFunctionLink, LiveCheckOfAnHgxH100JudgesTheSwitchtecByFunctionZero) {
  const std::string out = path("check.json");
  const CliRun run = run_pcieval("check --no-probes " + fixture_args(kMachine) + " -q -o " + shell_quote(out));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json document = json::parse(slurp(out), nullptr, false);
  ASSERT_FALSE(document.is_discarded());
  EXPECT_EQ(document["overall"], "pass");
  const json* management = verdict_of(document, kManagement);
  ASSERT_NE(management, nullptr) << "the management endpoint is judged, not skipped";
  EXPECT_EQ((*management)["status"], "pass");
  EXPECT_EQ((*management)["code"], "link_at_expected_state");
  EXPECT_THAT(std::string((*management)["reason"]), HasSubstr("link 0000:81:00.0 <-> 0000:80:01.0 (device link) at "
                                                              "Gen4 x2"));
  EXPECT_THAT(std::string((*management)["reason"]), HasSubstr(kSharedLink));
  // The document keeps the function's own claim beside the link it shares.
  for (const json& device : document["devices"]) {
    if (device["bdf"] != kManagement) continue;
    EXPECT_EQ(device["link"]["max"]["width"], 16);
    ASSERT_EQ(device["path"].size(), 1U);
    EXPECT_EQ(device["path"][0]["downstream"], "0000:81:00.0");
    EXPECT_EQ(device["path"][0]["expected"]["width"], 2);
  }
  // Every GPU is judged, and passes.
  std::size_t gpus = 0;
  for (const json& device : document["devices"]) {
    if (device["kind"] != "gpu") continue;
    ++gpus;
    const json* gpu = verdict_of(document, device["bdf"]);
    ASSERT_NE(gpu, nullptr);
    EXPECT_EQ((*gpu)["status"], "pass") << device["bdf"];
  }
  EXPECT_EQ(gpus, 8U);
}

TEST_F(SharedFunctionLink, DiagnoseOfAnHgxH100CaptureJudgesTheSwitchtecByFunctionZero) {
  const auto [exit_code, document] = diagnose({capture("lspci_hgx_h100_switchtec_nvswitch_mgmt.txt")});
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(verdicts_of(document), Contains("0000:81:00.1 pass link_at_expected_state"));
  EXPECT_THAT(verdicts_of(document), Contains("0000:18:00.0 pass link_at_expected_state"));
  const json* management = verdict_of(document, kManagement);
  ASSERT_NE(management, nullptr);
  EXPECT_THAT(std::string((*management)["reason"]), HasSubstr(kSharedLink));
}

TEST_F(SharedFunctionLink, AFaultOnFunctionZerosLinkStillFailsTheFunctionThatSharesIt) {
  // The same capture with the Switchtec link trained at x1 on both ends: a
  // real downgrade of function 0's link, and 81:00.1 is judged by it.
  std::string text = slurp(capture("lspci_hgx_h100_switchtec_nvswitch_mgmt.txt"));
  const auto narrow = [&text](const std::string& bdf, const std::string& from, const std::string& to) {
    const auto block = text.find(bdf + " ");
    ASSERT_NE(block, std::string::npos) << bdf;
    const auto at = text.find(from, block);
    ASSERT_NE(at, std::string::npos) << bdf;
    text.replace(at, from.size(), to);
  };
  narrow("0000:80:01.0", "LnkSta:\tSpeed 16GT/s, Width x2", "LnkSta:\tSpeed 16GT/s, Width x1");
  narrow("0000:81:00.0", "LnkSta:\tSpeed 16GT/s, Width x2", "LnkSta:\tSpeed 16GT/s, Width x1");
  narrow("0000:81:00.1", "LnkSta:\tSpeed 16GT/s, Width x2 (downgraded)",
         "LnkSta:\tSpeed 16GT/s, Width x1 (downgraded)");
  const std::string file = path("x1.txt");
  write(file, text);
  const auto [exit_code, document] = diagnose({file});
  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(verdicts_of(document),
              Contains("0000:81:00.1 link_downgraded link_width_below_expected 0000:81:00.0<->0000:80:01.0"));
}

}  // namespace
}  // namespace pcieval::testing
