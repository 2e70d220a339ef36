// `pcieval diagnose` on what people really paste: lspci cut by elisions or
// behind a prefix, kernel logs of every logger with time stamps, nvidia-smi
// of GPUs whose ids name no vendor, and replay counters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/diagnose_runner.hpp"
#include "report/schema_validation.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::string kForumP100 = capture("lspci_forum_broadwell_p100_elided.txt");
const std::string kSyslogP100 = capture("syslog_broadwell_p100_port_02_0_corrected_burst.txt");
const std::string kCardGrep = capture("lspci_script_card_grep_2x_rtx3090.txt");
const std::string kPdsh = capture("lspci_pdsh_icelake_a100_x8_hostname_prefix.txt");
const std::string kMailQuote = capture("lspci_mail_quote_icelake_a100_x8.txt");
const std::string kCatN = capture("lspci_cat_n_icelake_a100_x16_numbered.txt");
const std::string kJournalIso = capture("journal_iso_genoa_h100_isolated_correctable.txt");
const std::string kDmesgT = capture("dmesg_T_spr_l40s_riser_16_01_0_correctable_burst.txt");
const std::string kG5Text = capture("nvsmi_aws_g5_12xlarge_4xa10g_replays.txt");
const std::string kG5Xml = capture("nvsmi_aws_g5_xlarge_a10g_odd_device_id.xml");

std::string notes_of(const json& document) {
  std::string notes;
  for (const json& note : document["notes"]) notes += note.get<std::string>() + "\n";
  for (const json& device : document["devices"]) {
    for (const json& note : device["notes"])
      notes += device["bdf"].get<std::string>() + ": " + note.get<std::string>() + "\n";
  }
  return notes;
}

using DiagnosePastesTest = DiagnoseRunner;

TEST_F(DiagnosePastesTest, ForumPostCutByElisionsIsReadWhole) {
  const auto [exit_code, document] = diagnose({kForumP100});
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(verdicts_of(document), ElementsAre("0000:02:00.0 pass link_at_expected_state"));
  EXPECT_THAT(notes_of(document), Not(HasSubstr("ends before its capabilities")));
}

TEST_F(DiagnosePastesTest, SyslogOfKernel44KeepsEveryEventWithItsTime) {
  const auto [exit_code, document] = diagnose({kSyslogP100});
  EXPECT_NE(exit_code, 2);
  ASSERT_EQ(document["captured_events"].size(), 26U);
  for (const json& event : document["captured_events"]) {
    EXPECT_EQ(event["kind"], "correctable_error");
    ASSERT_TRUE(event.contains("time_s")) << event.dump();
  }
  const std::string notes = notes_of(document);
  EXPECT_THAT(notes, HasSubstr(": 26 PCIe events in "));
  EXPECT_THAT(notes, HasSubstr("correctable PCIe errors on 0000:00:02.0: 24 in the log"));
  EXPECT_THAT(notes, HasSubstr("at most 24 within 60 s: below the 61.4 per minute a Gen5 x16 link"));
  EXPECT_THAT(notes, HasSubstr("correctable PCIe errors on 0000:02:00.0: 2 in the log"));
}

TEST_F(DiagnosePastesTest, WithLspciTheBurstIsHeldToThePortsGen3Link) {
  const auto [exit_code, document] = diagnose({kForumP100, kSyslogP100});
  EXPECT_THAT(verdicts_of(document), Contains("0000:02:00.0 pass link_at_expected_state"));
  // Alone the burst is below a Gen5 x16 link's 61.4 per minute; against the
  // port's own Gen3 x16 link (15.4) it is not, and the note no longer says
  // "below": the verdict is drawn where verdicts are gathered
  // (judge_captured_rates, validate/event_rate_rules.hpp).
  std::string port_note;
  for (const json& note : document["notes"]) {
    if (note.get<std::string>().starts_with("correctable PCIe errors on 0000:00:02.0:")) port_note = note;
  }
  EXPECT_THAT(port_note, HasSubstr(": 24 in the log ("));
  EXPECT_THAT(port_note, HasSubstr("at most 24 within 60 s"));
  EXPECT_THAT(port_note, Not(HasSubstr("below")));
  EXPECT_THAT(notes_of(document), HasSubstr("at most 1 within 60 s: below the 15.4 per minute its Gen3 x16 link"));
  EXPECT_THAT(verdicts_of(document), Contains("0000:00:02.0 link_errors correctable_error_burst_logged"));
  EXPECT_EQ(exit_code, 1);
}

