// `pcieval report`: render an earlier results document, as it stands, in any
// of the output formats.
#include <algorithm>
#include <iostream>
#include <utility>

#include "app/commands.hpp"
#include "report/atomic_file.hpp"
#include "report/html.hpp"
#include "report/junit.hpp"
#include "report/prometheus.hpp"
#include "report/results_reader.hpp"
#include "report/table.hpp"
#include "validate/bandwidth_rules.hpp"
#include "validate/expectation.hpp"

namespace pcieval::app {

std::vector<BandwidthBudget> path_budgets(const Evidence& evidence, const ThresholdProfile& profile) {
  std::vector<BandwidthBudget> budgets;
  for (const Measurement& m : evidence.measurements) {
    if (m.gpus.size() != 1 || m.aggregation == Aggregation::kTotalOverWallTime) continue;
    const auto already = std::find_if(budgets.begin(), budgets.end(), [&](const BandwidthBudget& b) {
      return b.subject == m.subject && b.direction == m.direction;
    });
    if (already != budgets.end()) continue;
    if (const auto budget = gpu_path_budget(evidence, m.gpus.front(), m.direction, expectation_options(profile))) {
      budgets.push_back(BandwidthBudget{m.subject, m.direction, to_string(budget->link), budget->budget_gbps});
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

int run_report(const ReportOptions& options) {
  auto read = read_node_results(options.input_path);
  if (!read) {
    print_error(read.error().message);
    return kExitUsage;
  }
  const Results results = std::move(read).value();
  // Verdicts, overall and summary are rendered as the document states them:
  // a reporter tells, `pcieval validate` judges. The budgets are not in the
  // document; they follow from its links by the one budget formula.
  const std::vector<BandwidthBudget> budgets = path_budgets(results.evidence, results.thresholds);

  const bool any_file = options.html_path || options.prom_path || options.junit_path;
  if (options.table || !any_file)
    std::cout << render_check_table(results, budgets, shown_links(results.evidence, results.thresholds));

  // Every requested output is attempted even when one fails; any failure is
  // exit 2. The document holds no run start or duration, so neither is
  // invented here: the metrics and the JUnit suite leave them out.
  bool all_written = true;
  const auto write = [&](const std::optional<std::string>& path, const auto& render) {
    if (!path) return;
    if (const Status written = write_file_atomically(*path, render()); !written) {
      print_error(written.error().message);
      all_written = false;
    }
  };
  write(options.html_path, [&] { return render_html(results, budgets); });
  write(options.prom_path, [&] { return render_prometheus(results, std::nullopt, std::nullopt, budgets); });
  write(options.junit_path, [&] { return render_junit(results, "pcieval"); });
  return all_written ? kExitPass : kExitUsage;
}

}  // namespace pcieval::app
