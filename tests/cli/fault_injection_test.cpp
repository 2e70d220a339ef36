// Faults a node throws at pcieval, injected into copies of the fixture
// machines and into its inputs and outputs: sysfs attributes that vanish,
// read as a device that is gone, hold garbage or refuse access; an hwloc XML
// that does not parse; outputs that cannot be written; results files cut
// short. Each must end with a clear message, the documented exit code and no
// corrupted output. (A soak's SIGTERM mid-round is tested with the soak.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "common/unprivileged.hpp"

namespace pcieval::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Modelled on hgx_a100_8gpu_gen4 (an HGX A100 8-GPU server): GPU 0000:03:00.0
// below downstream port 0000:02:00.0, GPU 0000:04:00.0 below 0000:02:08.0.
class FaultInjection : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::copy(fixture("hgx_a100_8gpu_gen4") / "sys", sys(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  [[nodiscard]] fs::path sys() const { return dir_ / "sys"; }
  [[nodiscard]] fs::path device(const std::string& address) const {
    return sys() / "bus" / "pci" / "devices" / address;
  }
  [[nodiscard]] std::string check_args() const { return "check --sysfs-root " + shell_quote(sys()); }
  // A results document as check writes it, to break in the tests below.
  std::string results_file() {
    const std::string out = path("results.json");
    const CliRun run = run_pcieval(check_args() + " -q -o " + shell_quote(out));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return out;
  }
};

bool parses(const std::string& text) { return !nlohmann::json::parse(text, nullptr, false).is_discarded(); }

TEST_F(FaultInjection, VanishedLinkAttributesAreInconclusiveNotPass) {
  // Both ends of the GPU's link lost current_link_speed (a hot-removed
  // device's attributes disappear between reads).
  fs::remove(device("0000:03:00.0") / "current_link_speed");
  fs::remove(device("0000:02:00.0") / "current_link_speed");
  const std::string out = path("out.json");
  const CliRun run = run_pcieval(check_args() + " -o " + shell_quote(out));
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("current_link_speed missing"));
  EXPECT_THAT(run.out, HasSubstr("0000:03:00.0: inconclusive [link_state_unknown]"));
  EXPECT_TRUE(parses(slurp(out)));
}

TEST_F(FaultInjection, ADeviceThatReadsAllOnesIsNeitherPassNorAGpu) {
  // What a GPU that fell off the bus shows: vendor and device 0xffff, LnkSta
  // all ones (widths 63, speed Unknown), config space all ones.
  const fs::path gpu = device("0000:04:00.0");
  for (const char* file : {"vendor", "device"}) ScratchDirTest::write((gpu / file).string(), "0xffff\n");
  ScratchDirTest::write((gpu / "class").string(), "0xffffff\n");
  for (const char* file : {"current_link_width", "max_link_width"})
    ScratchDirTest::write((gpu / file).string(), "63\n");
  for (const char* file : {"current_link_speed", "max_link_speed"}) {
    ScratchDirTest::write((gpu / file).string(), "Unknown\n");
  }
  ScratchDirTest::write((gpu / "config").string(), std::string(4096, '\xff'));
  const CliRun run = run_pcieval(check_args());
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("0000:04:00.0: inconclusive [link_state_unknown]"));
  EXPECT_THAT(run.out, HasSubstr("a device reading 0xffff has fallen off the bus"));
  // Counted, it is a missing GPU: a failing verdict outranks the inconclusive one.
  EXPECT_EQ(run_pcieval(check_args() + " --expect-gpus 8").exit_code, 1);
  // And retrain will not act on what is below a port it cannot identify.
  const CliRun retrain = run_pcieval("retrain 0000:04:00.0 --apply --sysfs-root " + shell_quote(sys()));
  EXPECT_EQ(retrain.exit_code, 2);
  EXPECT_THAT(retrain.err, HasSubstr("0000:04:00.0 reads vendor 0xffff: the device does not answer"));
}

TEST_F(FaultInjection, GarbageAttributesAreNamedAndDoNotCrash) {
  ScratchDirTest::write((device("0000:23:00.0") / "vendor").string(), "zz\n");
  ScratchDirTest::write((device("0000:24:00.0") / "current_link_width").string(), "sixteen\n");
  ScratchDirTest::write((device("0000:22:08.0") / "current_link_width").string(), "\n");
  ScratchDirTest::write((device("0000:83:00.0") / "config").string(), "short");
  const CliRun run = run_pcieval(check_args());
  EXPECT_THAT(run.exit_code, ::testing::AnyOf(1, 3)) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("vendor: unrecognised value 'zz'"));
  EXPECT_THAT(run.out, HasSubstr("0000:24:00.0"));
  EXPECT_THAT(run.out, Not(HasSubstr("0000:24:00.0  gpu    0000:24:00.0 < 0000:22:08.0 < 0000:21:00.0 < 0000:20:01.1  "
                                     "Gen4 x16  Gen4 x16    pass")));
  // A config file cut short: retrain says so and writes nothing.
  const CliRun retrain = run_pcieval("retrain 0000:84:00.0 --sysfs-root " + shell_quote(sys()));
  EXPECT_EQ(retrain.exit_code, 0) << retrain.err;  // 0000:82:08.0's config is intact
  ScratchDirTest::write((device("0000:82:08.0") / "config").string(), "short");
  const CliRun cut = run_pcieval("retrain 0000:84:00.0 --apply --sysfs-root " + shell_quote(sys()));
  EXPECT_EQ(cut.exit_code, 2);
  EXPECT_THAT(cut.err, HasSubstr("config space too short (5 bytes)"));
  EXPECT_EQ(slurp(device("0000:82:08.0") / "config"), "short");
}

