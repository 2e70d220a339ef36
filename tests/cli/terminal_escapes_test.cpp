// No control byte of a document, a history or an argument reaches the
// terminal (issue 29, item 6): a reason of "ok \e[1A\e[2K\rpcieval pass"
// printed raw redraws the operator's screen into a pass. report, validate,
// history and compare print every such string as terminal_text does
// (report/table.hpp); an error that quotes an argument stays one line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ESC sequences that move the cursor and clear lines, CR, BEL, DEL, a
// newline that would forge a line, and the C1 controls U+009B (CSI) and
// U+0085 (NEL).
const std::string kEscapingText =
    "ok \x1b[1A\x1b[2K\rpcieval: pass\a\x7f\nforged line \xc2\x9b"
    "2J \xc2\x85";

// The bytes a terminal would act on: C0 controls but the newline that ends a
// line, DEL, and every byte 0x80..0x9f (C1 controls themselves, as a Latin-1
// terminal reads them, and in UTF-8 the continuation bytes that carry them).
std::string control_bytes(const std::string& text) {
  std::string found;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && byte != '\n') || byte == 0x7f || (byte >= 0x80 && byte <= 0x9f)) {
      found += std::to_string(byte) + " ";
    }
  }
  return found;
}

class TerminalEscapes : public ScratchDirTest {
 protected:
  // The H100 example document (results_schema/examples: one GPU at x8 below
  // its switch), with kEscapingText in every string a table or message shows.
  [[nodiscard]] std::string hostile_document() const {
    json document =
        json::parse(slurp(std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/fail-downgraded-h100-spr.json"));
    document["summary"] = document["summary"].get<std::string>() + kEscapingText;
    document["host"]["hostname"] = "hgx-b07" + kEscapingText;
    document["notes"].push_back(kEscapingText);
    for (json& verdict : document["verdicts"]) {
      verdict["subject"] = verdict["subject"].get<std::string>() + kEscapingText;
      verdict["reason"] = verdict["reason"].get<std::string>() + kEscapingText;
      verdict["remediation"] = kEscapingText;
    }
    for (json& measurement : document["measurements"]) {
      measurement["probe"] = measurement["probe"].get<std::string>() + kEscapingText;
      measurement["subject"] = measurement["subject"].get<std::string>() + kEscapingText;
    }
    for (json& probe : document["probes"]) {
      probe["key"] = probe["key"].get<std::string>() + kEscapingText;
      probe["reason"] = kEscapingText;
    }
    for (json& device : document["devices"]) device["notes"].push_back(kEscapingText);
    const std::string file = path("hostile.json");
    write(file, document.dump(2));
    return file;
  }
};

TEST_F(TerminalEscapes, NoControlByteOfADocumentReachesTheTerminal) {
  const std::string document = hostile_document();
  const std::string db = path("h.sqlite");
  ASSERT_EQ(run_pcieval("validate -q " + shell_quote(document) + " --history=" + shell_quote(db)).exit_code, 1);
  for (const std::string& args :
       {"report " + shell_quote(document), "validate " + shell_quote(document), "history --db " + shell_quote(db),
        "compare " + shell_quote(document) + " " + shell_quote(document), "fleet merge " + shell_quote(document)}) {
    const CliRun run = run_pcieval(args);
    EXPECT_NE(run.exit_code, 2) << args << ": " << run.err;
    EXPECT_THAT(control_bytes(run.out), IsEmpty()) << args;
    EXPECT_THAT(control_bytes(run.err), IsEmpty()) << args;
    // The text is still there, its controls shown as '?'.
    EXPECT_THAT(run.out, HasSubstr("ok ?[1A?[2K?pcieval: pass???forged line ?2J ?")) << args << "\n" << run.out;
    EXPECT_THAT(run.out, ::testing::Not(HasSubstr("\nforged line"))) << args;
  }
}

TEST_F(TerminalEscapes, AnArgumentEchoedInAnErrorStaysOneLine) {
  for (const std::string& args :
       {"validate " + shell_quote("/no/such" + kEscapingText), "check --expect-gpus " + shell_quote(kEscapingText),
        "chek" + shell_quote(kEscapingText), "history --gpu " + shell_quote(kEscapingText)}) {
    const CliRun run = run_pcieval(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_EQ(line_count(run.err), 1) << args << ": " << run.err;
    EXPECT_THAT(control_bytes(run.err), IsEmpty()) << args << ": " << run.err;
    EXPECT_THAT(control_bytes(run.out), IsEmpty()) << args;
  }
}

}  // namespace
}  // namespace pcieval::testing
