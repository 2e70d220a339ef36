// Runs the built pcieval binary the way an operator or a script would, and
// captures what it printed and its exit code.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pcieval::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `command` through the shell, stdin empty, stdout and stderr caught in
// files under `dir` (which must exist).
inline CliRun run_shell(const std::string& command, const std::filesystem::path& dir) {
  const std::string redirected =
      command + " >" + shell_quote(dir / "out") + " 2>" + shell_quote(dir / "err") + " </dev/null";
  const int status = std::system(redirected.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = slurp(dir / "out");
  run.err = slurp(dir / "err");
  return run;
}

// `environment` ("NAME=value ...", shell-quoted) and `args` are passed
// through the shell; quote anything user-like with shell_quote.
inline CliRun run_pcieval_with_environment(const std::string& environment, const std::string& args) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("pcieval-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  CliRun run = run_shell(environment + " " + std::string(PCIEVAL_BINARY) + " " + args, dir);
  std::filesystem::remove_all(dir);
  return run;
}

inline CliRun run_pcieval(const std::string& args) { return run_pcieval_with_environment("", args); }

// A copy of the built pcieval alone in `dir`/bin: /proc/self/exe names the
// copy, so the pcieval-mpi it looks for is whatever a test puts beside it.
inline std::filesystem::path lone_pcieval_in(const std::filesystem::path& dir) {
  const std::filesystem::path bin = dir / "bin";
  std::filesystem::create_directories(bin);
  std::filesystem::copy_file(PCIEVAL_BINARY, bin / "pcieval");
  std::filesystem::permissions(bin / "pcieval", std::filesystem::perms::owner_all);
  return bin / "pcieval";
}

inline std::filesystem::path fixture(const std::string& machine) {
  return std::filesystem::path(PCIEVAL_FIXTURES_DIR) / machine;
}

// "--sysfs-root <machine>/sys --topology-xml <machine>/topology.xml": nothing
// of the machine running the test is read.
inline std::string fixture_args(const std::string& machine) {
  return "--sysfs-root " + shell_quote(fixture(machine) / "sys") + " --topology-xml " +
         shell_quote(fixture(machine) / "topology.xml");
}

// A scratch directory per test, named after the test and this process:
// ctest runs the tests of one binary in parallel processes.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "-" + info->name();
    std::replace(name.begin(), name.end(), '/', '-');
    dir_ = std::filesystem::temp_directory_path() / ("pcieval-cli-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  [[nodiscard]] std::string path(const std::string& file) const { return (dir_ / file).string(); }
  static void write(const std::string& file, const std::string& text) { std::ofstream(file) << text; }

  std::filesystem::path dir_;
};

// Every fixture machine generated into the build tree, by name.
inline std::vector<std::string> fixture_machines() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(PCIEVAL_FIXTURES_DIR)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Operators read errors in Slurm logs: pcieval's are one line.
inline int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace pcieval::testing
