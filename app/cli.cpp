// The pcieval command line's flags and its usage messages (cli.hpp).
#include "app/cli.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli_flags.hpp"

namespace pcieval::app {
namespace {

// No node carries this many GPUs; a larger count is a typo (88 for 8).
constexpr int kMaxExpectedGpus = 1024;
// history --limit and check --rounds: far beyond any history or soak, and
// within an int.
constexpr int kMaxCount = 1'000'000;

// The help of the output flags that check, validate, diagnose and report
// share word for word.
constexpr const char* kJunitHelp = "Write JUnit XML to FILE, one test case per verdict";
constexpr const char* kHtmlHelp = "Write the HTML report (one self-contained file) to FILE";

// A flag that names a file to read or write.
void add_file_flag(CLI::App& command, const std::string& names, std::optional<std::string>& path,
                   const std::string& help) {
  command.add_option(names, path, help)->type_name("FILE");
}

void add_source_flags(CLI::App& command, SourceOptions& sources) {
  command.add_option("--sysfs-root", sources.sysfs_root, "Read the PCI tree from DIR/bus/pci/devices (default /sys)")
      ->type_name("DIR");
  command
      .add_option("--topology-xml", sources.topology_xml,
                  "Read the hwloc topology from FILE (lstopo --of xml) instead of discovering it; with "
                  "--sysfs-root, nothing of this machine is read")
      ->type_name("FILE");
}

// -o, --expect-gpus and -q: how check and validate judge and where they tell.
void add_judge_flags(CLI::App& command, JudgeOptions& judge) {
  add_file_flag(command, "-o,--output", judge.output_path, "Write the results document (JSON) to FILE, atomically");
  command
      .add_option("--expect-gpus", judge.expected_gpus,
                  "Report 'missing' when fewer than N GPUs are found (0 to " + std::to_string(kMaxExpectedGpus) + ")")
      ->type_name("N")
      ->check(whole_number_between(0, kMaxExpectedGpus));
  add_file_flag(command, "--prom", judge.prom_path,
                "Write Prometheus metrics to FILE (for node_exporter's textfile collector: name it *.prom)");
  add_file_flag(command, "--junit", judge.junit_path, kJunitHelp);
  add_file_flag(command, "--html", judge.html_path, kHtmlHelp);
  add_file_flag(command, "--baseline", judge.baseline_path,
                "A known-good results document of this node: copy medians more than 10% below it are bandwidth_low");
  add_file_flag(command, "--profile", judge.profile_path,
                "Judge with the threshold profile in FILE (JSON: floors, warning band, spread, error rate, "
                "overrides per GPU model; see docs/verdicts.md)");
  command.add_flag("-q,--quiet", judge.quiet, "Print no table; the exit code and -o FILE carry the result");
  // An optional value: `--history` alone uses the default path; on validate
  // and diagnose write `--history=DB` so the positional is not taken as DB.
  command
      .add_option("--history", judge.history_path,
                  "Append this run to the SQLite history DB (default $XDG_DATA_HOME/pcieval/history.sqlite, else "
                  "~/.local/share/pcieval/history.sqlite)")
      ->expected(0, 1)
      ->type_name("[DB]");
}

// `pcieval history`: the runs of a history database and per-GPU trends.
CLI::App* add_history_command(CLI::App& cli, HistoryOptions& history) {
  CLI::App* command =
      cli.add_subcommand("history", "List the runs of the --history database and each GPU's bandwidth over time");
  command
      ->add_option("--db", history.db_path,
                   "The history database (default: the first that exists of where --history writes, then the "
                   "nightly timer's /var/lib/pcieval/history.sqlite)")
      ->type_name("DB");
  command->add_option("--gpu", history.subject, "Only runs and trends of this GPU (PCI address) or host subject")
      ->type_name("BDF");
  command->add_option("--limit", history.limit, "Only the newest N runs (1 to " + std::to_string(kMaxCount) + ")")
      ->type_name("N")
      ->check(whole_number_between(1, kMaxCount));
  command->add_flag("--json", history.json, "Print runs and trends as JSON");
  return command;
}

// check's fleet flags: an MPI-launched check (mpirun, srun) is a fleet run.
// `no_allreduce` is --no-fleet-allreduce: a plain flag, because CLI11 shows a
// negated one ("!--no-...") as "--no-fleet-allreduce{false}" in the help.
void add_fleet_check_flags(CLI::App& command, FleetCheckOptions& fleet, bool& no_allreduce) {
  add_file_flag(command, "--fleet-output", fleet.output_path,
                "Under mpirun/srun: rank 0 writes the fleet document (JSON) to FILE, atomically");
  add_file_flag(command, "--fleet-html", fleet.html_path,
                "Under mpirun/srun: rank 0 writes the fleet page (self-contained HTML) to FILE, atomically");
  command
      .add_option("--fleet-timeout", fleet.timeout_s,
                  "Under mpirun/srun: how long rank 0 waits, after its own check, for the other nodes (300s, 10m, "
                  "2h; a bare number is seconds; 1 s to 30 d; default 300 s)")
      ->type_name("TIME")
      ->transform(duration_between(1, kMaxDurationS));
  command.add_flag("--fleet-one-node-per-rank", fleet.one_node_per_rank,
                   "Under mpirun: treat every rank as its own node, '{rank}' in --sysfs-root, --topology-xml, "
                   "--simulate and -o naming its fixture or scenario (tests and labs)");
  command.add_flag("--no-fleet-allreduce", no_allreduce,
                   "Under mpirun/srun: skip the NCCL all-reduce over every GPU of every node that follows the "
                   "nodes' checks");
}

// `pcieval fleet merge FILE... [-o FILE] [--quiet]`.
CLI::App* add_fleet_command(CLI::App& cli, FleetMergeOptions& merge) {
  CLI::App* fleet_cmd = cli.add_subcommand("fleet", "Fleet documents: many nodes' results as one");
  fleet_cmd->require_subcommand(1);
  CLI::App* merge_cmd = fleet_cmd->add_subcommand(
      "merge",
      "Merge results documents (check -o) of many nodes into one fleet table and document; of two documents of a "
      "host the newer is kept and the other named; exit with the worst node's code: 1 fail (a failing document "
      "superseded by a newer one too), 2 unreadable input, 3 inconclusive, 0 pass");
  merge_cmd->add_option("FILE", merge.input_paths, "Results documents, one per node")->type_name("FILE...")->required();
  add_file_flag(*merge_cmd, "-o,--output", merge.output_path, "Write the fleet document (JSON) to FILE, atomically");
  add_file_flag(*merge_cmd, "--html", merge.html_path,
                "Write the fleet page (self-contained HTML) to FILE, atomically");
  merge_cmd->add_flag("-q,--quiet", merge.quiet, "Print no table; the exit code and -o FILE carry the result");
  merge_cmd->add_option("--jobs", merge.jobs, "Read the files with N threads (default: one per usable CPU)")
      ->type_name("N")
      ->check(CLI::Range(1U, 1024U));
  return merge_cmd;
}

// `pcieval report RESULTS.json`: render a results document as it stands.
CLI::App* add_report_command(CLI::App& cli, ReportOptions& report) {
  CLI::App* command = cli.add_subcommand(
      "report", "Render a results document as it stands (nothing re-judged): table, HTML, Prometheus, JUnit");
  command->add_option("RESULTS", report.input_path, "The results document to render; '-' reads stdin")
      ->type_name("FILE")
      ->required();
  add_file_flag(*command, "--html", report.html_path, kHtmlHelp);
  add_file_flag(*command, "--prom", report.prom_path, "Write Prometheus metrics to FILE (node_exporter textfile)");
  add_file_flag(*command, "--junit", report.junit_path, kJunitHelp);
  command->add_flag("--table", report.table, "Print the table on stdout too (the default when no file is asked for)");
  return command;
}

// `pcieval retrain BDF`: a dry run unless --apply.
CLI::App* add_retrain_command(CLI::App& cli, RetrainCommandOptions& retrain) {
  CLI::App* command = cli.add_subcommand(
      "retrain",
      "Retrain the link above a device (Retrain Link on its root or downstream port) and verify it; shows the plan "
      "unless --apply. Exit 0 after passes, 1 fails, 2 refused or bad target, 3 link did not come back");
  command->add_option("BDF", retrain.address, "The device whose link to retrain, e.g. 0000:17:00.0")
      ->type_name("BDF")
      ->required();
  command->add_option("--sysfs-root", retrain.sysfs_root, "Read (and with --apply write) the PCI tree under DIR")
      ->type_name("DIR");
  command->add_flag("--apply", retrain.apply, "Write Retrain Link (root only), wait for the link, judge again");
  command
      ->add_option("--simulate", retrain.simulate,
                   "Retrain on the simulated GPU node SCENARIO describes, probes before and after included "
                   "(sim/README.md): its scratch tree is written, not this host's")
      ->type_name("SCENARIO");
  command
      ->add_option("--timeout-s", retrain.timeout_s,
                   "How long the link may take to come back, in seconds (0.01 to 60; default 1)")
      ->type_name("S")
      ->transform(duration_between(0.01, 60));
  return command;
}

// `pcieval check`: sources, judgement and outputs, probe mode, soak and fleet.
CLI::App* add_check_command(CLI::App& cli, CommandLineOptions& o) {
  CLI::App* command = cli.add_subcommand(
      "check", "Judge every PCIe device's path up to its root port; exit 0 pass, 1 fail, 2 usage, 3 inconclusive");
  add_source_flags(*command, o.check.sources);
  add_judge_flags(*command, o.check.judge);
  CLI::Option* quick_flag =
      command->add_flag("--quick", o.quick, "Run the probes at the verdict size only (the default; well under 30 s)");
  CLI::Option* full_flag = command->add_flag(
      "--full", o.full,
      "Also run the 4 KiB..1 GiB size sweep, the remote-NUMA probe and every GPU-to-GPU probe (takes minutes)");
  CLI::Option* no_probes_flag = command->add_flag(
      "--no-probes", o.no_probes, "Read and judge the links only; copy nothing (for nodes running jobs)");
  CLI::Option* p2p_flag = command->add_flag(
      "--p2p", o.p2p,
      "Also copy between every pair of GPUs (a sample above 8 GPUs): copy-engine writes one way and both ways, and "
      "the same copy staged through the host; --full runs reads and SM copies too (docs/check.md)");
  quick_flag->excludes(full_flag)->excludes(no_probes_flag);
  full_flag->excludes(no_probes_flag);
  p2p_flag->excludes(no_probes_flag);
  command->add_flag("--list-probes", o.list_probes, "List every probe with what it measures, then exit");
  command
      ->add_option("--copy-mib", o.copy_mib,
                   "The size of one copy of the verdict probes, in MiB (1 to 4096; default 256: trials of about "
                   "5 ms even at Gen5 x16, long against launch and event resolution)")
      ->type_name("N")
      ->check(whole_number_between(1, 4096));
  command
      ->add_option("--simulate", o.check.simulate,
                   "Run the whole check, probes included, on the simulated GPU node SCENARIO describes (a JSON "
                   "file, sim/README.md; also PCIEVAL_SIMULATE): labelled simulated everywhere, never this host")
      ->type_name("SCENARIO");
  command
      ->add_option("--reference", o.check.reference_path,
                   "Record pcieval-copy-reference's JSON (FILE) beside this run's h2d_ce/d2h_ce of its GPU, with "
                   "their ratio (make gpu-check)")
      ->type_name("FILE");
  // A soak: the burn-in of a node before it joins a cluster.
  CLI::Option* rounds_flag =
      command
          ->add_option("--rounds", o.check.probes.rounds,
                       "Soak: run the probes N times back to back, sampling links and error counters throughout; "
                       "a dip or a link drop in any round fails (1 to 1000000)")
          ->type_name("N")
          ->check(whole_number_between(1, kMaxCount));
  CLI::Option* duration_flag =
      command
          ->add_option("--duration", o.check.probes.duration_s,
                       "Soak: repeat the probes for this long (90s, 30m, 2h, 1d; a bare number is seconds; 1 s to "
                       "30 d); with --rounds, whichever comes first. -o FILE is rewritten after every round")
          ->type_name("TIME")
          ->transform(duration_between(1, kMaxDurationS));
  command
      ->add_option("--stop-grace", o.check.stop_grace_s,
                   "After the first SIGINT, SIGTERM, SIGHUP, SIGUSR1 or SIGALRM (each stops the run cleanly: what "
                   "was measured is judged and written, exit 3 unless something failed; SIGHUP stays ignored "
                   "under nohup), further ones within this long are the same request, as GNU timeout and Slurm "
                   "signal the process and then its group; a later one kills (0 s to 1 h; default 10 s)")
      ->type_name("TIME")
      ->transform(duration_between(0, 3600));
  rounds_flag->excludes(no_probes_flag);
  duration_flag->excludes(no_probes_flag);
  add_fleet_check_flags(*command, o.fleet_check, o.no_fleet_allreduce);
  return command;
}

// `pcieval topo`: the devices under their root ports.
CLI::App* add_topo_command(CLI::App& cli, CommandLineOptions& o) {
  CLI::App* command =
      cli.add_subcommand("topo", "Print GPUs, NICs and NVMe drives under their root ports with NUMA nodes");
  add_source_flags(*command, o.topo.sources);
  command->add_flag("--json", o.topo.json, "Print the devices as JSON");
  return command;
}

// `pcieval validate RESULTS`: judge a results document again.
CLI::App* add_validate_command(CLI::App& cli, CommandLineOptions& o) {
  CLI::App* command =
      cli.add_subcommand("validate", "Judge the evidence of a results document (check -o) again; exit codes as check");
  command->add_option("RESULTS", o.validate.input_path, "The results document to judge; '-' reads stdin")
      ->type_name("FILE")
      ->required();
  add_judge_flags(*command, o.validate.judge);
  return command;
}

// `pcieval diagnose FILE...`: judge captured text.
CLI::App* add_diagnose_command(CLI::App& cli, CommandLineOptions& o) {
  CLI::App* command =
      cli.add_subcommand("diagnose",
                         "Judge captured text (lspci -vv, nvidia-smi -q [-x], dmesg) from another machine; exit codes "
                         "as check");
  command->add_option("FILE", o.diagnose.input_paths, "Captured text, merged by PCI address in order; '-' reads stdin")
      ->type_name("FILE...")
      ->required();
  command->add_option("--format", o.diagnose.format,
                      "Read every FILE as this format instead of detecting it: lspci, nvidia-smi, "
                      "nvidia-smi-xml, kernel-log, nvbandwidth, nvbandwidth-json, bandwidthtest, nccl-tests, "
                      "nccl-tests-json, p2pbandwidthlatencytest, nvidia-smi-topo-p2p");
  command
      ->add_option("--link", o.diagnose.link,
                   "Judge nvbandwidth/bandwidthTest numbers against this link: gen4x16, \"Gen5 x8\", \"16GT/s x16\"")
      ->type_name("LINK");
  add_judge_flags(*command, o.diagnose.judge);
  return command;
}

// `pcieval compare BEFORE AFTER`.
CLI::App* add_compare_command(CLI::App& cli, CommandLineOptions& o) {
  CLI::App* command = cli.add_subcommand(
      "compare",
      "Compare two results documents of one node (before and after a fix); exit 0 when AFTER passes and nothing got "
      "worse, 1 when something got worse or AFTER fails, 3 when AFTER is inconclusive");
  command->add_option("BEFORE", o.compare.before_path, "The earlier results document")->type_name("FILE")->required();
  command->add_option("AFTER", o.compare.after_path, "The later results document")->type_name("FILE")->required();
  command
      ->add_option("--profile", o.compare.profile_path,
                   "Judge both documents with the threshold profile in FILE (default: AFTER's thresholds)")
      ->type_name("FILE");
  return command;
}

// CLI11 prints an exclusion as "--quick Excludes: --full --no-probes" beside
// the value name, where it reads as part of the flag's syntax. This says it
// in words at the end of the description instead: "(not with --full,
// --no-probes)". Only the help changes; CLI11 still refuses the pair.
class PlainHelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override {
    std::string text = CLI::Formatter::make_option_opts(option);
    // CLI11 (2.x) writes the exclusions last: cut from their label on.
    if (const auto at = text.find(" " + get_label("Excludes") + ":"); at != std::string::npos) text.erase(at);
    return text;
  }

