// The poll loop and deadline arithmetic every wait on GPU work uses
// (kernels/deadline_wait.hpp), and the registry of retired devices, tested
// without a GPU: the "GPU" is a query that completes after N polls, never, or
// fails, and the clock is a fake that advances only when the loop sleeps.
#include "kernels/deadline_wait.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/retired_devices.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class FakeClock final : public PollClock {
 public:
  std::chrono::nanoseconds now() override { return now_; }
  void sleep_for(std::chrono::microseconds duration) override {
    sleeps.push_back(duration);
    // A yield takes a little time too, so a yield-only loop still ends.
    now_ += duration.count() > 0 ? std::chrono::nanoseconds(duration) : std::chrono::nanoseconds(1000);
  }
  [[nodiscard]] double now_s() const { return std::chrono::duration<double>(now_).count(); }

  std::vector<std::chrono::microseconds> sleeps;

 private:
  std::chrono::nanoseconds now_ = std::chrono::hours(1000);
};

// Completes on poll number `ready_on` (1: already done); 0 never completes.
struct CountingQuery {
  int ready_on = 0;
  int polls = 0;
  Result<bool> operator()() {
    ++polls;
    return ready_on != 0 && polls >= ready_on;
  }
};

TEST(CopyDeadline, FloorHoldsForSmallCopies) {
  EXPECT_DOUBLE_EQ(copy_deadline_s(std::uint64_t{256} << 20, 5.0), kDefaultOperationTimeoutS);
  EXPECT_DOUBLE_EQ(copy_deadline_s(0, 5.0, 12.0), 12.0);
}

TEST(CopyDeadline, LargeTrialsGetTheLatchPlusThePessimisticRate) {
  // Eight GPUs at 1 GiB each: 8 GiB at 0.1 GB/s is about 86 s, after a
  // latch that may hold the copies 5 s.
  const std::uint64_t bytes = std::uint64_t{8} << 30;
  EXPECT_NEAR(copy_deadline_s(bytes, 5.0), 5.0 + static_cast<double>(bytes) / 1e8, 1e-9);
  EXPECT_GT(copy_deadline_s(bytes, 5.0), kDefaultOperationTimeoutS);
}

TEST(CopyDeadline, NeverBelowTheLatchTimeout) { EXPECT_GE(copy_deadline_s(16, 60.0, 1.0), 60.0); }

TEST(CopyDeadline, NonsenseInputsCountAsZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(copy_deadline_s(0, nan, nan), 0.0);
  EXPECT_DOUBLE_EQ(copy_deadline_s(0, -3.0, 2.0), 2.0);
}

TEST(FormatTimeout, WholeAndFractionalSeconds) {
  EXPECT_EQ(format_timeout_s(30), "30 s");
  EXPECT_EQ(format_timeout_s(0.25), "0.25 s");
}

TEST(WaitUntilReady, DoneAtTheFirstPollNeverSleeps) {
  FakeClock clock;
  CountingQuery query{1};
  const WaitResult result = wait_until_ready(std::ref(query), {30.0}, "cudaMemcpyAsync h2d", clock);
  EXPECT_EQ(result.outcome, WaitOutcome::kReady);
  EXPECT_EQ(result.polls, 1);
  EXPECT_TRUE(clock.sleeps.empty());
  EXPECT_TRUE(result.message.empty());
}

TEST(WaitUntilReady, DoneAfterNPollsSleepsTheIntervalBetweenThem) {
  FakeClock clock;
  CountingQuery query{7};
  const WaitResult result =
      wait_until_ready(std::ref(query), {30.0, std::chrono::microseconds(150)}, "cudaMemcpyAsync h2d", clock);
  EXPECT_EQ(result.outcome, WaitOutcome::kReady);
  EXPECT_EQ(result.polls, 7);
  ASSERT_EQ(clock.sleeps.size(), 6U);
  for (auto sleep : clock.sleeps) EXPECT_EQ(sleep, std::chrono::microseconds(150));
}

TEST(WaitUntilReady, NeverDoneTimesOutAtTheDeadlineNamingTheOperation) {
  FakeClock clock;
  const double start_s = clock.now_s();
  CountingQuery query{0};
  const WaitResult result =
      wait_until_ready(std::ref(query), {30.0, std::chrono::microseconds(200)}, "cudaMemcpyAsync h2d", clock);
  EXPECT_EQ(result.outcome, WaitOutcome::kTimedOut);
  EXPECT_EQ(result.message, "cudaMemcpyAsync h2d did not complete within 30 s");
  // It gave up at the deadline: not before, and not a poll interval after.
  EXPECT_GE(clock.now_s() - start_s, 30.0);
  EXPECT_LE(clock.now_s() - start_s, 30.0 + 200e-6);
  // 30 s at 200 us, plus the first poll.
  EXPECT_NEAR(result.polls, 150001, 2);
}

