#include "topology/link_sampler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "topology/fake_nvml.hpp"
#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using testing::bdf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::write_file;

constexpr const char* kRootPort = "0000:00:01.0";
constexpr const char* kGpu = "0000:01:00.0";

// A root port with one GPU below it; the test rewrites their link files.
class LinkSamplerTest : public ::testing::Test {
 protected:
  LinkSamplerTest() : tree(temp_dir.path()) {
    port_dir = tree.add("pci0000:00", kRootPort, "0x8086", "0x060400");
    gpu_dir = tree.add(std::string("pci0000:00/") + kRootPort, kGpu, "0x10de", "0x030200");
    set_link(port_dir, "32.0 GT/s PCIe", "16");
    set_link(gpu_dir, "2.5 GT/s PCIe", "16");  // an idle GPU drops to Gen1
  }

  static void set_link(const std::filesystem::path& dir, const std::string& speed, const std::string& width) {
    write_file(dir / "current_link_speed", speed + "\n");
    write_file(dir / "current_link_width", width + "\n");
  }

  LinkSamplerOptions options() {
    LinkSamplerOptions opts;
    opts.sysfs_root = tree.root();
    opts.ports = {bdf(kGpu), bdf(kRootPort)};
    opts.under_load = [this](const PciAddress& /*port*/) { return loaded.load(); };
    return opts;
  }

  testing::TempDir temp_dir;
  testing::SysfsTree tree;
  std::filesystem::path port_dir;
  std::filesystem::path gpu_dir;
  std::atomic<bool> loaded{false};
};

TEST_F(LinkSamplerTest, SampleOnceSeesIdleThenLoadedLink) {
  const LinkSampler sampler(options());

  const auto idle = sampler.sample_once();
  ASSERT_EQ(idle.size(), 2U);
  EXPECT_EQ(idle[0].port, bdf(kGpu));
  EXPECT_EQ(idle[0].source, SampleSource::kSysfs);
  EXPECT_EQ(idle[0].speed, PcieGen::kGen1);
  EXPECT_EQ(idle[0].width, 16);
  EXPECT_FALSE(idle[0].under_load);
  EXPECT_EQ(idle[1].port, bdf(kRootPort));
  EXPECT_EQ(idle[1].speed, PcieGen::kGen5);

  // The copy starts: the engine raises its flag and the GPU retrains.
  loaded = true;
  set_link(gpu_dir, "32.0 GT/s PCIe", "16");
  const auto busy = sampler.sample_once();
  ASSERT_EQ(busy.size(), 2U);
  EXPECT_EQ(busy[0].speed, PcieGen::kGen5);
  EXPECT_TRUE(busy[0].under_load);
  EXPECT_TRUE(busy[1].under_load);
  EXPECT_GE(busy[0].t_s, idle[1].t_s);
  EXPECT_GE(busy[1].t_s, busy[0].t_s);
}

// Issue 27: a port is read under load only while a GPU below it copies; a
// GPU idling while another is measured reads as idle, not as loaded.
TEST_F(LinkSamplerTest, UnderLoadIsAskedPerPortRead) {
  LinkSamplerOptions opts = options();
  std::vector<PciAddress> asked;
  const PciAddress busy_port = opts.ports.front();
  opts.under_load = [&asked, busy_port](const PciAddress& port) {
    asked.push_back(port);
    return port == busy_port;
  };
  LinkSampler sampler(opts);
  const auto samples = sampler.sample_once();
  ASSERT_FALSE(samples.empty());
  for (const LinkSample& sample : samples)
    EXPECT_EQ(sample.under_load, sample.port == busy_port) << to_string(sample.port);
  EXPECT_EQ(asked.size(), samples.size()) << "every reading asks for its own port";
}

TEST_F(LinkSamplerTest, ReadsOldKernelSpeedStrings) {
  set_link(gpu_dir, "8 GT/s", "8");
  const LinkSampler sampler(options());
  const auto samples = sampler.sample_once();
  EXPECT_EQ(samples[0].speed, PcieGen::kGen3);
  EXPECT_EQ(samples[0].width, 8);
}

TEST_F(LinkSamplerTest, WithoutALoadSignalNothingIsUnderLoad) {
  LinkSamplerOptions opts = options();
  opts.under_load = nullptr;
  const LinkSampler sampler(opts);
  for (const LinkSample& sample : sampler.sample_once()) EXPECT_FALSE(sample.under_load);
}

