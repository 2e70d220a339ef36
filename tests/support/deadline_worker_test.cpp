// DeadlineWorker: calls on a worker thread, waited for with a deadline. The
// stuck call is a function that blocks on a gate the test opens at its end,
// so no thread is left blocked when the test binary exits.
#include "support/deadline_worker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

namespace pcieval {
namespace {

using namespace std::chrono_literals;

// A gate calls wait at until the test opens it. Shared by pointer, so a call
// that outlives its test still finds it.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened_cv;
  bool opened = false;
  std::atomic<int> inside{0};

  void wait() {
    ++inside;
    std::unique_lock lock(mutex);
    opened_cv.wait(lock, [this] { return opened; });
    --inside;
  }
  void open() {
    {
      const std::lock_guard lock(mutex);
      opened = true;
    }
    opened_cv.notify_all();
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Waits (bounded) until `done` holds: threads left behind finish on their own.
template <class Pred>
bool eventually(Pred done) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(DeadlineWorker, ReturnsTheCallsValue) {
  DeadlineWorker worker;
  const auto result = worker.call([] { return 42; }, 1s);
  EXPECT_EQ(result.outcome, DeadlineOutcome::kReturned);
  EXPECT_EQ(result.value, 42);
  EXPECT_EQ(worker.abandoned_threads(), 0);
}

TEST(DeadlineWorker, RunsEveryCallOnOneLongLivedThread) {
  DeadlineWorker worker;
  const auto first = worker.call([] { return std::this_thread::get_id(); }, 1s);
  const auto second = worker.call([] { return std::this_thread::get_id(); }, 1s);
  ASSERT_EQ(first.outcome, DeadlineOutcome::kReturned);
  EXPECT_EQ(first.value, second.value);
  EXPECT_NE(*first.value, std::this_thread::get_id());
}

TEST(DeadlineWorker, AStuckCallTimesOutAndTheNextCallRunsOnAFreshThread) {
  auto gate = std::make_shared<Gate>();
  auto stuck = std::make_shared<std::atomic<int>>(0);
  {
    DeadlineWorker worker(stuck);
    const auto started = std::chrono::steady_clock::now();
    const auto blocked = worker.call(
        [gate] {
          gate->wait();
          return 1;
        },
        100ms);
    const double waited_s = seconds_since(started);
    EXPECT_EQ(blocked.outcome, DeadlineOutcome::kTimedOut);
    EXPECT_FALSE(blocked.value.has_value());
    EXPECT_GE(waited_s, 0.1);
    EXPECT_LT(waited_s, 1.0);
    EXPECT_EQ(stuck->load(), 1);
    EXPECT_EQ(worker.abandoned_threads(), 1);

    const auto next = worker.call([] { return 2; }, 1s);
    EXPECT_EQ(next.outcome, DeadlineOutcome::kReturned);
    EXPECT_EQ(next.value, 2);
  }  // the worker is gone; the stuck thread is not
  gate->open();
  EXPECT_TRUE(eventually([&] { return stuck->load() == 0 && gate->inside.load() == 0; }));
}

TEST(DeadlineWorker, ACallQueuedBehindAStuckOneMovesToAFreshThread) {
  auto gate = std::make_shared<Gate>();
  DeadlineWorker worker;
  auto stuck_call = std::async(std::launch::async, [&] {
    return worker.call(
        [gate] {
          gate->wait();
          return 0;
        },
        200ms);
  });
  ASSERT_TRUE(eventually([&] { return gate->inside.load() == 1; }));
  // Queued behind the stuck call with a later deadline: it is moved when the
  // stuck call's caller gives up, and still answers in time.
  const auto started = std::chrono::steady_clock::now();
  const auto queued = worker.call([] { return 7; }, 2s);
  EXPECT_EQ(queued.outcome, DeadlineOutcome::kReturned);
  EXPECT_EQ(queued.value, 7);
  EXPECT_LT(seconds_since(started), 1.5);
  EXPECT_EQ(stuck_call.get().outcome, DeadlineOutcome::kTimedOut);
  gate->open();
  EXPECT_TRUE(eventually([&] { return gate->inside.load() == 0; }));
}

TEST(DeadlineWorker, RefusesAtOnceAfterTooManyStuckThreads) {
  auto gate = std::make_shared<Gate>();
  DeadlineWorker worker(nullptr, 2);
  const auto blocking = [gate] {
    gate->wait();
    return 0;
  };
  EXPECT_EQ(worker.call(blocking, 20ms).outcome, DeadlineOutcome::kTimedOut);
  EXPECT_EQ(worker.call(blocking, 20ms).outcome, DeadlineOutcome::kTimedOut);
  const auto started = std::chrono::steady_clock::now();
  const auto refused = worker.call([] { return 1; }, 1s);
  EXPECT_EQ(refused.outcome, DeadlineOutcome::kRefused);
  EXPECT_LT(seconds_since(started), 0.05);
  gate->open();
  EXPECT_TRUE(eventually([&] { return gate->inside.load() == 0; }));
}

}  // namespace
}  // namespace pcieval
