// Issue 30: `pcieval diagnose` on evidence it used to misread: a fell-off-
// the-bus message over three lines, kernel lines quoted in a bug report, a
// dmesg wrapped by a mail client, nvidia-smi -q from a notebook, a log of a few
// correctable errors, and lspci listings that hold no link state. Each
// fixture's header names the public example of its form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/diagnose_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFellOffThreeLines = capture("dmesg_l40s_b3_fell_off_bus_three_lines_no_xid.txt");
const std::string kMarkdownReport = capture("ticket_md_egpu_rtx5090_63_00_0_uncorrectable.txt");
const std::string kMailWrapped = capture("dmesg_mail_wrapped_matisse_gpu_0a_gen1_x16.txt");
const std::string kNotebookSmi = capture("nvsmi_notebook_indented_colab_t4_busy.txt");
const std::string kNotimeCorrectable = capture("dmesg_notime_correctable_two_devices.txt");
const std::string kJournalIsoAlone = capture("journal_iso_genoa_h100_isolated_correctable.txt");
const std::string kLspciTree = capture("lspci_tv_tree_wrx80_2gpu.txt");
const std::string kLspciList = capture("lspci_nn_list_wrx80_2gpu.txt");

using DiagnoseQuotedPastesTest = DiagnoseRunner;

TEST_F(DiagnoseQuotedPastesTest, ThreeLineFellOffTheBusFailsTheGpu) {
  const auto [exit_code, document] = diagnose({kFellOffThreeLines});
  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(verdicts_of(document), ElementsAre("0000:b3:00.0 link_errors gpu_fell_off_bus"));
  const json* verdict = verdict_for(document, "0000:b3:00.0", "gpu_fell_off_bus");
  ASSERT_NE(verdict, nullptr);
  // No Xid was logged: the reason does not claim one.
  EXPECT_THAT((*verdict)["reason"].get<std::string>(), Not(HasSubstr("Xid")));
}

TEST_F(DiagnoseQuotedPastesTest, KernelLinesQuotedInABugReportFailTheGpu) {
  const auto [exit_code, document] = diagnose({kMarkdownReport});
  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(verdicts_of(document), Contains("0000:63:00.0 link_errors uncorrectable_errors_logged"));
}

TEST_F(DiagnoseQuotedPastesTest, MailWrappedLimitIsInconclusiveNamingTheRootPort) {
  const auto [exit_code, document] = diagnose({kMailWrapped});
  EXPECT_EQ(exit_code, 3);
  const json* idle = verdict_for(document, "0000:0a:00.0", "gpu_link_speed_idle");
  ASSERT_NE(idle, nullptr) << document["verdicts"].dump();
  EXPECT_THAT((*idle)["reason"].get<std::string>(), HasSubstr("at 0000:00:03.1"));
  // The enumeration lines say 0a:00.0 is a GPU and 00:03.1 a root port.
  bool gpu = false;
  for (const json& device : document["devices"])
    gpu = gpu || (device["bdf"] == "0000:0a:00.0" && device["kind"] == "gpu");
  EXPECT_TRUE(gpu) << document["devices"].dump();
  std::string notes;
  for (const json& note : document["notes"]) notes += note.get<std::string>() + "\n";
  EXPECT_THAT(notes, HasSubstr("0000:00:03.1: PCIe Root Port [1022:1483]"));
}

TEST_F(DiagnoseQuotedPastesTest, EnumeratedNvmeLimitedByWidthIsADowngrade) {
  // The kind tells a GPU's idle speed from a drive's lost lanes; a speed-only
  // limit on a device the log says is no GPU is judged as read.
  const std::string log = path("nvme.txt");
  std::ofstream(log)
      << ("[ 0.41] pci 0000:c2:00.0: [144d:a80a] type 00 class 0x010802 PCIe Endpoint\n"
          "[ 0.42] pci 0000:c2:00.0: 15.752 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x2 link at "
          "0000:c0:03.2 (capable of 63.012 Gb/s with 16.0 GT/s PCIe x4 link)\n");
  const auto [exit_code, document] = diagnose({log});
  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(verdicts_of(document), Contains("0000:c2:00.0 link_downgraded link_speed_and_width_below_expected"));
}

TEST_F(DiagnoseQuotedPastesTest, NotebookNvidiaSmiIsRead) {
  const auto [exit_code, document] = diagnose({kNotebookSmi});
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(verdicts_of(document), ElementsAre("0000:00:04.0 pass link_at_own_capability"));
}

TEST_F(DiagnoseQuotedPastesTest, EveryDeviceWithCorrectableErrorsGetsAVerdict) {
  const auto [exit_code, document] = diagnose({kNotimeCorrectable});
  EXPECT_EQ(exit_code, 3);
  EXPECT_THAT(verdicts_of(document), ElementsAre("0000:41:00.0 inconclusive correctable_error_rate_unknown",
                                                 "0000:c2:00.0 inconclusive correctable_error_rate_unknown"));
  EXPECT_THAT(document.dump(), Not(HasSubstr("holds no PCI device")));
  EXPECT_THAT(document["summary"].get<std::string>(), Not(HasSubstr("nothing")));
}

TEST_F(DiagnoseQuotedPastesTest, TimeStampedCorrectableErrorsBelowTheSpecRatePassTheRateOnly) {
  const auto [exit_code, document] = diagnose({kJournalIsoAlone});
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(verdicts_of(document), ElementsAre("0000:41:00.0 pass correctable_errors_within_spec_rate"));
  const std::string summary = document["summary"];
  EXPECT_THAT(summary, HasSubstr("correctable error rate of 1 device within the spec"));
  EXPECT_THAT(summary, HasSubstr("no link state or bandwidth in the evidence"));
}

TEST_F(DiagnoseQuotedPastesTest, ListingsWithoutLinkStateSaySoInOneLine) {
  for (const std::string& file : {kLspciTree, kLspciList}) {
    const CliRun run = run_pcieval("diagnose " + shell_quote(file));
    EXPECT_EQ(run.exit_code, 3) << file << run.err;
    int saying = 0;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("holds no link state") != std::string::npos) {
        ++saying;
        EXPECT_THAT(line, HasSubstr("sudo lspci -vv")) << line;
      }
    }
    EXPECT_EQ(saying, 1) << run.out;
    EXPECT_THAT(run.out, Not(HasSubstr("no PCIe devices found")));
    EXPECT_THAT(run.out, Not(HasSubstr("holds no PCI device")));
    // The document says it too, with the node's inconclusive verdict.
    const auto [exit_code, document] = diagnose({file});
    EXPECT_EQ(exit_code, 3);
    EXPECT_THAT(verdicts_of(document), ElementsAre("node inconclusive nothing_judged"));
  }
}

}  // namespace
}  // namespace pcieval::testing
