// `pcieval fleet merge FILE...`: one fleet document and table from results
// files collected any other way (a Slurm job array, a cron job per node).
#include <sched.h>

#include <algorithm>
#include <iostream>
#include <thread>
#include <utility>

#include "app/commands.hpp"
#include "fleet/fleet.hpp"
#include "fleet/fleet_html.hpp"
#include "fleet/fleet_json.hpp"
#include "fleet/fleet_table.hpp"
#include "fleet/merge.hpp"
#include "report/outputs.hpp"

namespace pcieval::app {
namespace {

// The CPUs this process may run on (taskset, a cgroup's cpuset, a Slurm
// allocation), not every CPU of the machine: more threads than that only
// queue.
std::size_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<std::size_t>(CPU_COUNT(&set));
  }
  return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace

int tell_fleet(const Fleet& fleet, const std::optional<std::string>& output_path,
               const std::optional<std::string>& html_path, bool quiet) {
  const bool json_to_stdout = output_path && *output_path == "-";
  if (!quiet && !json_to_stdout) {
    std::cout << render_fleet_table(fleet) << std::flush;
  } else {
    // The table would have listed them: without it, stderr does, one line each.
    for (const std::string& problem : fleet.problems) std::cerr << "pcieval: " << terminal_text(problem) << "\n";
  }
  // Each is attempted when the other fails.
  const OutputFile files[] = {
      {output_path, [&] { return fleet_to_json(fleet); }, "-o"},
      {html_path, [&] { return render_fleet_html(fleet); }, "--html"},
  };
  // A failing node stays 1 when an output was not written (1 > 2 > 3).
  return all_written(write_files(files)) ? fleet.exit_code : with_output_failure(fleet.exit_code);
}

int run_fleet_merge(const FleetMergeOptions& options) {
  // Outputs that would replace each other or a node's document are refused
  // before anything is read; a missing folder is left to the write.
  std::vector<NamedFile> outputs;
  if (options.output_path) outputs.push_back({"-o", *options.output_path});
  if (options.html_path) outputs.push_back({"--html", *options.html_path});
  std::vector<NamedFile> inputs;
  for (const std::string& path : options.input_paths) inputs.push_back({"FILE", path});
  if (const Status writable = check_distinct_files(outputs, inputs); !writable) {
    print_error(writable.error().message);
    return kExitUsage;
  }
  const std::size_t jobs = options.jobs > 0 ? options.jobs : usable_cpus();
  const Fleet fleet = merge_node_documents(options.input_paths, jobs, ToolInfo{"pcieval", PCIEVAL_VERSION});
  return tell_fleet(fleet, options.output_path, options.html_path, options.quiet);
}

}  // namespace pcieval::app
