// Waits with a deadline on a real GPU: work that does not finish in time (a
// stream held by a latch the host does not release, standing in for a hung
// copy engine) is an error naming the operation, and the device is retired
// until the test takes it back. Skips, with the reason, without a usable
// device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <utility>

#include "gpu/gpu_test_util.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/deadline_wait.hpp"
#include "kernels/latch.hpp"
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
  ASSERT_TRUE(latch.hold(stream).ok());
  ASSERT_TRUE(events.record_start(stream).ok());
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
  EXPECT_GE(take(events.elapsed_s()), 0.2);
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

}  // namespace
}  // namespace pcieval
