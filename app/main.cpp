// pcieval: PCIe bandwidth benchmark and validation for GPU nodes. Parse the
// command line (app/cli.hpp), run the command it names, return its exit code.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "app/mpi_launch.hpp"
#include "kernels/cuda_driver.hpp"
#ifdef PCIEVAL_HAVE_MPI
#include "app/mpi_fleet.hpp"
#endif

namespace {

using pcieval::kExitUsage;

// A table or document that did not reach stdout (a full disk, a closed
// descriptor or pipe) is an output not written, exit 2 as for -o FILE:
// otherwise `pcieval check > /dev/full` exits 0 with nothing said. A proven
// fault stays 1 (with_output_failure). Checked last, so that every file asked
// for has been written first.
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
  return pcieval::app::with_output_failure(code);
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
  // The GPU side's lines load the driver, so only when asked for.
  cli.set_version_flag("--version", std::function<std::string()>([] {
                         return std::string("pcieval ") + PCIEVAL_VERSION + "\n" + pcieval::gpu_version_lines();
                       }));
  cli.require_subcommand(1);
  pcieval::app::CommandLineOptions options;
  const pcieval::app::Commands commands = pcieval::app::add_commands(cli, options);

  const pcieval::app::CommandLine line = pcieval::app::read_command_line(cli, argc, argv);
  if (line.unknown) {
    pcieval::app::print_error(pcieval::app::unknown_command_message(cli, line));
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
    pcieval::app::print_error(pcieval::app::parse_error_message(e, cli, line));
    return kExitUsage;
  }

  if (commands.check->parsed()) {
    if (options.list_probes) return pcieval::app::run_list_probes();
    options.check.probes.enabled = !options.no_probes;
    if (options.full) options.check.probes.config.mode = pcieval::ProbeMode::kFull;
    options.check.probes.config.p2p = options.p2p;
    if (options.copy_mib) options.check.probes.config.size_bytes = static_cast<std::uint64_t>(*options.copy_mib) << 20;
    options.check.probes.progress = !options.check.judge.quiet;
    options.fleet_check.allreduce = !options.no_fleet_allreduce;
    return run_check_or_fleet(options.check, options.fleet_check, argv);
  }
  if (commands.fleet_merge->parsed()) return pcieval::app::run_fleet_merge(options.fleet_merge);
  if (commands.validate->parsed()) return pcieval::app::run_validate(options.validate);
  if (commands.diagnose->parsed()) return pcieval::app::run_diagnose(options.diagnose);
  if (commands.compare->parsed()) return pcieval::app::run_compare(options.compare);
  if (commands.history->parsed()) return pcieval::app::run_history(options.history);
  if (commands.retrain->parsed()) return pcieval::app::run_retrain(options.retrain);
  if (commands.report->parsed()) return pcieval::app::run_report(options.report);
  return pcieval::app::run_topo(options.topo);
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that went away (`pcieval check -o r.json | head -1`) must not
  // kill the run before its files are written: with SIGPIPE ignored a write
  // to the closed pipe fails with EPIPE instead, and checked_stdout makes that
  // exit 2 (or 1) after every file. Inherited by pcieval-mpi across the exec,
  // which runs this same main.
  std::signal(SIGPIPE, SIG_IGN);
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
  return pcieval::kExitInconclusive;
}
