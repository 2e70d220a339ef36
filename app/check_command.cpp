// `pcieval check`: discover, judge, tell; and the judge-and-tell half that
// `pcieval validate` shares.
#include <algorithm>
#include <iostream>

#include "app/commands.hpp"
#include "app/reference_copy.hpp"
#include "app/stop_signal.hpp"
#include "model/results.hpp"
#include "report/atomic_file.hpp"
#include "report/input_file.hpp"
#include "report/profile_json.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "topology/discover.hpp"
#include "validate/judge.hpp"
#include "validate/link_rules.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval::app {

DiscoveryOptions discovery_options(const SourceOptions& sources) {
  DiscoveryOptions options;
  options.sysfs_root = sources.sysfs_root;
  if (sources.topology_xml) options.topology_xml = *sources.topology_xml;
  return options;
}

void print_error(const std::string& message) { std::cerr << "pcieval: error: " << message << "\n"; }

namespace {

// The --profile FILE, checked; nullopt (and the error printed) when it cannot
// be used.
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

// pcieval-copy-reference prints well under a kilobyte.
constexpr std::size_t kMaxReferenceBytes = std::size_t{1} << 20;

}  // namespace

int run_check(const CheckOptions& options) {
  // Before anything is measured: an output that cannot be written is found
  // now, not after a soak whose results it would have held.
  if (const Status writable = check_output_directories(options.judge); !writable) {
    print_error(writable.error().message);
    return kExitUsage;
  }
  // From the first step to the last: a signal at any moment of a run (while
  // discovering, measuring or judging) makes it interrupted, never a pass.
  const StopOnSignal stop(static_cast<long long>(options.stop_grace_s * 1e9));
  JudgeOptions judge_options = options.judge;
  Results results;
  // A bad reference file is found before the probes run, not after.
  std::optional<ReferenceRun> reference;
  if (options.reference_path) {
    auto text = read_input_file(*options.reference_path, kMaxReferenceBytes, "pcieval-copy-reference output");
    if (!text) {
      print_error("--reference: " + text.error().message);
      return kExitUsage;
    }
    auto parsed = parse_reference_run(text.value());
    if (!parsed) {
      print_error("--reference: " + *options.reference_path + ": " + parsed.error().message);
      return kExitUsage;
    }
    reference = std::move(parsed).value();
  }
  // A bad profile is found before a 30-minute soak, not after it.
  if (judge_options.profile_path) {
    auto profile = load_profile(*judge_options.profile_path);
    if (!profile) return kExitUsage;
    results.thresholds = std::move(*profile);
    judge_options.profile_path.reset();
  }

  auto evidence = discover(discovery_options(options.sources));
  if (!evidence) {
    print_error(evidence.error().message);
    return kExitUsage;
  }

  results.evidence = std::move(evidence).value();
  Evidence& found = results.evidence;
  const bool any_gpu = std::any_of(found.devices.begin(), found.devices.end(),
                                   [](const DeviceRecord& d) { return d.function.kind == DeviceKind::kGpu; });
  // Probes measure the machine this runs on, so they never run against a tree
  // read from elsewhere: the numbers would be pinned to the wrong links.
  const bool this_machine = options.sources.sysfs_root == "/sys" && !options.sources.topology_xml;
  if (!options.probes.enabled) {
    found.notes.push_back("probes not run (--no-probes): links judged as read");
  } else if (!this_machine) {
    found.notes.push_back("probes not run: the PCI tree was read from --sysfs-root/--topology-xml, not this machine");
  } else {
    // Each complete round of a soak replaces -o FILE atomically, marked
    // unfinished: a crash or a power cut leaves the last round on disk.
    const bool flush = options.probes.soak() && judge_options.output_path && *judge_options.output_path != "-";
    const auto after_round = [&](const Evidence& so_far) {
      if (!flush) return;
      Results partial;
      partial.evidence = so_far;
      partial.thresholds = results.thresholds;
      judge(partial, judge_options.expected_gpus);
      if (const Status written = write_file_atomically(*judge_options.output_path, results_to_json(partial));
          !written) {
        print_error(written.error().message);
      }
    };
    measure(found, options.probes, &stop.flag(), after_round);
    if (reference) found.reference_copies = compare_with_reference(*reference, found.measurements);
  }
  if (const int signal = stop.flag().load(); signal != 0 && !found.interrupted) found.interrupted = signal_name(signal);
  if (!any_gpu) {
    found.notes.push_back("no NVIDIA GPU found: GPU probes skipped; judged the host's PCIe links only");
  } else if (found.link_samples.empty()) {
    found.notes.push_back(
        "GPU links were read without load: an idle GPU's lower link speed is inconclusive, not a downgrade");
  }

  return judge_and_report(std::move(results), judge_options);
}

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
    for (const auto& note : results.evidence.notes) std::cout << "note: " << note << "\n";
    std::cout << render_check_table(results, context.budgets, context.shown_links);
  } else if (other_host) {
    std::cerr << "pcieval: warning: " << *other_host << "\n";
  }
  const double started_s = std::chrono::duration<double>(options.started.time_since_epoch()).count();
  context.started_s = started_s;
  context.duration_s = std::chrono::duration<double>(std::chrono::system_clock::now() - options.started).count();
  // Any output not written is exit 2, the history too.
  bool written = all_written(write_outputs(results, context, options.outputs()));
  if (options.history_path && !append_history(*options.history_path, results, started_s)) written = false;
  if (!written) return kExitUsage;
  return exit_code_of(results.overall);
}

}  // namespace pcieval::app
