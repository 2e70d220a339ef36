// NvmlReader under a deadline: one GPU's NVML call blocks (a GPU fallen off
// the bus can make nvmlDeviceGet* hang in the driver), the others answer. The
// fake (fake_nvml.hpp) models a two-GPU H100 PCIe node; the blocking call
// waits on a gate the fixture opens at the test's end at the latest, so no
// thread is left blocked for ever.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "topology/fake_nvml.hpp"
#include "topology/nvml.hpp"
#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using namespace std::chrono_literals;
using testing::bdf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// GPU 17:00.0 hangs in nvmlDeviceGetCurrPcieLinkGeneration; 65:00.0 answers.
class NvmlTimeoutTest : public testing::FakeNvmlTest {
 protected:
  void SetUp() override {
    FakeNvmlTest::SetUp();
    testing::FakeNvmlGpu gpu;
    gpu.values = {{"curr_gen", 5}, {"curr_width", 16}, {"max_width", 16}, {"replay", 16}};
    fake().gpus["00000000:65:00.0"] = gpu;
    gpu.hangs = true;
    fake().gpus["00000000:17:00.0"] = gpu;
  }

  Result<NvmlLibrary> open_session() { return open_session_or_error(); }
  void open_gate() { fake().open_gate(); }
  int calls_for(const std::string& bus_id) { return fake().calls_for(bus_id); }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST_F(NvmlTimeoutTest, AHungCallIsAnErrorWithinTheDeadlineAndOtherGpusAreRead) {
  auto library = open_session();
  ASSERT_TRUE(library.ok()) << library.error().message;
  {
    const NvmlReader reader(library.value(), 100ms);

    const auto started = std::chrono::steady_clock::now();
    const auto hung = reader.read(bdf("0000:17:00.0"));
    const double waited_s = seconds_since(started);
    ASSERT_FALSE(hung.ok());
    EXPECT_EQ(hung.error().message, "nvmlDeviceGetCurrPcieLinkGeneration on 0000:17:00.0 did not return within 0.1 s");
    EXPECT_GE(waited_s, 0.1);
    EXPECT_LT(waited_s, 1.0);
    EXPECT_EQ(library.value().stuck_calls()->load(), 1);

    // The other GPU is read in full, on a fresh worker thread.
    const auto healthy = reader.read(bdf("0000:65:00.0"));
    ASSERT_TRUE(healthy.ok()) << healthy.error().message;
    EXPECT_EQ(healthy->current_gen, 5);
    EXPECT_EQ(healthy->current_width, 16);
    EXPECT_EQ(healthy->replay_counter, 16U);

    EXPECT_THAT(reader.timeouts(),
                ElementsAre("nvmlDeviceGetCurrPcieLinkGeneration on 0000:17:00.0 did not return within 0.1 s"));
  }
  open_gate();
}

TEST_F(NvmlTimeoutTest, AGpuGivenUpOnIsNotQueriedAgain) {
  auto library = open_session();
  ASSERT_TRUE(library.ok());
  const NvmlReader reader(library.value(), 50ms);
  ASSERT_FALSE(reader.read(bdf("0000:17:00.0")).ok());
  const int calls_before = calls_for("00000000:17:00.0");

  const auto started = std::chrono::steady_clock::now();
  const auto again = reader.read(bdf("0000:17:00.0"));
  const auto replay = reader.read_replay_counter(bdf("0000:17:00.0"));
  EXPECT_LT(seconds_since(started), 0.04);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.error().message, HasSubstr("NVML is not queried again for 0000:17:00.0 in this run"));
  EXPECT_THAT(again.error().message, HasSubstr("did not return within 0.05 s"));
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(replay.error().message, HasSubstr("not queried again"));
  EXPECT_EQ(calls_for("00000000:17:00.0"), calls_before);
  EXPECT_TRUE(reader.read_replay_counter(bdf("0000:65:00.0")).ok());
}

TEST_F(NvmlTimeoutTest, TheSamplersReadsOfAHungGpuComeBackEmptyAndBounded) {
  auto library = open_session();
  ASSERT_TRUE(library.ok());
  const NvmlReader reader(library.value(), 50ms);
  const auto hung = reader.find_gpu(bdf("0000:17:00.0"));
  const auto healthy = reader.find_gpu(bdf("0000:65:00.0"));
  ASSERT_TRUE(hung.ok() && healthy.ok());

  const auto started = std::chrono::steady_clock::now();
  for (int round = 0; round < 20; ++round) {
    const NvmlCurrentLink stuck = reader.read_current_link(hung.value());
    EXPECT_EQ(stuck.gen, std::nullopt);
    EXPECT_EQ(stuck.width, std::nullopt);
    const NvmlCurrentLink fine = reader.read_current_link(healthy.value());
    EXPECT_EQ(fine.gen, 5);
    EXPECT_EQ(fine.width, 16);
  }
  // One deadline for the first round; every later round skips the GPU.
  EXPECT_LT(seconds_since(started), 0.5);
}

TEST_F(NvmlTimeoutTest, TheSessionIsNotShutDownUnderAStuckCall) {
  {
    auto library = open_session();
    ASSERT_TRUE(library.ok());
    const NvmlReader reader(library.value(), 20ms);
    ASSERT_FALSE(reader.read(bdf("0000:17:00.0")).ok());
  }
  // nvmlShutdown would wait on the stuck call; it is left to the process.
  EXPECT_EQ(fake().shutdown_calls.load(), 0);
  open_gate();
}

TEST_F(NvmlTimeoutTest, TheSessionShutsDownOnceTheStuckCallReturned) {
  auto library = open_session();
  ASSERT_TRUE(library.ok());
  {
    const NvmlReader reader(library.value(), 20ms);
    ASSERT_FALSE(reader.read(bdf("0000:17:00.0")).ok());
  }
  open_gate();
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (library.value().stuck_calls()->load() != 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(library.value().stuck_calls()->load(), 0);
  { const NvmlLibrary released = std::move(library).value(); }
  EXPECT_EQ(fake().shutdown_calls.load(), 1);
}

}  // namespace
}  // namespace pcieval
