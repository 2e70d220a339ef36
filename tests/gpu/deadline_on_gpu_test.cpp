// Waits with a deadline on a real GPU: work that does not finish in time (a
// stream held by a latch the host does not release, standing in for a hung
// copy engine) is an error naming the operation, and the device is retired
// until the test takes it back. The same holds for the untimed steps around
// a trial: the readback of a mismatch count, staged copies, registration.
// Skips, with the reason, without a usable device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/deadline_wait.hpp"
#include "kernels/latch.hpp"
#include "kernels/nccl_rank.hpp"
#include "kernels/resources.hpp"
#include "kernels/retired_devices.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;

template <class T>
T take(Result<T> result) {
  if (!result) throw std::runtime_error(result.error().message);
  return std::move(result).value();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class DeadlineOnGpu : public ::testing::Test {
 protected:
  void TearDown() override { forget_retired_cuda_devices_for_testing(); }
};

TEST_F(DeadlineOnGpu, WorkPastTheDeadlineIsAnErrorAndRetiresTheDevice) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(preload_kernels(0).ok());
  Latch latch = take(Latch::create(0, 10.0));
  Stream stream = take(Stream::create(0));
  EventPair events = take(EventPair::create(0));
  latch.arm();
  // Start event before the hold, end event after it: the pair then spans the
  // latch's whole hold (at least the 0.2 s waited below). Recorded after the
  // hold, both would fire together when the latch opens and time nothing
  // (latch_test.cpp records in this order too).
  ASSERT_TRUE(events.record_start(stream).ok());
  ASSERT_TRUE(latch.hold(stream).ok());
  ASSERT_TRUE(events.record_end(stream).ok());

  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = events.elapsed_s(PollPolicy{0.2}, "cudaMemcpyAsync h2d");
  const double waited_s = seconds_since(started);
  ASSERT_FALSE(elapsed.ok());
  EXPECT_THAT(elapsed.error().message, HasSubstr("cudaMemcpyAsync h2d did not complete within 0.2 s on "));
  EXPECT_THAT(elapsed.error().message, HasSubstr("CUDA device 0 is not used again in this run"));
  EXPECT_GE(waited_s, 0.2);
  EXPECT_LT(waited_s, 2.0);

  EXPECT_TRUE(cuda_device_retired(0));
  const auto refused = Stream::create(0);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("not used again"));
  EXPECT_FALSE(stream.synchronize().ok());

  // The device was never wedged: take it back and let the work finish.
  latch.release();
  forget_retired_cuda_devices_for_testing();
  ASSERT_TRUE(stream.synchronize(PollPolicy{5.0}).ok());
  EXPECT_FALSE(latch.timed_out());
  // The pair spans the hold (events recorded together would read ~0). Not
  // 0.2 exactly: the stream may take up its first event a little after the
  // host's clock started (milliseconds on a loaded simulated node).
  EXPECT_GE(take(events.elapsed_s()), 0.19);
}

TEST_F(DeadlineOnGpu, WorkDoneInTimeWaitsNoLongerThanItTakes) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(preload_kernels(0).ok());
  Latch latch = take(Latch::create(0, 0.05));
  Stream stream = take(Stream::create(0));
  latch.arm();
  ASSERT_TRUE(latch.hold(stream).ok());
  const auto started = std::chrono::steady_clock::now();
  // The latch gives up after 50 ms; the 5 s deadline is never reached.
  ASSERT_TRUE(stream.synchronize(PollPolicy{5.0}).ok());
  EXPECT_LT(seconds_since(started), 1.0);
  EXPECT_FALSE(cuda_device_retired(0));
}

TEST_F(DeadlineOnGpu, CountReadbackPastTheDeadlineIsAnErrorAndRetiresTheDevice) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(preload_kernels(0).ok());
  constexpr std::size_t kCount = 1024;
  AllReduceRank rank = take(AllReduceRank::create(0, 0, kCount));
  ASSERT_TRUE(rank.prepare(kCount, PollPolicy{5.0}).ok());
  Latch latch = take(Latch::create(0, 10.0));
  latch.arm();
  ASSERT_TRUE(latch.hold(rank.stream()).ok());

  // The check kernel and the copy of its count queue behind the held latch:
  // the readback polls, and gives up at its deadline instead of blocking.
  const auto started = std::chrono::steady_clock::now();
  const auto counted = rank.count_mismatches(kCount, 1, PollPolicy{0.2});
  const double waited_s = seconds_since(started);
  ASSERT_FALSE(counted.ok());
  EXPECT_THAT(counted.error().message,
              HasSubstr("the all-reduce check of rank 0 on CUDA device 0 did not complete within 0.2 s on "));
  EXPECT_THAT(counted.error().message, HasSubstr("CUDA device 0 is not used again in this run"));
  EXPECT_GE(waited_s, 0.2);
  EXPECT_LT(waited_s, 2.0);
  EXPECT_TRUE(cuda_device_retired(0));

  // Never wedged: take the device back; the late count lands in the pinned
  // readback (kept, not freed), and a fresh check reads every element, all
  // still NaN from prepare, as a mismatch.
  latch.release();
  forget_retired_cuda_devices_for_testing();
  ASSERT_TRUE(rank.stream().synchronize(PollPolicy{5.0}).ok());
  EXPECT_EQ(take(rank.count_mismatches(kCount, 1, PollPolicy{5.0})), kCount);
}

