// `pcieval diagnose`: judge captured text from a machine pcieval never ran
// on (lspci -vv, nvidia-smi -q and -q -x, kernel logs, the bandwidth tools'
// output), with the same rules, table and exit codes as check.
//
// Read the files -> ingest/ (sections, parsers, evidence with each verdict's
// file and line) -> validate/'s notes on what it will not judge -> judge and
// report, as check does.
#include <optional>
#include <utility>
#include <vector>

#include "app/commands.hpp"
#include "ingest/capture_evidence.hpp"
#include "ingest/captures.hpp"
#include "ingest/detect.hpp"
#include "report/input_file.hpp"
#include "validate/event_rate_rules.hpp"
#include "validate/expectation.hpp"
#include "validate/stated_link_rules.hpp"

namespace pcieval::app {
namespace {

// Captured text is kilobytes; a pasted dmesg may be tens of megabytes. The cap
// keeps /dev/zero or a disk image from filling memory.
constexpr std::size_t kMaxCaptureBytes = std::size_t{256} << 20;

// Reads one input and hands its text to ingest/; errors are the one line
// diagnose prints. A file that holds several formats (a ticket paste of
// lspci -vv then dmesg) is read section by section, unless --format names one.
Status read_capture(const std::string& path, const std::optional<CaptureFormat>& forced, Captures& captures) {
  const std::string name = path == "-" ? std::string("stdin") : path;
  auto input = map_input_file(path, kMaxCaptureBytes, "a capture");
  if (!input) return input.error();
  // Parsers copy what they keep, so the text need not outlive this call.
  const std::string_view text = input.value().view();
  if (forced) return add_capture(text, name, {CaptureSection{*forced, 0, text.size(), 1}}, captures);
  KernelLogsAhead ahead(text, name);
  auto sections = split_capture_sections(text, ahead.walker());
  if (sections) return add_capture(text, name, sections.value(), captures, &ahead);
  // pcieval's own documents are the likeliest JSON to land here by mistake.
  switch (pcieval_document_kind(text)) {
    case PcievalDocument::kResults:
      return make_error(name +
                        " is a pcieval results document, not captured text: judge it again with 'pcieval validate " +
                        path + "'");
    case PcievalDocument::kFleet:
      return make_error(name +
                        " is a pcieval fleet document, not captured text: diagnose reads lspci -vv, "
                        "nvidia-smi -q, kernel logs and the bandwidth tools' output");
    case PcievalDocument::kNone:
      break;
  }
  return make_error(name + ": " + sections.error().message);
}

// What is read but not judged (a tool's numbers without a link to hold them
// to, correctable errors below a burst) depends on the evidence and the
// stated link only, not on the profile: said once here, as notes, not by
// every re-judgement. A burst's verdict is drawn where verdicts are.
void add_unjudged_notes(Evidence& evidence, bool tools, const ThresholdProfile& thresholds) {
  if (tools) {
    ToolJudgeOptions options;
    if (evidence.stated_link) options.stated_link = evidence.stated_link->link;
    for (std::string& note : judge_tool_bandwidth(evidence, ThresholdProfile{}, options).notes) {
      evidence.notes.push_back(std::move(note));
    }
    for (std::string& note : judge_nccl_tests_bandwidth(evidence, ThresholdProfile{}, options).notes) {
      evidence.notes.push_back(std::move(note));
    }
  }
  for (std::string& note : judge_captured_rates(evidence, thresholds).notes) evidence.notes.push_back(std::move(note));
}

}  // namespace

int run_diagnose(const DiagnoseOptions& options) {
  // A capture is evidence no one can take again: no output may replace it.
  std::vector<NamedFile> inputs;
  for (const std::string& path : options.input_paths) inputs.push_back({"FILE", path});
  if (const Status writable = check_outputs(options.judge, inputs); !writable) {
    print_error(writable.error().message);
    return kExitUsage;
  }
  std::optional<CaptureFormat> forced;
  if (options.format) {
    auto format = capture_format_from_name(*options.format);
    if (!format) {
      print_error("--format: " + format.error().message);
      return kExitUsage;
    }
    forced = format.value();
  }
  std::optional<LinkState> stated_link;
  if (options.link) {
    auto link = parse_stated_link(*options.link);
    if (!link) {
      print_error(link.error().message);
      return kExitUsage;
    }
    stated_link = link.value();
  }
  Captures captures;
  for (const std::string& path : options.input_paths) {
    if (const Status read = read_capture(path, forced, captures); !read) {
      print_error(read.error().message);
      return kExitUsage;
    }
  }

  Results results;
  const bool tools = !captures.tools.empty();
  CaptureEvidenceOptions ingest_options;
  // The host-cap note names the generation validate/ holds the link to.
  ingest_options.judged_nvml_generation = expected_nvml_generation;
  results.evidence = evidence_from_captures(std::move(captures), ingest_options);
  if (stated_link) results.evidence.stated_link = StatedLink{*stated_link, "--link " + *options.link};
  add_unjudged_notes(results.evidence, tools, results.thresholds);
  JudgeOptions judge_options = options.judge;
  judge_options.add_unjudged_notes = true;
  return judge_and_report(std::move(results), judge_options);
}

}  // namespace pcieval::app
