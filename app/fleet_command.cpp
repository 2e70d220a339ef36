// `pcieval fleet merge FILE...`: one fleet document and table from results
// files collected any other way (a Slurm job array, a cron job per node).
#include <sys/stat.h>

#include <iostream>
#include <utility>

#include "app/commands.hpp"
#include "fleet/fleet.hpp"
#include "fleet/fleet_html.hpp"
#include "fleet/fleet_json.hpp"
#include "fleet/fleet_table.hpp"
#include "report/atomic_file.hpp"
#include "report/results_reader.hpp"

namespace pcieval::app {
namespace {

// When the file was last written, which decides between two documents of one
// host: results documents carry no run time of their own. 0 when unknown.
double modified_s(const std::string& path) {
  struct stat info {};
  if (path == "-" || ::stat(path.c_str(), &info) != 0) return 0;
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) * 1e-9;
}

}  // namespace

int tell_fleet(const Fleet& fleet, const std::optional<std::string>& output_path,
               const std::optional<std::string>& html_path, bool quiet) {
  const bool json_to_stdout = output_path && *output_path == "-";
  if (!quiet && !json_to_stdout) {
    std::cout << render_fleet_table(fleet) << std::flush;
  } else {
    // The table would have listed them: without it, stderr does, one line each.
    for (const std::string& problem : fleet.problems) std::cerr << "pcieval: " << problem << "\n";
  }
  bool all_written = true;
  if (output_path) {
    if (const Status written = write_file_atomically(*output_path, fleet_to_json(fleet)); !written) {
      print_error(written.error().message);
      all_written = false;
    }
  }
  if (html_path) {
    if (const Status written = write_file_atomically(*html_path, render_fleet_html(fleet)); !written) {
      print_error(written.error().message);
      all_written = false;
    }
  }
  return all_written ? fleet.exit_code : kExitUsage;
}

int run_fleet_merge(const FleetMergeOptions& options) {
  std::vector<FleetInput> inputs;
  std::vector<std::string> problems;
  inputs.reserve(options.input_paths.size());
  for (std::size_t i = 0; i < options.input_paths.size(); ++i) {
    const std::string& path = options.input_paths[i];
    // One document at a time: only its node entry is kept, so memory grows
    // with the fleet's GPUs, not with the size of the documents.
    auto read = read_results_file(path);
    FleetInput input;
    input.order = i;
    input.written_s = modified_s(path);
    if (read) {
      input.node = node_from_results(read.value(), path);
    } else {
      // Never abort the merge: the file is a node that could not be judged,
      // named by its path, and a problem line says why.
      problems.push_back(read.error().message);
      input.node = node_without_results(path, path, kExitUsage, "unreadable results document: " + read.error().message);
    }
    inputs.push_back(std::move(input));
  }
  std::vector<FleetNode> nodes = deduplicate_hosts(std::move(inputs), problems);
  const Fleet fleet = build_fleet(std::move(nodes), std::move(problems), "merge", ToolInfo{"pcieval", PCIEVAL_VERSION});
  return tell_fleet(fleet, options.output_path, options.html_path, options.quiet);
}

}  // namespace pcieval::app