  std::string make_option_desc(const CLI::Option* option) const override {
    std::string text = CLI::Formatter::make_option_desc(option);
    // get_excludes() is a set of pointers: sorted by name so that the help,
    // and the man page made from it, are the same on every run.
    std::vector<std::string> names;
    for (const CLI::Option* other : option->get_excludes()) names.push_back(other->get_name());
    if (names.empty()) return text;
    std::sort(names.begin(), names.end());
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return text + " (not with " + list + ")";
  }
};

}  // namespace

Commands add_commands(CLI::App& cli, CommandLineOptions& o) {
  // Before any add_subcommand: a subcommand takes its parent's formatter
  // when it is created.
  cli.formatter(std::make_shared<PlainHelpFormatter>());
  Commands commands;
  commands.check = add_check_command(cli, o);
  commands.topo = add_topo_command(cli, o);
  commands.validate = add_validate_command(cli, o);
  commands.diagnose = add_diagnose_command(cli, o);
  commands.history = add_history_command(cli, o.history);
  commands.report = add_report_command(cli, o.report);
  commands.compare = add_compare_command(cli, o);
  commands.retrain = add_retrain_command(cli, o.retrain);
  commands.fleet_merge = add_fleet_command(cli, o.fleet_merge);
  return commands;
}

namespace {

std::vector<CLI::App*> subcommands_of(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

}  // namespace

CommandLine read_command_line(CLI::App& cli, int argc, char** argv) {
  CommandLine line;
  CLI::App* app = &cli;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    // Below a command with subcommands (the top level, `fleet`) a word names
    // a command unless it is a flag or a flag's value ("--jobs 4"). Below a
    // leaf command words are values, never commands: the loop ends there.
    if (!word.empty() && word.front() == '-') {
      const CLI::Option* option = app->get_option_no_throw(word);
      if (option != nullptr && option->get_expected_min() > 0) ++i;
      continue;
    }
    const std::vector<CLI::App*> commands = subcommands_of(*app);
    if (commands.empty()) break;
    const auto named = std::find_if(commands.begin(), commands.end(),
                                    [&](const CLI::App* command) { return command->check_name(word); });
    if (named == commands.end()) {
      line.unknown = word;
      break;
    }
    line.commands.push_back(*named);
    app = *named;
  }
  return line;
}