TEST_F(LinkSamplerTest, FailedReadsGiveUnknownSamplesNotGaps) {
  LinkSamplerOptions opts = options();
  opts.ports.push_back(bdf("0000:02:00.0"));  // not in the tree at all
  const LinkSampler sampler(opts);

  std::filesystem::remove(gpu_dir / "current_link_speed");
  write_file(port_dir / "current_link_speed", "Unknown\n");  // the kernel could not decode LnkSta
  write_file(port_dir / "current_link_width", "63\n");       // all ones: the port stopped answering
  auto samples = sampler.sample_once();
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[0].speed, std::nullopt);
  EXPECT_EQ(samples[0].width, 16);  // the other file still reads
  EXPECT_EQ(samples[1].speed, std::nullopt);
  EXPECT_EQ(samples[1].width, std::nullopt);
  EXPECT_EQ(samples[2].port, bdf("0000:02:00.0"));
  EXPECT_EQ(samples[2].speed, std::nullopt);
  EXPECT_EQ(samples[2].width, std::nullopt);

  // An attribute that cannot be read (here a directory in its place: EISDIR).
  std::filesystem::remove(gpu_dir / "current_link_width");
  std::filesystem::create_directory(gpu_dir / "current_link_width");
  samples = sampler.sample_once();
  EXPECT_EQ(samples[0].width, std::nullopt);
}