// ctest runs each test in a process of its own, so nothing here was loaded
// before: the rank's kernels must be loaded by AllReduceRank::create (through
// preload_kernels), or the first launch of fill_rank_kernel, queued behind
// the held latch, may wait for the latch's 10 s timeout under lazy loading.
TEST_F(DeadlineOnGpu, AllReduceKernelsAreLoadedBeforeALatchHoldsTheirStream) {
  SKIP_WITHOUT_GPU();
  constexpr std::size_t kCount = 1024;
  AllReduceRank rank = take(AllReduceRank::create(0, 0, kCount));
  Latch latch = take(Latch::create(0, 10.0));
  latch.arm();
  ASSERT_TRUE(latch.hold(rank.stream()).ok());

  const auto started = std::chrono::steady_clock::now();
  const Status prepared = rank.prepare(kCount, PollPolicy{0.2});
  const double waited_s = seconds_since(started);
  ASSERT_FALSE(prepared.ok()) << "the latch holds the stream: the fill cannot have run";
  EXPECT_LT(waited_s, 2.0) << "the launch waited for the latch: the kernel was loaded lazily behind it";

  latch.release();
  forget_retired_cuda_devices_for_testing();
  ASSERT_TRUE(rank.stream().synchronize(PollPolicy{5.0}).ok());
  EXPECT_FALSE(latch.timed_out());
}

TEST_F(DeadlineOnGpu, StagedCopiesRoundTripWithinTheirDeadline) {
  SKIP_WITHOUT_GPU();
  DeviceBuffer buffer = take(DeviceBuffer::allocate(0, 4096));
  std::vector<std::byte> written(4096);
  for (std::size_t i = 0; i < written.size(); ++i) written[i] = static_cast<std::byte>(i * 7 + 3);
  ASSERT_TRUE(buffer.copy_from_host(0, written, PollPolicy{5.0}).ok());
  std::vector<std::byte> read(100);
  ASSERT_TRUE(buffer.copy_to_host(1000, read, PollPolicy{5.0}).ok());
  EXPECT_TRUE(std::equal(read.begin(), read.end(), written.begin() + 1000));
  EXPECT_FALSE(buffer.copy_to_host(4000, read).ok()) << "overruns the buffer";
  EXPECT_FALSE(cuda_device_retired(0));
}

TEST_F(DeadlineOnGpu, ARetiredDeviceRefusesStagedCopiesAndRegistration) {
  SKIP_WITHOUT_GPU();
  DeviceBuffer buffer = take(DeviceBuffer::allocate(0, 4096));
  std::vector<std::byte> host(4096);
  retire_cuda_device(0, "a test retired it");
  const Status copied = buffer.copy_to_host(0, host);
  ASSERT_FALSE(copied.ok());
  EXPECT_THAT(copied.error().message, HasSubstr("a test retired it"));
  const auto registered = HostRegistration::register_range(0, host, true);
  ASSERT_FALSE(registered.ok());
  EXPECT_THAT(registered.error().message, HasSubstr("not used again"));
  // Taken back before the buffer's destructor, so it is freed, not leaked.
  forget_retired_cuda_devices_for_testing();
}

TEST_F(DeadlineOnGpu, RegistrationAndPinnedReadbackWithinTheirDeadline) {
  SKIP_WITHOUT_GPU();
  std::vector<std::byte> host(1 << 20);
  {
    HostRegistration registration = take(HostRegistration::register_range(0, host, true, 5.0));
    EXPECT_TRUE(registration.mapped());
    EXPECT_TRUE(registration.device_pointer(0).ok());
  }
  PinnedHostBuffer readback = take(PinnedHostBuffer::allocate(0, sizeof(unsigned long long)));
  ASSERT_EQ(readback.size_bytes(), sizeof(unsigned long long));
  EXPECT_TRUE(std::all_of(readback.data(), readback.data() + readback.size_bytes(),
                          [](std::byte b) { return b == std::byte{0}; }));
  EXPECT_FALSE(PinnedHostBuffer::allocate(0, 0).ok());
}

}  // namespace
}  // namespace pcieval