namespace {

// "pcieval fleet merge": the command as typed, for messages.
std::string command_text(const CommandLine& line) {
  std::string text = "pcieval";
  for (const CLI::App* command : line.commands) text += " " + command->get_name();
  return text;
}

// Where a usage error sends the operator: the help of the command they ran,
// which lists its flags, not the top level's list of commands.
std::string help_hint(const CommandLine& line) { return "(run '" + command_text(line) + " --help')"; }

std::string names_text(const std::vector<CLI::App*>& commands, std::vector<std::string>* names = nullptr) {
  std::string text;
  for (const CLI::App* command : commands) {
    text += (text.empty() ? "" : ", ") + command->get_name();
    if (names != nullptr) names->push_back(command->get_name());
  }
  return text;
}

}  // namespace

std::string unknown_command_message(CLI::App& cli, const CommandLine& line) {
  CLI::App& parent = line.commands.empty() ? cli : *line.commands.back();
  std::string prefix;
  for (const CLI::App* command : line.commands) prefix += command->get_name() + " ";
  std::vector<std::string> names;
  const std::string list = names_text(subcommands_of(parent), &names);
  std::string message = "unknown command '" + prefix + *line.unknown + "'";
  if (const auto meant = nearest_name(*line.unknown, names)) {
    message += "; did you mean '" + prefix + *meant + "'?";
  }
  return message + " Commands: " + list + " " + help_hint(line);
}

std::string parse_error_message(const CLI::ParseError& error, CLI::App& cli, const CommandLine& line) {
  CLI::App& deepest = line.commands.empty() ? cli : *line.commands.back();
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && !subcommands_of(deepest).empty()) {
    return "a command is required: " + names_text(subcommands_of(deepest)) + " " + help_hint(line);
  }
  std::string message = error.what();
  if (const auto at = message.find(": must be "); at != std::string::npos) message.erase(at, 1);
  return message + " " + help_hint(line);
}

}  // namespace pcieval::app
