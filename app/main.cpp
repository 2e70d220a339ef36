// pcieval: PCIe bandwidth benchmark and validation for GPU nodes.
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <string>

#include "app/commands.hpp"
#include "app/mpi_launch.hpp"
#ifdef PCIEVAL_HAVE_MPI
#include "app/mpi_fleet.hpp"
#endif

namespace {

using pcieval::app::kExitUsage;

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
  command.add_option("--expect-gpus", judge.expected_gpus, "Report 'missing' when fewer than N GPUs are found")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
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
                  "overrides per GPU model; see README)")
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
  command->add_option("--limit", history.limit, "Only the newest N runs")->type_name("N")->check(CLI::PositiveNumber);
  command->add_flag("--json", history.json, "Print runs and trends as JSON");
  return command;
}

// check's fleet flags: an MPI-launched check (mpirun, srun) is a fleet run.
void add_fleet_check_flags(CLI::App& command, pcieval::app::FleetCheckOptions& fleet) {
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
                  "Under mpirun/srun: seconds rank 0 waits, after its own check, for the other nodes (default 300)")
      ->type_name("S")
      ->check(CLI::PositiveNumber);
  command.add_flag("--fleet-one-node-per-rank", fleet.one_node_per_rank,
                   "Under mpirun: treat every rank as its own node, '{rank}' in --sysfs-root, --topology-xml and -o "
                   "naming its fixture (tests and labs)");
  command.add_flag("!--no-fleet-allreduce", fleet.allreduce,
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
  command->add_option("--timeout-s", retrain.timeout_s, "How long the link may take to come back (default 1)")
      ->type_name("N");
  return command;
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
                       "a dip or a link drop in any round fails")
          ->type_name("N")
          ->check(CLI::Range(1, 1'000'000));
  CLI::Option* duration_flag =
      check_cmd
          ->add_option("--duration", check.probes.duration_s,
                       "Soak: repeat the probes for this long (90s, 30m, 2h; a bare number is seconds); with --rounds, "
                       "whichever comes first. -o FILE is rewritten after every round")
          ->type_name("TIME")
          ->transform(CLI::AsNumberWithUnit(std::map<std::string, double>{{"s", 1.0}, {"m", 60.0}, {"h", 3600.0}},
                                            CLI::AsNumberWithUnit::CASE_SENSITIVE))
          ->check(CLI::PositiveNumber);
  rounds_flag->excludes(no_probes_flag);
  duration_flag->excludes(no_probes_flag);
  pcieval::app::FleetCheckOptions fleet_check;
  add_fleet_check_flags(*check_cmd, fleet_check);

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
    pcieval::app::print_error(std::string(e.what()) + " (run 'pcieval --help')");
    return kExitUsage;
  }

  if (check_cmd->parsed()) {
    if (list_probes) return pcieval::app::run_list_probes();
    check.probes.enabled = !no_probes;
    if (full) check.probes.config.mode = pcieval::ProbeMode::kFull;
    check.probes.progress = !check.judge.quiet;
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
    return run(argc, argv);
  } catch (const std::exception& e) {
    pcieval::app::print_error(std::string("internal error: ") + e.what());
  } catch (...) {
    pcieval::app::print_error("internal error: unknown exception");
  }
  return pcieval::app::kExitInconclusive;
}
