// `pcieval` never links libmpi: under an MPI launcher its check execs
// `pcieval-mpi` from its own directory (app/mpi_launch.cpp). These tests run
// the real binary with the launcher's environment set by hand, so they need
// neither mpirun nor an MPI build; mpi_fleet_test runs the whole path under a
// real mpirun. The node's PCI tree is the small_server_no_gpu fixture (a
// 1U storage server: one NVMe drive and one NIC, no GPU).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

// stdout of `command` (run by the shell), or nullopt when it exited non-zero.
std::optional<std::string> output_of(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) return std::nullopt;
  std::string text;
  std::array<char, 4096> chunk{};
  std::size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) > 0) text.append(chunk.data(), got);
  const int status = ::pclose(pipe.release());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return text;
}

fs::path mpi_build() { return fs::path(PCIEVAL_BINARY).parent_path() / "pcieval-mpi"; }

class MpiLaunch : public ScratchDirTest {
 protected:
  fs::path lone_pcieval() { return lone_pcieval_in(dir_); }

  CliRun run(const std::string& command) { return run_shell(command, dir_); }
};

TEST_F(MpiLaunch, PlainBinaryHasNoLibmpiInItsDynamicSection) {
  if (std::system("command -v readelf >/dev/null 2>&1") != 0) GTEST_SKIP() << "readelf (binutils) is not installed";
  const auto dynamic = output_of("readelf -d " + shell_quote(PCIEVAL_BINARY));
  ASSERT_TRUE(dynamic.has_value());
  EXPECT_THAT(*dynamic, HasSubstr("(NEEDED)"));  // the section was read
  EXPECT_THAT(*dynamic, Not(HasSubstr("libmpi")));
  if (PCIEVAL_TEST_HAVE_MPI) {
    // The control: the same look finds libmpi where it is linked.
    ASSERT_TRUE(fs::exists(mpi_build())) << mpi_build();
    const auto mpi_dynamic = output_of("readelf -d " + shell_quote(mpi_build()));
    ASSERT_TRUE(mpi_dynamic.has_value());
    EXPECT_THAT(*mpi_dynamic, HasSubstr("libmpi"));
  } else {
    EXPECT_FALSE(fs::exists(mpi_build())) << "a build without MPI left " << mpi_build();
  }
}

TEST_F(MpiLaunch, WithoutTheMpiBuildBesideItAnMpiLaunchIsAUsageErrorThatNamesTheFix) {
  const fs::path pcieval = lone_pcieval();
  // Open MPI's mpirun, a PMIx server (srun --mpi=pmix) and PMI-2 (srun --mpi=pmi2).
  for (const char* launcher_env : {"OMPI_COMM_WORLD_SIZE=4", "PMIX_RANK=0", "PMI_SIZE=2"}) {
    SCOPED_TRACE(launcher_env);
    const CliRun result =
        run(std::string(launcher_env) + " " + shell_quote(pcieval) + " check " + fixture_args("small_server_no_gpu") +
            " -o " + shell_quote(dir_ / "node.json") + " --fleet-output " + shell_quote(dir_ / "fleet.json"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("pcieval: error: "));
    EXPECT_THAT(result.err, HasSubstr((dir_ / "bin" / "pcieval-mpi").string()));
    EXPECT_THAT(result.err, HasSubstr("No such file or directory"));
    EXPECT_THAT(result.err, HasSubstr("libopenmpi-dev"));
    EXPECT_THAT(result.err, HasSubstr("pcieval fleet merge"));
    EXPECT_EQ(line_count(result.err), 1) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
    EXPECT_FALSE(fs::exists(dir_ / "node.json"));
    EXPECT_FALSE(fs::exists(dir_ / "fleet.json"));
  }
  // Without a launcher the lone copy is the plain check it always was.
  const CliRun plain = run(shell_quote(pcieval) + " check " + fixture_args("small_server_no_gpu") + " -q");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
}

TEST_F(MpiLaunch, AnMpiLaunchBecomesTheMpiBuildWithTheSameArgsEnvironmentAndPid) {
  const fs::path pcieval = lone_pcieval();
  // A stand-in for pcieval-mpi that tells what it was started with and exits
  // with a code no check returns, so the caller sees whose code it got.
  const fs::path stand_in = dir_ / "bin" / "pcieval-mpi";
  write(stand_in.string(),
        "#!/bin/sh\n"
        "echo \"pid=$$\"\n"
        "echo \"mark=$PCIEVAL_TEST_MARK\"\n"
        "for a in \"$@\"; do echo \"arg=$a\"; done\n"
        "exit 7\n");
  fs::permissions(stand_in, fs::perms::owner_all);
  const std::string output = (dir_ / "a b.json").string();  // a space: no shell between them
  // exec all the way: the shell's pid is pcieval's and then the stand-in's.
  const CliRun result =
      run("sh -c " + shell_quote("echo \"pid=$$\"; exec env PCIEVAL_TEST_MARK=kept OMPI_COMM_WORLD_SIZE=4 " +
                                 shell_quote(pcieval) + " check --no-probes -q -o " + shell_quote(output)));
  EXPECT_EQ(result.exit_code, 7) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  const std::size_t first_line = result.out.find('\n');
  ASSERT_NE(first_line, std::string::npos) << result.out;
  const std::string shell_pid = result.out.substr(0, first_line + 1);
  EXPECT_EQ(result.out,
            shell_pid + shell_pid + "mark=kept\narg=check\narg=--no-probes\narg=-q\narg=-o\narg=" + output + "\n");
  EXPECT_FALSE(fs::exists(output));
}

}  // namespace
}  // namespace pcieval::testing
