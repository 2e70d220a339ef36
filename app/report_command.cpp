// `pcieval report`: render an earlier results document, as it stands, in any
// of the output formats.
#include <iostream>
#include <utility>

#include "app/commands.hpp"
#include "report/outputs.hpp"
#include "report/table.hpp"

namespace pcieval::app {

int run_report(const ReportOptions& options) {
  // Outputs that would replace each other or the document are refused before
  // anything is written; a missing folder is left to the write (every other
  // output is still written then).
  std::vector<NamedFile> outputs;
  if (options.html_path) outputs.push_back({"--html", *options.html_path});
  if (options.prom_path) outputs.push_back({"--prom", *options.prom_path});
  if (options.junit_path) outputs.push_back({"--junit", *options.junit_path});
  const NamedFile input{"RESULTS", options.input_path};
  if (const Status writable = check_distinct_files(outputs, {&input, 1}); !writable) {
    print_error(writable.error().message);
    return kExitUsage;
  }
  const auto read = read_node_results_or_print(options.input_path);
  if (!read) return kExitUsage;
  const Results& results = *read;
  // Verdicts, overall and summary are rendered as the document states them:
  // a reporter tells, `pcieval validate` judges. The budgets are not in the
  // document; they follow from its links by the one budget formula. The
  // document holds no run start or duration, so neither is invented here:
  // the metrics and the JUnit suite leave them out.
  const ReportContext context = report_context(results);

  const bool any_file = options.html_path || options.prom_path || options.junit_path;
  if (options.table || !any_file)
    std::cout << render_check_table(results, context.budgets, context.shown_links, context.loaded_links);

  OutputPaths paths;
  paths.prometheus = options.prom_path;
  paths.junit = options.junit_path;
  paths.html = options.html_path;
  return all_written(write_outputs(results, context, paths)) ? kExitPass : kExitUsage;
}

}  // namespace pcieval::app
