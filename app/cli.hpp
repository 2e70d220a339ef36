// The pcieval command line: every command's flags, declared once here, and
// the messages of a command line that does not parse. main.cpp parses,
// dispatches and returns the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/commands.hpp"

namespace pcieval::app {

// What the flags of every command fill in. check's mode flags are read into
// CheckOptions after the parse (main.cpp), because CLI11 sets plain bools.
struct CommandLineOptions {
  CheckOptions check;
  FleetCheckOptions fleet_check;
  bool quick = false;               // check --quick (the default)
  bool full = false;                // check --full
  bool p2p = false;                 // check --p2p
  bool no_probes = false;           // check --no-probes
  bool list_probes = false;         // check --list-probes
  std::optional<int> copy_mib;      // check --copy-mib
  bool no_fleet_allreduce = false;  // check --no-fleet-allreduce
  TopoOptions topo;
  ValidateOptions validate;
  DiagnoseOptions diagnose;
  HistoryOptions history;
  ReportOptions report;
  CompareOptions compare;
  RetrainCommandOptions retrain;
  FleetMergeOptions fleet_merge;
};

// The commands, for telling after the parse which one was given.
struct Commands {
  CLI::App* check = nullptr;
  CLI::App* topo = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* diagnose = nullptr;
  CLI::App* history = nullptr;
  CLI::App* report = nullptr;
  CLI::App* compare = nullptr;
  CLI::App* retrain = nullptr;
  CLI::App* fleet_merge = nullptr;
};

// Adds every command, with its flags bound to `options`, to `cli`, in the
// order the help lists them.
[[nodiscard]] Commands add_commands(CLI::App& cli, CommandLineOptions& options);

// The commands a command line names ("check"; "fleet", "merge") and the
// first word that should have named one and names none ("chek").
struct CommandLine {
  std::vector<CLI::App*> commands;
  std::optional<std::string> unknown;
};
[[nodiscard]] CommandLine read_command_line(CLI::App& cli, int argc, char** argv);

// "unknown command 'chek'; did you mean 'check'? Commands: check, topo, ...":
// CLI11 itself says only "A subcommand is required".
[[nodiscard]] std::string unknown_command_message(CLI::App& cli, const CommandLine& line);

// CLI11's message, made to read as a sentence about the flag, then where to
// look. Validators (cli_flags.hpp) return "must be ...", which CLI11 puts
// after "--flag: ".
[[nodiscard]] std::string parse_error_message(const CLI::ParseError& error, CLI::App& cli, const CommandLine& line);

}  // namespace pcieval::app
