// The judge-and-tell half of check, validate and diagnose: the profile and
// baseline the flags name, every rule family (validate/judge.hpp), the table,
// every output file, the exit code.
#include <iostream>

#include "app/commands.hpp"
#include "app/stop_signal.hpp"
#include "model/results.hpp"
#include "report/outputs.hpp"
#include "report/profile_json.hpp"
#include "report/results_writer.hpp"
#include "report/table.hpp"
#include "validate/judge.hpp"
#include "validate/link_rules.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval::app {

std::optional<ThresholdProfile> load_profile(const std::string& path) {
  auto profile = read_profile_file(path);
  if (!profile) {
    print_error("--profile: " + profile.error().message);
    return std::nullopt;
  }
  if (const Status valid = check_profile(profile.value()); !valid) {
    print_error("--profile: " + path + ": " + valid.error().message);
    return std::nullopt;
  }
  return std::move(profile).value();
}

namespace {

// A baseline measured on another machine: the medians are still compared GPU
// by GPU (by PCI address), which is what a golden node of the same model is
// for, but an operator who meant this node's own last good run must see it.
// Not a failure: this node's verdicts rest on its own evidence either way.
std::optional<std::string> other_host_note(const std::string& baseline_path, const std::string& baseline_host,
                                           const std::string& this_host) {
  if (baseline_host.empty() || this_host.empty() || baseline_host == this_host) return std::nullopt;
  return "--baseline " + baseline_path + " was measured on host '" + baseline_host + "', this run is of host '" +
         this_host + "': medians are compared by PCI address across two machines";
}

}  // namespace

void judge(Results& results, const std::optional<int>& expected_gpus, const Evidence* baseline) {
  // Whatever produced the evidence, this pcieval wrote the judgement.
  results.tool = ToolInfo{"pcieval", PCIEVAL_VERSION};
  JudgeAllOptions options;
  options.expected_gpus = expected_gpus;
  options.baseline = baseline;
  results.verdicts = judge_all(results.evidence, results.thresholds, options);
  results.overall = overall_of(results.verdicts);
  results.summary = summarize(results.verdicts, results.evidence);
}

int judge_and_report(Results results, const JudgeOptions& options) {
  // Without --profile, check and diagnose judge with the built-in profile
  // and validate with the one its document was judged with.
  if (options.profile_path) {
    auto profile = load_profile(*options.profile_path);
    if (!profile) return kExitUsage;
    results.thresholds = std::move(*profile);
  }
  std::optional<Results> baseline;
  // Said on stderr too when the notes are not printed (-q, -o -).
  std::optional<std::string> other_host;
  if (options.baseline_path) {
    baseline = read_node_results_or_print(*options.baseline_path, "--baseline: ");
    if (!baseline) return kExitUsage;
    other_host =
        other_host_note(*options.baseline_path, baseline->evidence.host.hostname, results.evidence.host.hostname);
    if (other_host) results.evidence.notes.push_back(*other_host);
  }
  if (options.add_unjudged_notes) {
    for (std::string& note : unjudged_notes(results.evidence, results.thresholds)) {
      results.evidence.notes.push_back(std::move(note));
    }
  }
  judge(results, options.expected_gpus, baseline ? &baseline->evidence : nullptr);
  // A check's signal that arrived while it judged (no handler is installed
  // for validate or diagnose, so the flag stays 0 there).
  if (const int signal = g_stop_signal.load(); signal != 0 && !results.evidence.interrupted) {
    results.evidence.interrupted = signal_name(signal);
    judge(results, options.expected_gpus, baseline ? &baseline->evidence : nullptr);
  }

  // The link budget each per-GPU measurement is shown beside, in every output.
  ReportContext context = report_context(results);
  const bool json_to_stdout = options.output_path && *options.output_path == "-";
  if (!options.quiet && !json_to_stdout) {
    for (const auto& note : results.evidence.notes) std::cout << "note: " << terminal_text(note) << "\n";
    std::cout << render_check_table(results, context.budgets, context.shown_links, context.loaded_links);
  } else if (other_host) {
    std::cerr << "pcieval: warning: " << terminal_text(*other_host) << "\n";
  }
  const double started_s = std::chrono::duration<double>(options.started.time_since_epoch()).count();
  context.started_s = started_s;
  context.duration_s = std::chrono::duration<double>(std::chrono::system_clock::now() - options.started).count();
  // Every output is attempted, whatever failed before it. The results
  // document goes last, so that it can say which of the others was not
  // written; what was written stays.
  OutputPaths others = options.outputs();
  others.results_json.reset();
  std::vector<Error> failures = write_outputs(results, context, others);
  if (options.history_path) {
    if (Status appended = append_history(*options.history_path, results, started_s); !appended) {
      failures.push_back(appended.error());
    }
  }
  for (const Error& failure : failures) results.evidence.notes.push_back("output not written: " + failure.message);
  const OutputFile document[] = {{options.output_path, [&] { return results_to_json(results); }, "-o"}};
  for (Error& failure : write_files(document)) failures.push_back(std::move(failure));
  // Any output not written is exit 2, the history too; but a proven fault
  // stays 1, so that a full disk cannot keep a broken node in service.
  const int outcome = exit_code_of(results.overall);
  return all_written(failures) ? outcome : with_output_failure(outcome);
}

}  // namespace pcieval::app
