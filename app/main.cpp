// pcieval: PCIe bandwidth benchmark and validation for GPU nodes.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/commands.hpp"

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
  command
      .add_option("--baseline", judge.baseline_path,
                  "A known-good results document of this node: copy medians more than 10% below it are bandwidth_low")
      ->type_name("FILE");
  command.add_flag("-q,--quiet", judge.quiet, "Print no table; the exit code and -o FILE carry the result");
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
      cli.add_subcommand("diagnose", "Judge captured text (lspci -vv) from another machine; exit codes as check");
  diagnose_cmd
      ->add_option("FILE", diagnose.input_paths, "Captured text, merged by PCI address in order; '-' reads stdin")
      ->type_name("FILE...")
      ->required();
  add_judge_flags(*diagnose_cmd, diagnose.judge);

  pcieval::app::CompareOptions compare;
  CLI::App* compare_cmd = cli.add_subcommand(
      "compare",
      "Compare two results documents of one node (before and after a fix); exit 0 when AFTER passes and nothing got "
      "worse, 1 when something got worse or AFTER fails, 3 when AFTER is inconclusive");
  compare_cmd->add_option("BEFORE", compare.before_path, "The earlier results document")->type_name("FILE")->required();
  compare_cmd->add_option("AFTER", compare.after_path, "The later results document")->type_name("FILE")->required();

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
    return pcieval::app::run_check(check);
  }
  if (validate_cmd->parsed()) return pcieval::app::run_validate(validate);
  if (diagnose_cmd->parsed()) return pcieval::app::run_diagnose(diagnose);
  if (compare_cmd->parsed()) return pcieval::app::run_compare(compare);
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
