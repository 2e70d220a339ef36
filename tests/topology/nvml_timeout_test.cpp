// NvmlReader under a deadline: one GPU's NVML call blocks (a GPU fallen off
// the bus can make nvmlDeviceGet* hang in the driver), the others answer. The
// fake models a two-GPU H100 PCIe node; the blocking call waits on a gate the
// test opens at its end, so no thread is left blocked for ever.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "topology/nvml.hpp"
#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using namespace std::chrono_literals;
using testing::bdf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct FakeGpu {
  std::string bus_id;
  bool hangs = false;  // nvmlDeviceGetCurrPcieLinkGeneration blocks until the gate opens
};

struct HangingNvml {
  std::vector<FakeGpu> gpus = {{"00000000:17:00.0", true}, {"00000000:65:00.0", false}};
  std::mutex mutex;
  std::condition_variable gate_cv;
  bool gate_open = false;            // guarded by mutex
  std::atomic<int> inside{0};        // calls blocked right now
  std::map<std::string, int> calls;  // guarded by mutex: NVML calls per bus id
  std::atomic<int> shutdowns{0};
};

HangingNvml* current = nullptr;

FakeGpu* gpu_of(NvmlDevice device) { return reinterpret_cast<FakeGpu*>(device); }
void count(NvmlDevice device) {
  const std::lock_guard lock(current->mutex);
  ++current->calls[gpu_of(device)->bus_id];
}

NvmlReturn fake_init() { return kNvmlSuccess; }
NvmlReturn fake_shutdown() {
  ++current->shutdowns;
  return kNvmlSuccess;
}
NvmlReturn fake_handle(const char* bus_id, NvmlDevice* device) {
  for (FakeGpu& gpu : current->gpus) {
    if (gpu.bus_id == bus_id) {
      *device = reinterpret_cast<NvmlDevice>(&gpu);
      count(*device);
      return kNvmlSuccess;
    }
  }
  return kNvmlErrorNotFound;
}
NvmlReturn fake_curr_gen(NvmlDevice device, unsigned int* value) {
  count(device);
  if (gpu_of(device)->hangs) {
    HangingNvml* fake = current;
    ++fake->inside;
    {
      std::unique_lock lock(fake->mutex);
      fake->gate_cv.wait(lock, [fake] { return fake->gate_open; });
    }
    --fake->inside;
  }
  *value = 5;
  return kNvmlSuccess;
}
NvmlReturn fake_uint(NvmlDevice device, unsigned int* value) {
  count(device);
  *value = 16;
  return kNvmlSuccess;
}

NvmlApi hanging_api() {
  NvmlApi api;
  api.init_v2 = fake_init;
  api.shutdown = fake_shutdown;
  api.device_get_handle_by_pci_bus_id_v2 = fake_handle;
  api.device_get_curr_pcie_link_generation = fake_curr_gen;
  api.device_get_curr_pcie_link_width = fake_uint;
  api.device_get_max_pcie_link_width = fake_uint;
  api.device_get_pcie_replay_counter = fake_uint;
  return api;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class NvmlTimeoutTest : public ::testing::Test {
 protected:
  void SetUp() override { current = &fake_; }
  void TearDown() override {
    open_gate();
    // A call left stuck runs the rest of its closure (more fake calls) once
    // the gate opens; the session's count of stuck calls drops when it is
    // done, and only then may the fake go.
    if (stuck_ != nullptr) {
      const auto give_up = std::chrono::steady_clock::now() + 5s;
      while (stuck_->load() != 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
      EXPECT_EQ(stuck_->load(), 0);
    }
    current = nullptr;
  }

  // A session over the fake, whose stuck calls TearDown waits for.
  Result<NvmlLibrary> open_session() {
    auto library = NvmlLibrary::from_api(hanging_api());
    if (library) stuck_ = library.value().stuck_calls();
    return library;
  }

  void open_gate() {
    {
      const std::lock_guard lock(fake_.mutex);
      fake_.gate_open = true;
    }
    fake_.gate_cv.notify_all();
  }
  int calls_for(const std::string& bus_id) {
    const std::lock_guard lock(fake_.mutex);
    return fake_.calls[bus_id];
  }

  HangingNvml fake_;
  std::shared_ptr<std::atomic<int>> stuck_;
};

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
  EXPECT_EQ(fake_.shutdowns.load(), 0);
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
  EXPECT_EQ(fake_.shutdowns.load(), 1);
}

}  // namespace
}  // namespace pcieval
