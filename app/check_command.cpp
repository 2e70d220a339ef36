// `pcieval check`: discover, judge, tell; and the judge-and-tell half that
// `pcieval validate` shares.
#include <algorithm>
#include <iostream>

#include "app/commands.hpp"
#include "model/results.hpp"
#include "report/atomic_file.hpp"
#include "report/junit.hpp"
#include "report/prometheus.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "topology/discover.hpp"
#include "validate/link_rules.hpp"

namespace pcieval::app {
namespace {

int exit_code_of(Overall overall) {
  switch (overall) {
    case Overall::kPass:
      return kExitPass;
    case Overall::kFail:
      return kExitFail;
    case Overall::kInconclusive:
      return kExitInconclusive;
  }
  return kExitInconclusive;
}

}  // namespace

DiscoveryOptions discovery_options(const SourceOptions& sources) {
  DiscoveryOptions options;
  options.sysfs_root = sources.sysfs_root;
  if (sources.topology_xml) options.topology_xml = *sources.topology_xml;
  return options;
}

void print_error(const std::string& message) { std::cerr << "pcieval: error: " << message << "\n"; }

int run_check(const CheckOptions& options) {
  auto evidence = discover(discovery_options(options.sources));
  if (!evidence) {
    print_error(evidence.error().message);
    return kExitUsage;
  }

  Results results;
  results.evidence = std::move(evidence).value();
  const bool any_gpu = std::any_of(results.evidence.devices.begin(), results.evidence.devices.end(),
                                   [](const DeviceRecord& d) { return d.function.kind == DeviceKind::kGpu; });
  results.evidence.notes.push_back(
      any_gpu ? "GPU links were read without load (no load probes in this version): an idle GPU's lower link speed "
                "is inconclusive, not a downgrade"
              : "no NVIDIA GPU found: GPU probes skipped; judged the host's PCIe links only");

  return judge_and_report(std::move(results), options.judge);
}

int judge_and_report(Results results, const JudgeOptions& options) {
  // Whatever produced the evidence, this pcieval wrote the judgement.
  results.tool = ToolInfo{"pcieval", PCIEVAL_VERSION};
  LinkRuleOptions rules;
  rules.expected_gpus = options.expected_gpus;
  results.verdicts = judge_links(results.evidence, rules);
  results.overall = overall_of(results.verdicts);
  results.summary = summarize(results.verdicts, results.evidence);

  const bool json_to_stdout = options.output_path && *options.output_path == "-";
  if (!options.quiet && !json_to_stdout) {
    for (const auto& note : results.evidence.notes) std::cout << "note: " << note << "\n";
    std::cout << render_check_table(results);
  }
  // Every requested output is attempted even when one fails, so a full disk
  // for the JSON does not also cost the metrics; any failure is exit 2.
  const double started_s = std::chrono::duration<double>(options.started.time_since_epoch()).count();
  const double duration_s = std::chrono::duration<double>(std::chrono::system_clock::now() - options.started).count();
  bool all_written = true;
  const auto write = [&](const std::optional<std::string>& path, const auto& render) {
    if (!path) return;
    if (const Status written = write_file_atomically(*path, render()); !written) {
      print_error(written.error().message);
      all_written = false;
    }
  };
  write(options.output_path, [&] { return results_to_json(results); });
  write(options.prom_path, [&] { return render_prometheus(results, started_s, duration_s); });
  write(options.junit_path, [&] { return render_junit(results, "pcieval", started_s); });
  if (!all_written) return kExitUsage;
  return exit_code_of(results.overall);
}

}  // namespace pcieval::app