TEST(WaitUntilReady, TheLastSleepIsCutShortToTheDeadline) {
  FakeClock clock;
  CountingQuery query{0};
  const WaitResult result =
      wait_until_ready(std::ref(query), {0.00025, std::chrono::microseconds(100)}, "the timed work", clock);
  EXPECT_EQ(result.outcome, WaitOutcome::kTimedOut);
  ASSERT_EQ(clock.sleeps.size(), 3U);
  EXPECT_EQ(clock.sleeps[0], std::chrono::microseconds(100));
  EXPECT_EQ(clock.sleeps[1], std::chrono::microseconds(100));
  EXPECT_EQ(clock.sleeps[2], std::chrono::microseconds(50));
  EXPECT_EQ(result.polls, 4);  // one more at the deadline
}

TEST(WaitUntilReady, AnErrorEndsTheWaitWithThatError) {
  FakeClock clock;
  int polls = 0;
  const auto failing = [&polls]() -> Result<bool> {
    if (++polls < 3) return false;
    return make_error("cudaEventQuery: cudaErrorLaunchFailure (unspecified launch failure)");
  };
  const WaitResult result = wait_until_ready(failing, {30.0}, "cudaMemcpyAsync d2h", clock);
  EXPECT_EQ(result.outcome, WaitOutcome::kFailed);
  EXPECT_EQ(result.polls, 3);
  EXPECT_THAT(result.message, StartsWith("cudaEventQuery: cudaErrorLaunchFailure"));
}

TEST(WaitUntilReady, ZeroIntervalYieldsInsteadOfSleeping) {
  FakeClock clock;
  CountingQuery query{4};
  const WaitResult result =
      wait_until_ready(std::ref(query), {30.0, std::chrono::microseconds(0)}, "cudaMemcpyAsync pageable", clock);
  EXPECT_EQ(result.outcome, WaitOutcome::kReady);
  ASSERT_EQ(clock.sleeps.size(), 3U);
  for (auto sleep : clock.sleeps) EXPECT_EQ(sleep.count(), 0);
}

TEST(WaitUntilReady, ZeroTimeoutStillPollsOnce) {
  FakeClock clock;
  CountingQuery done{1};
  EXPECT_EQ(wait_until_ready(std::ref(done), {0.0}, "x", clock).outcome, WaitOutcome::kReady);
  CountingQuery never{0};
  const WaitResult result = wait_until_ready(std::ref(never), {0.0}, "x", clock);
  EXPECT_EQ(result.outcome, WaitOutcome::kTimedOut);
  EXPECT_EQ(result.polls, 1);
}

TEST(WaitUntilReady, RealClockGivesUpWithinTheDeadlineAndAPoll) {
  CountingQuery never{0};
  const auto started = std::chrono::steady_clock::now();
  const WaitResult result = wait_until_ready(std::ref(never), {0.05, std::chrono::microseconds(100)}, "x");
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(result.outcome, WaitOutcome::kTimedOut);
  EXPECT_GE(elapsed_s, 0.05);
  // Generous: a loaded CI machine oversleeps, but not by a second.
  EXPECT_LT(elapsed_s, 1.0);
  // Sleeping, not spinning: far fewer polls than a busy loop would make.
  EXPECT_LT(never.polls, 600);
}

class RetiredDevices : public ::testing::Test {
 protected:
  void SetUp() override { forget_retired_cuda_devices_for_testing(); }
  void TearDown() override { forget_retired_cuda_devices_for_testing(); }
};

TEST_F(RetiredDevices, NoneUntilOneIsRetired) {
  EXPECT_FALSE(cuda_device_retired(0));
  EXPECT_EQ(cuda_device_retired_reason(0), std::nullopt);
}

TEST_F(RetiredDevices, ARetiredDeviceSaysWhyAndOthersStayUsable) {
  retire_cuda_device(2, "cudaMemcpyAsync h2d did not complete within 30 s on 0000:17:00.0");
  EXPECT_TRUE(cuda_device_retired(2));
  EXPECT_FALSE(cuda_device_retired(1));
  EXPECT_EQ(cuda_device_retired_reason(1), std::nullopt);
  const auto reason = cuda_device_retired_reason(2);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason,
            "CUDA device 2 is not used again in this run: cudaMemcpyAsync h2d did not complete within 30 s on "
            "0000:17:00.0");
}

TEST_F(RetiredDevices, TheFirstReasonIsKept) {
  retire_cuda_device(0, "first");
  retire_cuda_device(0, "second");
  EXPECT_THAT(cuda_device_retired_reason(0).value(), HasSubstr("first"));
}

}  // namespace
}  // namespace pcieval