TEST_F(FaultInjection, AttributesThatRefuseAccessAreInconclusive) {
  // Root reads through mode 000, so the check runs as an unprivileged user.
  for (const char* address : {"0000:03:00.0", "0000:02:00.0"}) {
    fs::permissions(device(address) / "current_link_speed", fs::perms::none);
  }
  fs::permissions(dir_, fs::perms::all);  // the unprivileged run writes nothing here, but must reach sys/
  const std::string result = run_unprivileged([&] {
    const CliRun run = run_pcieval(check_args());
    return std::to_string(run.exit_code) + "|" + run.out + run.err;
  });
  ASSERT_THAT(result, Not(HasSubstr("child failed"))) << result;
  EXPECT_THAT(result, HasSubstr("3|"));
  EXPECT_THAT(result, HasSubstr("permission denied reading"));
  EXPECT_THAT(result, HasSubstr("0000:03:00.0: inconclusive [link_state_unknown]"));
}

TEST_F(FaultInjection, AnHwlocXmlThatDoesNotParseIsAUsageError) {
  const std::string xml = path("topology.xml");
  ScratchDirTest::write(xml, "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\"");
  const std::string out = path("out.json");
  ScratchDirTest::write(out, "earlier");
  const CliRun run = run_pcieval(check_args() + " --topology-xml " + shell_quote(xml) + " -o " + shell_quote(out));
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("pcieval: error: "));
  EXPECT_THAT(run.err, HasSubstr(xml));
  EXPECT_EQ(slurp(out), "earlier");
}

TEST_F(FaultInjection, AFullDiskIsAUsageErrorWithTheReason) {
  const CliRun run = run_pcieval(check_args() + " -o /dev/full");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr("/dev/full: No space left on device"));
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  // The device node is written in place, never replaced by a plain file.
  struct stat node {};
  ASSERT_EQ(::stat("/dev/full", &node), 0);
  EXPECT_TRUE(S_ISCHR(node.st_mode));
}

TEST_F(FaultInjection, AReadOnlyOutputFolderKeepsTheEarlierFileIntact) {
  const fs::path folder = dir_ / "out";
  fs::create_directories(folder);
  const std::string earlier = slurp(results_file());
  ASSERT_TRUE(parses(earlier));
  const fs::path out = folder / "results.json";
  ScratchDirTest::write(out.string(), earlier);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir_, fs::perms::all);
  // Root writes through mode 555: run as an unprivileged user.
  // A different result: the GPU's link at x8, read so by both ends.
  ScratchDirTest::write((device("0000:84:00.0") / "current_link_width").string(), "8\n");
  ScratchDirTest::write((device("0000:82:08.0") / "current_link_width").string(), "8\n");
  const std::string result = run_unprivileged([&] {
    const CliRun run = run_pcieval(check_args() + " -o " + shell_quote(out));
    return std::to_string(run.exit_code) + "|" + run.err;
  });
  ASSERT_THAT(result, Not(HasSubstr("child failed"))) << result;
  // The x8 reading fails the node: still exit 1 with the file not written
  // (1 > 2), the output named on stderr.
  EXPECT_THAT(result, HasSubstr("1|pcieval: error: -o: cannot create a temporary file to write " + out.string()));
  EXPECT_EQ(slurp(out), earlier);
  fs::permissions(folder, fs::perms::all);
  for (const auto& entry : fs::directory_iterator(folder)) {
    EXPECT_EQ(entry.path().filename(), "results.json") << "left behind: " << entry.path();
  }
}

TEST_F(FaultInjection, TruncatedResultsFilesAreUsageErrorsForValidateAndCompare) {
  const std::string good = results_file();
  const std::string text = slurp(good);
  for (const std::size_t keep : {std::size_t{0}, std::size_t{1}, text.size() / 2, text.size() - 2}) {
    const std::string cut = path("cut.json");
    ScratchDirTest::write(cut, text.substr(0, keep));
    const std::string out = path("rejudged.json");
    ScratchDirTest::write(out, "earlier");
    const CliRun validate = run_pcieval("validate " + shell_quote(cut) + " -o " + shell_quote(out));
    EXPECT_EQ(validate.exit_code, 2) << keep << validate.out;
    EXPECT_EQ(line_count(validate.err), 1) << validate.err;
    EXPECT_THAT(validate.err, HasSubstr("pcieval: error: "));
    EXPECT_EQ(slurp(out), "earlier");
    for (const std::string& args : {good + " " + cut, cut + " " + good}) {
      const CliRun compare = run_pcieval("compare " + args);
      EXPECT_EQ(compare.exit_code, 2) << keep << compare.out;
      EXPECT_EQ(line_count(compare.err), 1) << compare.err;
      EXPECT_EQ(compare.out, "");
    }
  }
}

}  // namespace
}  // namespace pcieval::testing
