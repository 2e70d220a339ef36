// The output side every command shares: the files asked for, checked up
// front (their folders, and that no two are one file); the renderers' context
// (budgets and shown links, which need validate/); and the failures of
// report/outputs.hpp told.
#include "report/outputs.hpp"

#include <algorithm>
#include <utility>

#include "app/commands.hpp"
#include "validate/bandwidth_rules.hpp"
#include "validate/expectation.hpp"
#include "validate/link_rules.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval::app {

Status check_outputs(const JudgeOptions& options, std::span<const NamedFile> inputs) {
  std::vector<NamedFile> outputs;
  for (const auto& [flag, path] :
       {std::pair{"-o", &options.output_path}, std::pair{"--prom", &options.prom_path},
        std::pair{"--junit", &options.junit_path}, std::pair{"--html", &options.html_path}}) {
    if (*path) outputs.push_back({flag, **path});
  }
  for (const NamedFile& output : outputs) {
    if (Status checked = check_output_directory(output.flag, output.path); !checked) return checked;
  }
  // The default path's folder is created (a first run on a node has none;
  // history_command.cpp); a path the operator gave is used as given, as -o
  // is: a typo in it must not grow a directory tree.
  if (Status checked = check_output_directory("--history", options.history_path); !checked) {
    return make_error(checked.error().message + " (pcieval creates only the default history folder)");
  }
  // The history is the one output that is appended to, so it may well exist:
  // -o onto it would replace every run it holds.
  if (options.history_path) {
    const std::string history = options.history_path->empty() ? default_history_path() : *options.history_path;
    if (!history.empty()) outputs.push_back({"--history", history});
  }
  std::vector<NamedFile> read(inputs.begin(), inputs.end());
  if (options.baseline_path) read.push_back({"--baseline", *options.baseline_path});
  if (options.profile_path) read.push_back({"--profile", *options.profile_path});
  return check_distinct_files(outputs, read);
}

std::vector<BandwidthBudget> path_budgets(const Evidence& evidence, const ThresholdProfile& profile) {
  std::vector<BandwidthBudget> budgets;
  for (const Measurement& m : evidence.measurements) {
    if (m.gpus.size() != 1 || m.aggregation == Aggregation::kTotalOverWallTime) continue;
    const auto already = std::find_if(budgets.begin(), budgets.end(), [&](const BandwidthBudget& b) {
      return b.subject == m.subject && b.direction == m.direction;
    });
    if (already != budgets.end()) continue;
    if (const auto budget = gpu_path_budget(evidence, m.gpus.front(), m.direction, expectation_options(profile))) {
      const double floor_fraction =
          bandwidth_thresholds_for(thresholds_for(profile, budget->device), "h2d_ce", m.direction).floor_fraction;
      budgets.push_back(BandwidthBudget{m.subject, m.direction, to_string(budget->link), budget->budget_gbps,
                                        budget->budget_gbps * floor_fraction});
    }
  }
  return budgets;
}

std::vector<ShownLink> shown_links(const Evidence& evidence, const ThresholdProfile& profile) {
  const ExpectationOptions options = expectation_options(profile);
  const auto text = [](const Reading<LinkState>& state) { return state ? to_string(state.value()) : std::string("?"); };
  std::vector<ShownLink> shown;
  for (const DeviceRecord& device : evidence.devices) {
    std::optional<LinkExpectation> expectation;
    if (device.path.empty()) {
      expectation = expect_unplaced_link(device, evidence, options);
    } else if (auto own = expect_link(device.path.front(), evidence, options);
               own.basis != ExpectationBasis::kBothEnds) {
      expectation = std::move(own);
    }
    if (expectation) {
      shown.push_back(
          ShownLink{to_string(device.function.bdf), text(expectation->expected), text(expectation->negotiated)});
    }
  }
  return shown;
}

std::vector<LoadedLink> loaded_links(const Evidence& evidence) {
  std::vector<LoadedLink> loaded;
  for (const DeviceRecord& device : evidence.devices) {
    for (const Link& link : device.path) {
      const bool seen =
          std::any_of(loaded.begin(), loaded.end(), [&](const LoadedLink& l) { return l.port == link.downstream; });
      if (seen) continue;
      if (const auto state = state_under_load(evidence.link_samples, link.downstream, evidence.load_per_gpu)) {
        loaded.push_back(LoadedLink{link.downstream, state->state});
      }
    }
  }
  return loaded;
}

ReportContext report_context(const Results& results) {
  ReportContext context;
  context.budgets = path_budgets(results.evidence, results.thresholds);
  context.shown_links = shown_links(results.evidence, results.thresholds);
  context.loaded_links = loaded_links(results.evidence);
  return context;
}

bool all_written(const std::vector<Error>& failures) {
  for (const Error& failure : failures) print_error(failure.message);
  return failures.empty();
}

int with_output_failure(int code) { return code == kExitFail ? kExitFail : kExitUsage; }

}  // namespace pcieval::app
