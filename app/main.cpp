// pcieval: PCIe bandwidth benchmark and validation for GPU nodes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "app/cli_flags.hpp"
#include "app/commands.hpp"
#include "app/mpi_launch.hpp"
#ifdef PCIEVAL_HAVE_MPI
#include "app/mpi_fleet.hpp"
#endif

namespace {

using pcieval::app::kExitUsage;
using pcieval::app::kMaxDurationS;

// No node carries this many GPUs; a larger count is a typo (88 for 8).
constexpr int kMaxExpectedGpus = 1024;
// history --limit and check --rounds: far beyond any history or soak, and
// within an int.
constexpr int kMaxCount = 1'000'000;

void add_source_flags(CLI::App& command, pcieval::app::SourceOptions& sources) {
  command.add_option("--sysfs-root", sources.sysfs_root, "Read the PCI tree from DIR/bus/pci/devices (default /sys)")
      ->type_name("DIR");
  command
      .add_option("--topology-xml", sources.topology_xml,
                  "Read the hwloc topology from FILE (lstopo --of xml) instead of discovering it; with "
                  "--sysfs-root, nothing of this machine is read")
      ->type_name("FILE");
}

// -o, --expect-gpus and -q: how check and validate judge and where they tell.
void add_judge_flags(CLI::App& command, pcieval::app::JudgeOptions& judge) {
  command.add_option("-o,--output", judge.output_path, "Write the results document (JSON) to FILE, atomically")
      ->type_name("FILE");
  command
      .add_option("--expect-gpus", judge.expected_gpus,
                  "Report 'missing' when fewer than N GPUs are found (0 to " + std::to_string(kMaxExpectedGpus) + ")")
      ->type_name("N")
      ->check(pcieval::app::whole_number_between(0, kMaxExpectedGpus));
  command
      .add_option("--prom", judge.prom_path,
                  "Write Prometheus metrics to FILE (for node_exporter's textfile collector: name it *.prom)")
      ->type_name("FILE");
  command.add_option("--junit", judge.junit_path, "Write JUnit XML to FILE, one test case per verdict")
      ->type_name("FILE");
  command.add_option("--html", judge.html_path, "Write the HTML report (one self-contained file) to FILE")
      ->type_name("FILE");
  command
      .add_option("--baseline", judge.baseline_path,
                  "A known-good results document of this node: copy medians more than 10% below it are bandwidth_low")
      ->type_name("FILE");
  command
      .add_option("--profile", judge.profile_path,
                  "Judge with the threshold profile in FILE (JSON: floors, warning band, spread, error rate, "
                  "overrides per GPU model; see docs/verdicts.md)")
      ->type_name("FILE");
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
CLI::App* add_history_command(CLI::App& cli, pcieval::app::HistoryOptions& history) {
  CLI::App* command =
      cli.add_subcommand("history", "List the runs of the --history database and each GPU's bandwidth over time");
  command->add_option("--db", history.db_path, "The history database (default: where --history writes)")
      ->type_name("DB");
  command->add_option("--gpu", history.subject, "Only runs and trends of this GPU (PCI address) or host subject")
      ->type_name("BDF");
  command->add_option("--limit", history.limit, "Only the newest N runs (1 to " + std::to_string(kMaxCount) + ")")
      ->type_name("N")
      ->check(pcieval::app::whole_number_between(1, kMaxCount));
  command->add_flag("--json", history.json, "Print runs and trends as JSON");
  return command;
}

// check's fleet flags: an MPI-launched check (mpirun, srun) is a fleet run.
// `no_allreduce` is --no-fleet-allreduce: a plain flag, because CLI11 shows a
// negated one ("!--no-...") as "--no-fleet-allreduce{false}" in the help.
void add_fleet_check_flags(CLI::App& command, pcieval::app::FleetCheckOptions& fleet, bool& no_allreduce) {
  command
      .add_option("--fleet-output", fleet.output_path,
                  "Under mpirun/srun: rank 0 writes the fleet document (JSON) to FILE, atomically")
      ->type_name("FILE");
  command
      .add_option("--fleet-html", fleet.html_path,
                  "Under mpirun/srun: rank 0 writes the fleet page (self-contained HTML) to FILE, atomically")
      ->type_name("FILE");
  command
      .add_option("--fleet-timeout", fleet.timeout_s,
                  "Under mpirun/srun: how long rank 0 waits, after its own check, for the other nodes (300s, 10m, "
                  "2h; a bare number is seconds; 1 s to 30 d; default 300 s)")
      ->type_name("TIME")
      ->transform(pcieval::app::duration_between(1, kMaxDurationS));
  command.add_flag("--fleet-one-node-per-rank", fleet.one_node_per_rank,
                   "Under mpirun: treat every rank as its own node, '{rank}' in --sysfs-root, --topology-xml and -o "
                   "naming its fixture (tests and labs)");
  command.add_flag("--no-fleet-allreduce", no_allreduce,
                   "Under mpirun/srun: skip the NCCL all-reduce over every GPU of every node that follows the "
                   "nodes' checks");
}

// `pcieval fleet merge FILE... [-o FILE] [--quiet]`.
CLI::App* add_fleet_command(CLI::App& cli, pcieval::app::FleetMergeOptions& merge) {
  CLI::App* fleet_cmd = cli.add_subcommand("fleet", "Fleet documents: many nodes' results as one");
  fleet_cmd->require_subcommand(1);
  CLI::App* merge_cmd = fleet_cmd->add_subcommand(
      "merge",
      "Merge results documents (check -o) of many nodes into one fleet table and document; exit with the worst "
      "node's code: 1 fail, 2 unreadable input, 3 inconclusive, 0 pass");
  merge_cmd->add_option("FILE", merge.input_paths, "Results documents, one per node")->type_name("FILE...")->required();
  merge_cmd->add_option("-o,--output", merge.output_path, "Write the fleet document (JSON) to FILE, atomically")
      ->type_name("FILE");
  merge_cmd->add_option("--html", merge.html_path, "Write the fleet page (self-contained HTML) to FILE, atomically")
      ->type_name("FILE");
  merge_cmd->add_flag("-q,--quiet", merge.quiet, "Print no table; the exit code and -o FILE carry the result");
  merge_cmd->add_option("--jobs", merge.jobs, "Read the files with N threads (default: one per usable CPU)")
      ->type_name("N")
      ->check(CLI::Range(1U, 1024U));
  return merge_cmd;
}

// `pcieval report RESULTS.json`: render a results document as it stands.
CLI::App* add_report_command(CLI::App& cli, pcieval::app::ReportOptions& report) {
  CLI::App* command = cli.add_subcommand(
      "report", "Render a results document as it stands (nothing re-judged): table, HTML, Prometheus, JUnit");
  command->add_option("RESULTS", report.input_path, "The results document to render; '-' reads stdin")
      ->type_name("FILE")
      ->required();
  command->add_option("--html", report.html_path, "Write the HTML report (one self-contained file) to FILE")
      ->type_name("FILE");
  command->add_option("--prom", report.prom_path, "Write Prometheus metrics to FILE (node_exporter textfile)")
      ->type_name("FILE");
  command->add_option("--junit", report.junit_path, "Write JUnit XML to FILE, one test case per verdict")
      ->type_name("FILE");
  command->add_flag("--table", report.table, "Print the table on stdout too (the default when no file is asked for)");
  return command;
}

// `pcieval retrain BDF`: a dry run unless --apply.
CLI::App* add_retrain_command(CLI::App& cli, pcieval::app::RetrainCommandOptions& retrain) {
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
      ->add_option("--timeout-s", retrain.timeout_s,
                   "How long the link may take to come back, in seconds (0.01 to 60; default 1)")
      ->type_name("S")
      ->transform(pcieval::app::duration_between(0.01, 60));
  return command;
}

// The commands a command line names ("check"; "fleet", "merge") and the
// first word that should have named one and names none ("chek").
struct CommandLine {
  std::vector<CLI::App*> commands;
  std::optional<std::string> unknown;
};

std::vector<CLI::App*> subcommands_of(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

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

// "unknown command 'chek'; did you mean 'check'? Commands: check, topo, ...":
// CLI11 itself says only "A subcommand is required".
std::string unknown_command_message(CLI::App& cli, const CommandLine& line) {
  CLI::App& parent = line.commands.empty() ? cli : *line.commands.back();
  std::string prefix;
  for (const CLI::App* command : line.commands) prefix += command->get_name() + " ";
  std::vector<std::string> names;
  const std::string list = names_text(subcommands_of(parent), &names);
  std::string message = "unknown command '" + prefix + *line.unknown + "'";
  if (const auto meant = pcieval::app::nearest_name(*line.unknown, names)) {
    message += "; did you mean '" + prefix + *meant + "'?";
  }
  return message + " Commands: " + list + " " + help_hint(line);
}

// CLI11's message, made to read as a sentence about the flag, then where to
// look. Validators (cli_flags.hpp) return "must be ...", which CLI11 puts
// after "--flag: ".
std::string parse_error_message(const CLI::ParseError& error, CLI::App& cli, const CommandLine& line) {
  CLI::App& deepest = line.commands.empty() ? cli : *line.commands.back();
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && !subcommands_of(deepest).empty()) {
    return "a command is required: " + names_text(subcommands_of(deepest)) + " " + help_hint(line);
  }
  std::string message = error.what();
  if (const auto at = message.find(": must be "); at != std::string::npos) message.erase(at, 1);
  return message + " " + help_hint(line);
}

// A table or document that did not reach stdout (a full disk, a closed
// descriptor) is an output not written, exit 2 as for -o FILE: otherwise
// `pcieval check > /dev/full` exits 0 with nothing said. Checked last, so
// that every file asked for has been written first.
int checked_stdout(int code) {
  // errno of the first flush that failed: a second finds the buffer
  // already dropped and succeeds.
  errno = 0;
  std::cout.flush();
  int error = errno;
  const bool flushed = std::fflush(stdout) == 0;
  if (error == 0) error = errno;
  if (flushed && std::ferror(stdout) == 0 && std::cout.good()) return code;
  pcieval::app::print_error(std::string("could not write to standard output") +
                            (error != 0 ? std::string(": ") + std::strerror(error) : std::string()));
  return kExitUsage;
}

// check, on its own or as one node of an MPI fleet run. This main is built
// twice: `pcieval` (no MPI) hands an MPI launch to `pcieval-mpi`, the same
// main built with PCIEVAL_HAVE_MPI, which runs the fleet itself.
int run_check_or_fleet(const pcieval::app::CheckOptions& check, const pcieval::app::FleetCheckOptions& fleet,
                       [[maybe_unused]] char** argv) {
#ifdef PCIEVAL_HAVE_MPI
  if (pcieval::app::launched_by_mpi()) return pcieval::app::run_fleet_check(check, fleet);
#else
  // exec keeps the pid, so the launcher still tracks the rank; libmpi is
  // loaded only by the processes of a fleet run. Nothing is written first.
  if (pcieval::app::launched_by_mpi()) {
    pcieval::app::print_error(pcieval::app::exec_mpi_sibling(argv).message);
    return kExitUsage;
  }
#endif
  if (fleet.any_given()) {
    pcieval::app::print_error(
        "--fleet-output, --fleet-html, --fleet-one-node-per-rank and --no-fleet-allreduce need an MPI launch (mpirun "
        "or srun); for "
        "results files use 'pcieval fleet merge'");
    return kExitUsage;
  }
  return pcieval::app::run_check(check);
}

int run(int argc, char** argv) {
  CLI::App cli{"pcieval: find GPU and host PCIe links that trained below what their slots can do."};
  cli.set_version_flag("--version", std::string("pcieval ") + PCIEVAL_VERSION);
  cli.require_subcommand(1);

  pcieval::app::CheckOptions check;
  CLI::App* check_cmd = cli.add_subcommand(
      "check", "Judge every PCIe device's path up to its root port; exit 0 pass, 1 fail, 2 usage, 3 inconclusive");
  add_source_flags(*check_cmd, check.sources);
  add_judge_flags(*check_cmd, check.judge);
  bool quick = false;
  bool full = false;
  bool no_probes = false;
  bool list_probes = false;
  CLI::Option* quick_flag =
      check_cmd->add_flag("--quick", quick, "Run the probes at the verdict size only (the default; well under 30 s)");
  CLI::Option* full_flag = check_cmd->add_flag(
      "--full", full, "Also run the 4 KiB..1 GiB size sweep and the remote-NUMA probe (takes minutes)");
  CLI::Option* no_probes_flag = check_cmd->add_flag(
      "--no-probes", no_probes, "Read and judge the links only; copy nothing (for nodes running jobs)");
  quick_flag->excludes(full_flag)->excludes(no_probes_flag);
  full_flag->excludes(no_probes_flag);
  check_cmd->add_flag("--list-probes", list_probes, "List every probe with what it measures, then exit");
  check_cmd
      ->add_option("--reference", check.reference_path,
                   "Record pcieval-copy-reference's JSON (FILE) beside this run's h2d_ce/d2h_ce of its GPU, with "
                   "their ratio (make gpu-check)")
      ->type_name("FILE");
  // A soak: the burn-in of a node before it joins a cluster.
  CLI::Option* rounds_flag =
      check_cmd
          ->add_option("--rounds", check.probes.rounds,
                       "Soak: run the probes N times back to back, sampling links and error counters throughout; "
                       "a dip or a link drop in any round fails (1 to 1000000)")
          ->type_name("N")
          ->check(pcieval::app::whole_number_between(1, kMaxCount));
  CLI::Option* duration_flag =
      check_cmd
          ->add_option("--duration", check.probes.duration_s,
                       "Soak: repeat the probes for this long (90s, 30m, 2h, 1d; a bare number is seconds; 1 s to "
                       "30 d); with --rounds, whichever comes first. -o FILE is rewritten after every round")
          ->type_name("TIME")
          ->transform(pcieval::app::duration_between(1, kMaxDurationS));
  check_cmd
      ->add_option("--stop-grace", check.stop_grace_s,
                   "After the first SIGINT or SIGTERM (which stops the run cleanly, exit 3), further ones within "
                   "this long are the same request, as GNU timeout and Slurm signal the process and then its group; "
                   "a later one kills (0 s to 1 h; default 10 s)")
      ->type_name("TIME")
      ->transform(pcieval::app::duration_between(0, 3600));
  rounds_flag->excludes(no_probes_flag);
  duration_flag->excludes(no_probes_flag);
  pcieval::app::FleetCheckOptions fleet_check;
  bool no_fleet_allreduce = false;
  add_fleet_check_flags(*check_cmd, fleet_check, no_fleet_allreduce);

  pcieval::app::TopoOptions topo;
  CLI::App* topo_cmd =
      cli.add_subcommand("topo", "Print GPUs, NICs and NVMe drives under their root ports with NUMA nodes");
  add_source_flags(*topo_cmd, topo.sources);
  topo_cmd->add_flag("--json", topo.json, "Print the devices as JSON");

  pcieval::app::ValidateOptions validate;
  CLI::App* validate_cmd =
      cli.add_subcommand("validate", "Judge the evidence of a results document (check -o) again; exit codes as check");
  validate_cmd->add_option("RESULTS", validate.input_path, "The results document to judge; '-' reads stdin")
      ->type_name("FILE")
      ->required();
  add_judge_flags(*validate_cmd, validate.judge);

  pcieval::app::DiagnoseOptions diagnose;
  CLI::App* diagnose_cmd =
      cli.add_subcommand("diagnose",
                         "Judge captured text (lspci -vv, nvidia-smi -q [-x], dmesg) from another machine; exit codes "
                         "as check");
  diagnose_cmd
      ->add_option("FILE", diagnose.input_paths, "Captured text, merged by PCI address in order; '-' reads stdin")
      ->type_name("FILE...")
      ->required();
  diagnose_cmd->add_option("--format", diagnose.format,
                           "Read every FILE as this format instead of detecting it: lspci, nvidia-smi, "
                           "nvidia-smi-xml, kernel-log, nvbandwidth, nvbandwidth-json, bandwidthtest, nccl-tests, "
                           "nccl-tests-json");
  diagnose_cmd
      ->add_option("--link", diagnose.link,
                   "Judge nvbandwidth/bandwidthTest numbers against this link: gen4x16, \"Gen5 x8\", \"16GT/s x16\"")
      ->type_name("LINK");
  add_judge_flags(*diagnose_cmd, diagnose.judge);

  pcieval::app::HistoryOptions history;
  CLI::App* history_cmd = add_history_command(cli, history);

  pcieval::app::ReportOptions report;
  CLI::App* report_cmd = add_report_command(cli, report);

  pcieval::app::CompareOptions compare;
  CLI::App* compare_cmd = cli.add_subcommand(
      "compare",
      "Compare two results documents of one node (before and after a fix); exit 0 when AFTER passes and nothing got "
      "worse, 1 when something got worse or AFTER fails, 3 when AFTER is inconclusive");
  compare_cmd->add_option("BEFORE", compare.before_path, "The earlier results document")->type_name("FILE")->required();
  compare_cmd->add_option("AFTER", compare.after_path, "The later results document")->type_name("FILE")->required();
  compare_cmd
      ->add_option("--profile", compare.profile_path,
                   "Judge both documents with the threshold profile in FILE (default: AFTER's thresholds)")
      ->type_name("FILE");

  pcieval::app::RetrainCommandOptions retrain;
  CLI::App* retrain_cmd = add_retrain_command(cli, retrain);

  pcieval::app::FleetMergeOptions fleet_merge;
  CLI::App* fleet_merge_cmd = add_fleet_command(cli, fleet_merge);

  const CommandLine line = read_command_line(cli, argc, argv);
  if (line.unknown) {
    pcieval::app::print_error(unknown_command_message(cli, line));
    return kExitUsage;
  }
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, then where to look: operators read this in Slurm logs.
    pcieval::app::print_error(parse_error_message(e, cli, line));
    return kExitUsage;
  }

  if (check_cmd->parsed()) {
    if (list_probes) return pcieval::app::run_list_probes();
    check.probes.enabled = !no_probes;
    if (full) check.probes.config.mode = pcieval::ProbeMode::kFull;
    check.probes.progress = !check.judge.quiet;
    fleet_check.allreduce = !no_fleet_allreduce;
    return run_check_or_fleet(check, fleet_check, argv);
  }
  if (fleet_merge_cmd->parsed()) return pcieval::app::run_fleet_merge(fleet_merge);
  if (validate_cmd->parsed()) return pcieval::app::run_validate(validate);
  if (diagnose_cmd->parsed()) return pcieval::app::run_diagnose(diagnose);
  if (compare_cmd->parsed()) return pcieval::app::run_compare(compare);
  if (history_cmd->parsed()) return pcieval::app::run_history(history);
  if (retrain_cmd->parsed()) return pcieval::app::run_retrain(retrain);
  if (report_cmd->parsed()) return pcieval::app::run_report(report);
  return pcieval::app::run_topo(topo);
}

}  // namespace

int main(int argc, char** argv) {
  // Library code returns errors as values; anything thrown past it (out of
  // memory, a bug) still ends with one line and "could not judge", never
  // with std::terminate's core dump in a Slurm prolog.
  try {
    return checked_stdout(run(argc, argv));
  } catch (const std::exception& e) {
    pcieval::app::print_error(std::string("internal error: ") + e.what());
  } catch (...) {
    pcieval::app::print_error("internal error: unknown exception");
  }
  return pcieval::app::kExitInconclusive;
}
