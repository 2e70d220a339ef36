// write_file_atomically: the target holds the old contents or all of the new
// ones, and a failure leaves no temporary file behind.
#include "report/atomic_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/unprivileged.hpp"

namespace pcieval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pcieval-atomic-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, ignored);
    fs::remove_all(dir_, ignored);
  }

  static void put(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  static std::string get(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  // Only the target (and whatever the test made) may be left in the directory.
  [[nodiscard]] std::vector<std::string> leftovers() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name.find(".tmp.") != std::string::npos) names.push_back(name);
    }
    return names;
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesNewFile) {
  const fs::path target = dir_ / "results.json";
  ASSERT_TRUE(write_file_atomically(target.string(), "{\"a\": 1}\n").ok());
  EXPECT_EQ(get(target), "{\"a\": 1}\n");
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(AtomicFileTest, ReplacesContentAndKeepsMode) {
  const fs::path target = dir_ / "results.json";
  put(target, "old contents that are longer than the new ones\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_TRUE(write_file_atomically(target.string(), "new\n").ok());
  EXPECT_EQ(get(target), "new\n");
  EXPECT_EQ(fs::status(target).permissions(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(AtomicFileTest, NewFileIsNotPrivateToTheOwner) {
  // mkstemp creates 0600; results files are read by other tools and users.
  const mode_t old_mask = ::umask(022);
  const fs::path target = dir_ / "results.json";
  const Status written = write_file_atomically(target.string(), "x");
  ::umask(old_mask);
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(fs::status(target).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

TEST_F(AtomicFileTest, RelativePathWritesInWorkingDirectory) {
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir_);
  const Status written = write_file_atomically("plain.json", "rel\n");
  fs::current_path(old_cwd);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(get(dir_ / "plain.json"), "rel\n");
}

TEST_F(AtomicFileTest, MissingDirectoryIsAnErrorNamingThePath) {
  const fs::path target = dir_ / "no-such-dir" / "results.json";
  const Status written = write_file_atomically(target.string(), "x");
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.error().message, HasSubstr(target.string()));
  EXPECT_THAT(written.error().message, HasSubstr("No such file or directory"));
  EXPECT_FALSE(fs::exists(target));
}

TEST_F(AtomicFileTest, ParentThatIsAFileIsAnError) {
  put(dir_ / "file", "keep");
  const Status written = write_file_atomically((dir_ / "file" / "results.json").string(), "x");
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.error().message, HasSubstr("Not a directory"));
  EXPECT_EQ(get(dir_ / "file"), "keep");
}

TEST_F(AtomicFileTest, TargetThatIsADirectoryIsLeftAlone) {
  const fs::path target = dir_ / "results.json";
  fs::create_directory(target);
  put(target / "inside", "keep");
  const Status written = write_file_atomically(target.string(), "x");
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.error().message, HasSubstr(target.string()));
  EXPECT_EQ(get(target / "inside"), "keep");
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(AtomicFileTest, DeviceNodesAndFifosAreWrittenInPlaceNotReplaced) {
  // `-o /dev/null` as root must not turn /dev/null into a plain file. A FIFO
  // stands in for the device node: both are targets that are not regular files.
  const fs::path fifo = dir_ / "results.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = get(fifo); });
  const Status written = write_file_atomically(fifo.string(), "{}\n");
  reader.join();
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(received, "{}\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(leftovers().empty());
  ASSERT_TRUE(write_file_atomically("/dev/null", "discarded").ok());
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(AtomicFileTest, ReadOnlyDirectoryLeavesOldFile) {
  const fs::path target = dir_ / "results.json";
  put(target, "old\n");
  fs::permissions(dir_,
                  fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read | fs::perms::others_exec);
  const std::string message = testing::run_unprivileged([&] {
    const Status written = write_file_atomically(target.string(), "new\n");
    return written.ok() ? std::string("written") : written.error().message;
  });
  EXPECT_THAT(message, HasSubstr(target.string()));
  EXPECT_THAT(message, HasSubstr("Permission denied"));
  EXPECT_EQ(get(target), "old\n");
  EXPECT_TRUE(leftovers().empty());
}

// A write that fails halfway (here: the file size limit, which also stops
// root) must leave the old file and no temporary file.
TEST_F(AtomicFileTest, WriteFailureLeavesOldFile) {
  const fs::path target = dir_ / "results.json";
  put(target, "old\n");
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 16;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of death
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const Status written = write_file_atomically(target.string(), std::string(4096, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.error().message, HasSubstr(target.string()));
  EXPECT_THAT(written.error().message, HasSubstr("File too large"));
  EXPECT_EQ(get(target), "old\n");
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(AtomicFileTest, DashWritesToStdout) {
  ::testing::internal::CaptureStdout();
  const Status written = write_file_atomically("-", "{\"to\": \"stdout\"}\n");
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(out, "{\"to\": \"stdout\"}\n");
  EXPECT_FALSE(fs::exists("-"));
}

TEST_F(AtomicFileTest, EmptyPathIsAnError) { EXPECT_FALSE(write_file_atomically("", "x").ok()); }

// An output path that is a symbolic link (an operator's link into a shared
// folder): the file it names is replaced, atomically in its own folder, and
// the link stays a link (issue 29). A chain of links and a relative link,
// read against the link's folder, end at the same file; a link to a file not
// yet there creates it.
TEST_F(AtomicFileTest, ASymbolicLinkHasItsTargetWrittenAndStaysALink) {
  fs::create_directories(dir_ / "shared");
  fs::create_directories(dir_ / "links");
  put(dir_ / "shared" / "r.json", "old\n");
  fs::permissions(dir_ / "shared" / "r.json", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("../shared/r.json", dir_ / "links" / "relative");
  fs::create_symlink(dir_ / "links" / "relative", dir_ / "links" / "chain");

  for (const char* name : {"relative", "chain"}) {
    const fs::path link = dir_ / "links" / name;
    const std::string contents = std::string("new through ") + name + "\n";
    const Status written = write_file_atomically(link.string(), contents);
    ASSERT_TRUE(written.ok()) << written.error().message;
    EXPECT_TRUE(fs::is_symlink(link)) << name;
    EXPECT_EQ(get(dir_ / "shared" / "r.json"), contents);
  }
  // Replaced, yet with the mode the target had.
  EXPECT_EQ(fs::status(dir_ / "shared" / "r.json").permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  for (const char* folder : {"links", "shared"}) {
    for (const auto& entry : fs::directory_iterator(dir_ / folder)) {
      EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
    }
  }

  fs::create_symlink(dir_ / "shared" / "new.json", dir_ / "links" / "dangling");
  ASSERT_TRUE(write_file_atomically((dir_ / "links" / "dangling").string(), "created\n").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "links" / "dangling"));
  EXPECT_EQ(get(dir_ / "shared" / "new.json"), "created\n");
}

TEST_F(AtomicFileTest, OutputTargetFollowsLinksAndWritesDevicesInPlace) {
  fs::create_symlink("target.json", dir_ / "link.json");
  const auto plain = output_target((dir_ / "link.json").string());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->path, (dir_ / "target.json").string());
  EXPECT_FALSE(plain->in_place);

  fs::create_symlink("/dev/null", dir_ / "null");
  const auto device = output_target((dir_ / "null").string());
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->path, "/dev/null");
  EXPECT_TRUE(device->in_place);
  // /dev/stdout is a link into /proc, whose fd links the kernel follows.
  const auto out = output_target("/dev/stdout");
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->in_place);

  fs::create_symlink(dir_ / "b", dir_ / "a");
  fs::create_symlink(dir_ / "a", dir_ / "b");
  const auto loop = output_target((dir_ / "a").string());
  ASSERT_FALSE(loop.ok());
  EXPECT_THAT(loop.error().message, HasSubstr("too many levels of symbolic links"));
  EXPECT_FALSE(write_file_atomically((dir_ / "a").string(), "x").ok());
}

}  // namespace
}  // namespace pcieval