TEST_F(DiagnosePastesTest, ValidateReadsTheTimeStampsBack) {
  const auto [exit_code, document] = diagnose({kJournalIso});
  const CliRun again =
      run_pcieval("validate -q " + shell_quote(path("out.json")) + " -o " + shell_quote(path("again.json")));
  EXPECT_TRUE(again.err.empty()) << again.err;
  const json reread = json::parse(slurp(path("again.json")), nullptr, false);
  ASSERT_EQ(reread["captured_events"].size(), 3U);
  EXPECT_EQ(reread["captured_events"], document["captured_events"]);
  const double first = document["captured_events"][0]["time_s"].get<double>();
  const double second = document["captured_events"][1]["time_s"].get<double>();
  EXPECT_DOUBLE_EQ(second - first, 11 * 3600.0 + 14 * 60.0 + 35.0);
  EXPECT_THAT(notes_of(document), HasSubstr("correctable PCIe errors on 0000:41:00.0: 3 in the log (" + kJournalIso));
  EXPECT_THAT(notes_of(document), HasSubstr("at most 1 within 60 s"));
}

TEST_F(DiagnosePastesTest, DmesgDashTBurstIsNamed) {
  const auto [exit_code, document] = diagnose({kDmesgT});
  EXPECT_NE(exit_code, 2);
  EXPECT_EQ(document["captured_events"].size(), 70U);
  EXPECT_THAT(notes_of(document), HasSubstr("correctable PCIe errors on 0000:16:01.0: 70 in the log"));
  EXPECT_THAT(notes_of(document), HasSubstr("at most 70 within 60 s"));
  // 70 in a minute on a Gen5 x16 riser port: over the 61.4 a link within the
  // spec's bit error rate can log.
  EXPECT_THAT(verdicts_of(document), Contains(HasSubstr("link_errors correctable_error_burst_logged")));
  EXPECT_EQ(exit_code, 1);
}

TEST_F(DiagnosePastesTest, ScriptGrepWithCardLabelsIsACapture) {
  const auto [exit_code, document] = diagnose({kCardGrep});
  // Read, not refused (exit 2): no port above either GPU is in the capture.
  EXPECT_EQ(exit_code, 3);
  // 01:00.0 runs at its own LnkCap: its own link passes. 41:00.0 runs x8 of
  // its x16, and without the port above nothing says whether the slot is x8.
  EXPECT_THAT(verdicts_of(document),
              ElementsAre("0000:01:00.0 pass link_at_own_capability", "0000:41:00.0 inconclusive link_path_unknown"));
  ASSERT_EQ(document["devices"].size(), 2U);
  EXPECT_EQ(document["devices"][1]["kind"], "gpu");
  EXPECT_EQ(document["devices"][1]["link"]["current"]["width"], 8);
  EXPECT_THAT(document["verdicts"][1]["reason"].get<std::string>(),
              HasSubstr("runs Gen4 x8, below the Gen4 x16 it can reach on its own"));
}

TEST_F(DiagnosePastesTest, PdshAndMailQuotePrefixesFailTheX8Gpu) {
  for (const std::string& file : {kPdsh, kMailQuote}) {
    const auto [exit_code, document] = diagnose({file});
    EXPECT_EQ(exit_code, 1) << file;
    EXPECT_THAT(verdicts_of(document),
                Contains("0000:17:00.0 link_downgraded link_width_below_expected 0000:17:00.0<->0000:16:02.0"))
        << file;
  }
}

TEST_F(DiagnosePastesTest, LineNumberedPasteAfterTheReseatPasses) {
  const auto [exit_code, document] = diagnose({kCatN});
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(verdicts_of(document), ElementsAre("0000:17:00.0 pass link_at_expected_state"));
}

TEST_F(DiagnosePastesTest, A10gWithAnOddDeviceIdIsStillAGpu) {
  const auto [text_exit, text_doc] = diagnose({kG5Text}, "--expect-gpus 4");
  EXPECT_THAT(verdicts_of(text_doc), Not(Contains(HasSubstr("gpus_missing"))));
  for (const json& device : text_doc["devices"]) {
    EXPECT_EQ(device["kind"], "gpu") << device.dump();
    EXPECT_EQ(device["vendor_id"], "10de") << device.dump();
  }
  const std::string notes = notes_of(text_doc);
  EXPECT_THAT(notes, HasSubstr("0000:00:1c.0 (NVIDIA A10G): nvidia-smi counts 3 PCIe replays since reset"));
  EXPECT_THAT(notes, HasSubstr("0000:00:1d.0 (NVIDIA A10G): nvidia-smi counts 12 PCIe replays since reset"));
  EXPECT_THAT(notes, HasSubstr("2 GPUs captured by nvidia-smi count 0 PCIe replays since reset"));
  EXPECT_THAT(notes, HasSubstr("Device Id '000000de' names vendor 00de"));

  const auto [xml_exit, xml_doc] = diagnose({kG5Xml}, "--expect-gpus 1");
  EXPECT_THAT(verdicts_of(xml_doc), Not(Contains(HasSubstr("gpus_missing"))));
  ASSERT_EQ(xml_doc["devices"].size(), 1U);
  EXPECT_EQ(xml_doc["devices"][0]["kind"], "gpu");
  EXPECT_THAT(notes_of(xml_doc), HasSubstr("1 GPU captured by nvidia-smi count 0 PCIe replays since reset"));
}

}  // namespace
}  // namespace pcieval::testing