TEST_F(LinkSamplerTest, StartStopGivesOrderedSamples) {
  LinkSamplerOptions opts = options();
  opts.period = std::chrono::milliseconds(5);
  LinkSampler sampler(opts);
  ASSERT_TRUE(sampler.start().ok());
  EXPECT_TRUE(sampler.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  loaded = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto samples = sampler.stop();
  EXPECT_FALSE(sampler.running());

  ASSERT_GE(samples.size(), 4U);
  EXPECT_EQ(samples.size() % 2, 0U);  // whole rounds of two ports
  EXPECT_FALSE(samples.front().under_load);
  EXPECT_TRUE(samples.back().under_load);
  EXPECT_GE(samples.front().t_s, 0.0);
  EXPECT_LT(samples.front().t_s, 1.0);
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_GE(samples[i].t_s, samples[i - 1].t_s) << i;
  for (std::size_t i = 0; i < samples.size(); i += 2) {
    EXPECT_EQ(samples[i].port, bdf(kGpu));
    EXPECT_EQ(samples[i + 1].port, bdf(kRootPort));
  }
}

TEST_F(LinkSamplerTest, StopIsSafeTwiceAndBeforeStart) {
  LinkSamplerOptions opts = options();
  opts.period = std::chrono::milliseconds(1);
  LinkSampler sampler(opts);
  EXPECT_TRUE(sampler.stop().empty());
  ASSERT_TRUE(sampler.start().ok());
  EXPECT_FALSE(sampler.start().ok());    // already running
  EXPECT_FALSE(sampler.stop().empty());  // the first round runs at once
  EXPECT_TRUE(sampler.stop().empty());
}

TEST_F(LinkSamplerTest, RestartCollectsAFreshRun) {
  LinkSamplerOptions opts = options();
  opts.period = std::chrono::milliseconds(1);
  LinkSampler sampler(opts);
  ASSERT_TRUE(sampler.start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto first = sampler.stop();
  ASSERT_TRUE(sampler.start().ok());
  const auto second = sampler.stop();
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  EXPECT_LT(second.front().t_s, first.back().t_s + 1.0);
  EXPECT_LT(second.front().t_s, 0.5);  // counted from the second start
}

TEST_F(LinkSamplerTest, DestructorStopsARunningSampler) {
  // Every reading asks under_load: the count of calls is the thread's pulse.
  const auto readings = std::make_shared<std::atomic<int>>(0);
  LinkSamplerOptions opts = options();
  opts.period = std::chrono::milliseconds(1);
  opts.under_load = [readings](const PciAddress& /*port*/) {
    ++*readings;
    return false;
  };
  {
    LinkSampler sampler(opts);
    ASSERT_TRUE(sampler.start().ok());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (readings->load() < 6 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_GE(readings->load(), 6) << "the sampler never ran three rounds";
    EXPECT_TRUE(sampler.running());
  }  // a thread left joinable would abort the binary; one left detached would keep reading
  const int at_destruction = readings->load();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // 30 periods
  EXPECT_EQ(readings->load(), at_destruction) << "the sampler still reads after its destructor";
}

TEST_F(LinkSamplerTest, ALongPeriodStillStopsAtOnce) {
  LinkSamplerOptions opts = options();
  opts.period = std::chrono::milliseconds(60000);
  LinkSampler sampler(opts);
  ASSERT_TRUE(sampler.start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto before = std::chrono::steady_clock::now();
  const auto samples = sampler.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  EXPECT_EQ(samples.size(), 2U);  // one round
}

// --- NVML through a fake: the GPU's own view of its current link ---

TEST_F(LinkSamplerTest, SamplesGpusThroughNvml) {
  testing::ScopedFakeNvml nvml;
  testing::FakeNvmlGpu& gpu = nvml.fake().gpus["00000000:01:00.0"];
  gpu.values = {{"curr_gen", 1}, {"curr_width", 16}};
  auto library = NvmlLibrary::from_api(testing::fake_nvml_table());
  ASSERT_TRUE(library.ok());
  const NvmlReader reader(library.value());

  LinkSamplerOptions opts = options();
  opts.ports = {bdf(kRootPort)};
  opts.nvml = &reader;
  opts.nvml_gpus = {bdf(kGpu), bdf("0000:81:00.0")};  // the second is unknown to NVML
  const LinkSampler sampler(opts);

  auto samples = sampler.sample_once();
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[0].source, SampleSource::kSysfs);
  EXPECT_EQ(samples[1].source, SampleSource::kNvml);
  EXPECT_EQ(samples[1].port, bdf(kGpu));
  EXPECT_EQ(samples[1].speed, PcieGen::kGen1);
  EXPECT_EQ(samples[1].width, 16);
  EXPECT_EQ(samples[2].source, SampleSource::kNvml);
  EXPECT_EQ(samples[2].port, bdf("0000:81:00.0"));
  EXPECT_EQ(samples[2].speed, std::nullopt);
  EXPECT_EQ(samples[2].width, std::nullopt);

  loaded = true;
  gpu.values["curr_gen"] = 5;
  samples = sampler.sample_once();
  EXPECT_EQ(samples[1].speed, PcieGen::kGen5);
  EXPECT_TRUE(samples[1].under_load);

  // A generation NVML should never report is unknown, not a guess.
  gpu.values["curr_gen"] = 0;
  samples = sampler.sample_once();
  EXPECT_EQ(samples[1].speed, std::nullopt);
}

TEST_F(LinkSamplerTest, WithoutAReaderNvmlGpusAreNotSampled) {
  LinkSamplerOptions opts = options();
  opts.nvml_gpus = {bdf(kGpu)};
  const LinkSampler sampler(opts);
  EXPECT_EQ(sampler.sample_once().size(), 2U);
}

// --- which ports to sample ---

DeviceRecord record(const std::string& address, DeviceKind kind,
                    const std::vector<std::pair<std::string, std::string>>& links) {
  DeviceRecord device;
  device.function.bdf = bdf(address);
  device.function.kind = kind;
  for (const auto& [downstream, upstream] : links) {
    Link link;
    link.downstream = bdf(downstream);
    link.upstream = bdf(upstream);
    link.position = device.path.empty() ? LinkPosition::kDeviceLink : LinkPosition::kUplink;
    device.path.push_back(link);
  }
  return device;
}

TEST(PortsToSample, BothEndsOfEveryGpuLinkOnce) {
  // Two GPUs behind one switch (upstream port 0000:02:00.0 under root port
  // 0000:00:01.0), a third on its own root port, and a NIC that is not sampled.
  Evidence evidence;
  evidence.devices.push_back(
      record("0000:04:00.0", DeviceKind::kGpu, {{"0000:04:00.0", "0000:03:00.0"}, {"0000:02:00.0", "0000:00:01.0"}}));
  evidence.devices.push_back(
      record("0000:05:00.0", DeviceKind::kGpu, {{"0000:05:00.0", "0000:03:01.0"}, {"0000:02:00.0", "0000:00:01.0"}}));
  evidence.devices.push_back(record("0000:41:00.0", DeviceKind::kNic, {{"0000:41:00.0", "0000:40:01.0"}}));
  evidence.devices.push_back(record("0000:81:00.0", DeviceKind::kGpu, {{"0000:81:00.0", "0000:80:01.0"}}));

  EXPECT_THAT(ports_to_sample(evidence),
              ElementsAre(bdf("0000:04:00.0"), bdf("0000:03:00.0"), bdf("0000:02:00.0"), bdf("0000:00:01.0"),
                          bdf("0000:05:00.0"), bdf("0000:03:01.0"), bdf("0000:81:00.0"), bdf("0000:80:01.0")));
  EXPECT_THAT(gpus_to_sample(evidence), ElementsAre(bdf("0000:04:00.0"), bdf("0000:05:00.0"), bdf("0000:81:00.0")));
  EXPECT_TRUE(ports_to_sample(Evidence{}).empty());
}

// --- the small-file reader ---

TEST(ReadSysfsAttribute, ReadsIntoTheCallersBufferAndReportsErrno) {
  const testing::TempDir dir;
  write_file(dir.path() / "speed", "16.0 GT/s PCIe\n");
  std::array<char, 64> buffer{};
  const auto read = read_sysfs_attribute((dir.path() / "speed").c_str(), buffer);
  EXPECT_EQ(read.error, 0);
  EXPECT_EQ(read.text, "16.0 GT/s PCIe\n");

  EXPECT_EQ(read_sysfs_attribute((dir.path() / "absent").c_str(), buffer).error, ENOENT);

  write_file(dir.path() / "long", std::string(100, 'x'));
  EXPECT_EQ(read_sysfs_attribute((dir.path() / "long").c_str(), buffer).error, EFBIG);

  EXPECT_EQ(describe_read_error(ENOENT, "/sys/x"), "/sys/x missing");
  EXPECT_EQ(describe_read_error(EACCES, "/sys/x"), "permission denied reading /sys/x");
  EXPECT_THAT(describe_read_error(EIO, "/sys/x"), HasSubstr("reading /sys/x"));
}

}  // namespace
}  // namespace pcieval
