// The latch on a real GPU: it holds a stream until released, and a timeout is
// reported, never swallowed. Skips, with the reason, without a usable device.
#include "kernels/latch.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "gpu/gpu_test_util.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/resources.hpp"

namespace pcieval {
namespace {

template <class T>
T take(Result<T> result) {
  if (!result) throw std::runtime_error(result.error().message);
  return std::move(result).value();
}

TEST(Latch, HoldsTheStreamUntilReleased) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(preload_kernels(0).ok());
  Latch latch = take(Latch::create(0, 5.0));
  Stream stream = take(Stream::create(0));
  EventPair events = take(EventPair::create(0));
  ASSERT_TRUE(events.record_start(stream).ok());
  latch.arm();
  ASSERT_TRUE(latch.hold(stream).ok());
  ASSERT_TRUE(events.record_end(stream).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  latch.release();
  ASSERT_TRUE(stream.synchronize().ok());
  EXPECT_FALSE(latch.timed_out());
  EXPECT_GE(take(events.elapsed_s()), 0.04) << "the stream waited for the release";
}

TEST(Latch, ATimeoutIsReported) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(preload_kernels(0).ok());
  Latch latch = take(Latch::create(0, 0.05));
  Stream stream = take(Stream::create(0));
  latch.arm();
  ASSERT_TRUE(latch.hold(stream).ok());
  // Never released in time: the spin kernel must give up and say so.
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(stream.synchronize().ok());
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_TRUE(latch.timed_out());
  EXPECT_LT(waited_s, 2.0) << "the timeout bounds the wait";
  latch.arm();
  EXPECT_FALSE(latch.timed_out()) << "arming clears the flag";
}

TEST(Latch, RejectsANonPositiveTimeout) {
  SKIP_WITHOUT_GPU();
  EXPECT_FALSE(Latch::create(0, 0).ok());
}

}  // namespace
}  // namespace pcieval
