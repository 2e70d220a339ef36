// The deadline of CUDA calls that block the host thread by nature
// (kernels/blocking_call.hpp: cudaHostRegister, pageable copies), tested
// without a GPU: the "driver call" is a function that returns at once, or
// blocks on a gate the test opens only after the caller gave up, standing in
// for a cudaHostRegister stuck in a driver whose GPU fell off the bus.
#include "kernels/blocking_call.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace pcieval {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Blocks every caller of wait() until open(). Shared with the blocked call
// by a shared_ptr, as the call's REQUIRES asks: it outlives the test's frame.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [&] { return open_; });
  }
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

// Waits (a real wait: the abandoned thread runs on its own) until no call
// is stuck, or 5 s.
bool no_call_stuck_within_5s() {
  const auto started = std::chrono::steady_clock::now();
  while (stuck_blocking_calls() != 0) {
    if (seconds_since(started) > 5.0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(BlockingCall, ACallThatReturnsInTimeGivesItsValueWithoutWaitingForTheDeadline) {
  const auto started = std::chrono::steady_clock::now();
  DeadlineCall<int> result = call_with_deadline([] { return 42; }, 30.0);
  EXPECT_LT(seconds_since(started), 5.0);
  ASSERT_EQ(result.outcome, DeadlineOutcome::kReturned);
  ASSERT_TRUE(result.value.has_value());
  EXPECT_EQ(*result.value, 42);
  EXPECT_EQ(stuck_blocking_calls(), 0);
}

TEST(BlockingCall, TheCallRunsOnAnotherThread) {
  // cudaSetDevice is per thread: callers must set the device inside the call.
  const std::thread::id caller = std::this_thread::get_id();
  DeadlineCall<std::thread::id> result = call_with_deadline([] { return std::this_thread::get_id(); }, 30.0);
  ASSERT_EQ(result.outcome, DeadlineOutcome::kReturned);
  EXPECT_NE(*result.value, caller);
}

TEST(BlockingCall, ACallThatBlocksPastItsDeadlineIsGivenUpAtTheDeadline) {
  auto gate = std::make_shared<Gate>();
  // What the late call writes: owned by the call (and the test), never the
  // caller's frame.
  auto written = std::make_shared<int>(0);
  const auto started = std::chrono::steady_clock::now();
  DeadlineCall<std::string> result = call_with_deadline(
      [gate, written] {
        gate->wait();
        *written = 7;
        return std::string("too late");
      },
      0.1);
  const double waited_s = seconds_since(started);
  EXPECT_EQ(result.outcome, DeadlineOutcome::kTimedOut);
  EXPECT_FALSE(result.value.has_value());
  EXPECT_GE(waited_s, 0.1);
  EXPECT_LT(waited_s, 2.0);
  EXPECT_EQ(stuck_blocking_calls(), 1);

  // The driver call returns after all: it finishes on its own thread, into
  // memory that is still its own, and no longer counts as stuck.
  gate->open();
  EXPECT_TRUE(no_call_stuck_within_5s());
  EXPECT_EQ(*written, 7);
}

TEST(BlockingCall, AStuckCallDoesNotHoldUpTheNextOne) {
  auto gate = std::make_shared<Gate>();
  DeadlineCall<int> stuck = call_with_deadline(
      [gate] {
        gate->wait();
        return 1;
      },
      0.05);
  EXPECT_EQ(stuck.outcome, DeadlineOutcome::kTimedOut);
  // A thread per call: the next call (another GPU's) is not queued behind it.
  DeadlineCall<int> next = call_with_deadline([] { return 2; }, 30.0);
  ASSERT_EQ(next.outcome, DeadlineOutcome::kReturned);
  EXPECT_EQ(*next.value, 2);
  gate->open();
  EXPECT_TRUE(no_call_stuck_within_5s());
}

TEST(BlockingCall, NonsenseTimeoutsCountAsZeroAndStillEnd) {
  for (double timeout_s : {-1.0, std::numeric_limits<double>::quiet_NaN()}) {
    auto gate = std::make_shared<Gate>();
    const auto started = std::chrono::steady_clock::now();
    const DeadlineOutcome outcome = run_blocking_call([gate] { gate->wait(); }, timeout_s);
    EXPECT_EQ(outcome, DeadlineOutcome::kTimedOut) << timeout_s;
    EXPECT_LT(seconds_since(started), 2.0) << timeout_s;
    gate->open();
    EXPECT_TRUE(no_call_stuck_within_5s());
  }
}

TEST(BlockingCall, HugeTimeoutsDoNotOverflowTheClock) {
  DeadlineCall<int> result = call_with_deadline([] { return 3; }, std::numeric_limits<double>::infinity());
  // Infinity is nonsense too, so it counts as zero: the call may or may not
  // be seen done, but the wait ends at once either way.
  if (result.outcome == DeadlineOutcome::kReturned) EXPECT_EQ(*result.value, 3);
  EXPECT_TRUE(no_call_stuck_within_5s());
  DeadlineCall<int> long_wait = call_with_deadline([] { return 4; }, 1e300);
  ASSERT_EQ(long_wait.outcome, DeadlineOutcome::kReturned);
  EXPECT_EQ(*long_wait.value, 4);
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

// Issue 17, item 5: a registration slower than its deadline is the host's
// slowness, and its message says so and names the host.
TEST(HostWorkTimeout, TheMessageNamesTheHostAndClearsTheGpu) {
  const std::string message =
      host_work_timeout_message("cudaHostRegister of 1073741824 bytes", "30 s", " on 0000:17:00.0", "node7");
  EXPECT_EQ(message.find("cudaHostRegister of 1073741824 bytes did not complete within 30 s on 0000:17:00.0: "), 0U)
      << message;
  EXPECT_NE(message.find("work of the host node7"), std::string::npos) << message;
  EXPECT_NE(message.find("not of the GPU"), std::string::npos) << message;
}

TEST(HostWorkTimeout, ThisHostHasAName) { EXPECT_FALSE(this_host_name().empty()); }

}  // namespace
}  // namespace pcieval
