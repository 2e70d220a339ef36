// The check pcieval makes before it execs pcieval-mpi under an MPI launcher
// (app/mpi_launch.cpp, check_mpi_sibling): the MPI build must be an
// executable file, and the libmpi it links must load on this node. Without
// the check, a node lacking Open MPI's runtime gets the dynamic loader's exit
// 127 after the exec instead of pcieval's usage error. The library part runs
// against sonames that no node has; the file part also through the real
// binary, with the launcher's environment set by hand (as
// tests/mpi/mpi_launch_test.cpp does), on the small_server_no_gpu fixture
// (a 1U storage server: one NVMe drive and one NIC, no GPU).
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "app/mpi_launch.hpp"
#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

class MpiPreflight : public ScratchDirTest {
 protected:
  // A stand-in for pcieval-mpi with the given permissions.
  fs::path stand_in(fs::perms permissions) {
    const fs::path path = dir_ / "pcieval-mpi";
    write(path.string(), "#!/bin/sh\nexit 7\n");
    fs::permissions(path, permissions);
    return path;
  }

  fs::path lone_pcieval() { return lone_pcieval_in(dir_); }

  CliRun run(const std::string& command) { return run_shell(command, dir_); }
};

TEST_F(MpiPreflight, AMissingMpiLibraryIsNamedWithTheLoadersReasonAndTheFix) {
  const fs::path sibling = stand_in(fs::perms::owner_all);
  const Status ready = app::check_mpi_sibling(sibling, "libpcieval-test-no-such-mpi.so.40");
  ASSERT_FALSE(ready.ok());
  const std::string& message = ready.error().message;
  EXPECT_THAT(message, HasSubstr("launched by MPI, but the MPI build " + sibling.string()));
  EXPECT_THAT(message, HasSubstr("needs libpcieval-test-no-such-mpi.so.40"));
  // dlerror's own words.
  EXPECT_THAT(message, HasSubstr("libpcieval-test-no-such-mpi.so.40: cannot open shared object file"));
  EXPECT_THAT(message, HasSubstr("libopenmpi3"));
  EXPECT_THAT(message, HasSubstr("pcieval fleet merge"));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(MpiPreflight, TheLibraryIsAlsoLookedForWhereTheBuildLinkedIt) {
  // pcieval-mpi's RUNPATH: an MPI under /opt that the loader cache does not
  // know. Modelled with a link, under a made-up soname, to the C library
  // this test already has loaded.
  Dl_info info{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(&::malloc), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  const fs::path lib_dir = dir_ / "opt-mpi-lib";
  fs::create_directories(lib_dir);
  fs::create_symlink(fs::canonical(info.dli_fname), lib_dir / "libpcieval-test-mpi.so.40");
  const fs::path sibling = stand_in(fs::perms::owner_all);

  EXPECT_FALSE(app::check_mpi_sibling(sibling, "libpcieval-test-mpi.so.40").ok());
  const Status ready = app::check_mpi_sibling(sibling, "libpcieval-test-mpi.so.40", lib_dir);
  EXPECT_TRUE(ready.ok()) << ready.error().message;
  // A directory without it changes nothing.
  EXPECT_FALSE(app::check_mpi_sibling(sibling, "libpcieval-test-no-such-mpi.so.40", lib_dir).ok());
}

TEST_F(MpiPreflight, TheBuildsOwnLibmpiLoadsOnTheMachineThatBuiltIt) {
  const std::string_view soname = app::built_libmpi_soname();
  if (soname.empty()) GTEST_SKIP() << "this build has no pcieval-mpi (or its libmpi soname was not found)";
  EXPECT_THAT(std::string(soname), ::testing::MatchesRegex("lib[a-z_]+\\.so\\.[0-9]+"));
  const Status ready = app::check_mpi_sibling(stand_in(fs::perms::owner_all), soname);
  EXPECT_TRUE(ready.ok()) << ready.error().message;
}

TEST_F(MpiPreflight, WithoutASonameOnlyTheFileIsChecked) {
  const Status ready = app::check_mpi_sibling(stand_in(fs::perms::owner_all), "");
  EXPECT_TRUE(ready.ok()) << ready.error().message;
}

TEST_F(MpiPreflight, TheFileMustExistBeAFileAndBeExecutable) {
  const Status missing = app::check_mpi_sibling(dir_ / "pcieval-mpi", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr((dir_ / "pcieval-mpi").string() + " cannot be started (No such file"));
  EXPECT_THAT(missing.error().message, HasSubstr("libopenmpi-dev"));

  // A source build: how to build it first, the package second.
  EXPECT_THAT(missing.error().message, HasSubstr("built from source"));
  EXPECT_THAT(missing.error().message, HasSubstr("apt-get install pcieval-mpi"));
  EXPECT_LT(missing.error().message.find("libopenmpi-dev"), missing.error().message.find("apt-get install"));

  fs::create_directories(dir_ / "a-directory");
  const Status directory = app::check_mpi_sibling(dir_ / "a-directory", "");
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.error().message, HasSubstr("(not a regular file)"));

  // No execute bit for anyone: refused even for root.
  const Status not_executable =
      app::check_mpi_sibling(stand_in(fs::perms::owner_read | fs::perms::owner_write), "libc.so.6");
  ASSERT_FALSE(not_executable.ok());
  EXPECT_THAT(not_executable.error().message, HasSubstr("not executable by this user"));
  EXPECT_THAT(not_executable.error().message, HasSubstr("chmod +x"));
}

// A package user cannot rebuild: the pcieval package's binary lives in
// /usr/bin, and pcieval-mpi is the second package's, so that comes first.
TEST_F(MpiPreflight, BesideThePackagesBinaryTheFixIsThePcievalMpiPackage) {
  const Status missing = app::check_mpi_sibling("/usr/bin/pcieval-mpi.not-installed", "");
  ASSERT_FALSE(missing.ok());
  const std::string& message = missing.error().message;
  EXPECT_THAT(message, HasSubstr("package's (/usr/bin): install the pcieval-mpi package"));
  EXPECT_THAT(message, HasSubstr("apt-get install pcieval-mpi"));
  EXPECT_THAT(message, HasSubstr("libopenmpi-dev"));  // a source build, second
  EXPECT_LT(message.find("apt-get install"), message.find("libopenmpi-dev"));
  EXPECT_THAT(message, HasSubstr("pcieval fleet merge"));
}

TEST_F(MpiPreflight, AnMpiLaunchBesideANonExecutableMpiBuildIsAUsageErrorBeforeAnyExec) {
  const fs::path pcieval = lone_pcieval();
  const fs::path sibling = dir_ / "bin" / "pcieval-mpi";
  write(sibling.string(), "#!/bin/sh\nexit 7\n");
  fs::permissions(sibling, fs::perms::owner_read | fs::perms::owner_write);
  const CliRun result = run("OMPI_COMM_WORLD_SIZE=4 " + shell_quote(pcieval) + " check " +
                            fixture_args("small_server_no_gpu") + " -o " + shell_quote(dir_ / "node.json"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("pcieval: error: launched by MPI, but the MPI build " + sibling.string()));
  EXPECT_THAT(result.err, HasSubstr("not executable by this user"));
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_FALSE(fs::exists(dir_ / "node.json"));
}

// The whole path on this machine: the built pcieval and pcieval-mpi, with
// the node's libmpi made unloadable (/dev/null bound over it) in a private
// mount namespace of an unprivileged user namespace (unshare -rm).
TEST_F(MpiPreflight, WithoutALoadableLibmpiTheLaunchIsPcievalsUsageErrorNotTheLoadersExit127) {
  const std::string soname(app::built_libmpi_soname());
  if (soname.empty()) GTEST_SKIP() << "this build has no pcieval-mpi (or its libmpi soname was not found)";
  if (std::system("unshare -rm true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "unshare -rm (a user and mount namespace) is not allowed here";
  }
  void* handle = ::dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  void* symbol = ::dlsym(handle, "MPI_Init");
  Dl_info info{};
  ASSERT_NE(symbol, nullptr);
  ASSERT_NE(::dladdr(symbol, &info), 0);
  const std::string library = info.dli_fname;
  ::dlclose(handle);
  const fs::path mpi_build = fs::path(PCIEVAL_BINARY).parent_path() / "pcieval-mpi";
  ASSERT_TRUE(fs::exists(mpi_build)) << mpi_build;

  const std::string hide = "mount --bind /dev/null " + shell_quote(library) + " && OMPI_COMM_WORLD_SIZE=4 ";
  // The control: started directly, pcieval-mpi is the loader's exit 127.
  const CliRun direct =
      run("unshare -rm sh -c " + shell_quote(hide + shell_quote(mpi_build.string()) + " check --no-probes -q"));
  ASSERT_EQ(direct.exit_code, 127) << direct.err;
  EXPECT_THAT(direct.err, HasSubstr("error while loading shared libraries"));

  const CliRun launched =
      run("unshare -rm sh -c " + shell_quote(hide + shell_quote(PCIEVAL_BINARY) + " check --no-probes -q"));
  EXPECT_EQ(launched.exit_code, 2) << launched.err;
  EXPECT_THAT(launched.err, HasSubstr("pcieval: error: launched by MPI, but the MPI build " + mpi_build.string() +
                                      " needs " + soname + ", which cannot be loaded on this node ("));
  EXPECT_THAT(launched.err, HasSubstr("libopenmpi3"));
  EXPECT_EQ(line_count(launched.err), 1) << launched.err;
  EXPECT_TRUE(launched.out.empty()) << launched.out;
}

}  // namespace
}  // namespace pcieval::testing
