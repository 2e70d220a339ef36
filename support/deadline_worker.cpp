#include "support/deadline_worker.hpp"

#include <condition_variable>
#include <deque>
#include <system_error>

namespace pcieval {
namespace {

enum class Phase {
  kQueued,
  kRunning,
  kDone,
  kCancelled,  // its service queue was given up before the call started: the caller may try again
  kAbandoned,  // started, and its caller stopped waiting
};

struct CallState {
  std::mutex mutex;
  std::condition_variable changed;
  Phase phase = Phase::kQueued;  // guarded by mutex
};

struct Task {
  std::function<void()> body;
  std::shared_ptr<CallState> state;
};

}  // namespace

// One thread and its queue. Shared by the worker and the thread, so a thread
// left stuck keeps what it refers to alive after the worker is gone.
struct DeadlineWorker::ServiceQueue {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Task> queue;  // guarded by mutex
  bool stop = false;       // guarded by mutex: the worker is done with this service queue
  std::shared_ptr<std::atomic<int>> stuck_calls;

  static void serve(const std::shared_ptr<ServiceQueue>& service) noexcept {
    while (true) {
      Task task;
      {
        std::unique_lock lock(service->mutex);
        service->wake.wait(lock, [&] { return service->stop || !service->queue.empty(); });
        if (service->stop) return;
        task = std::move(service->queue.front());
        service->queue.pop_front();
      }
      {
        const std::lock_guard lock(task.state->mutex);
        if (task.state->phase == Phase::kCancelled) continue;
        task.state->phase = Phase::kRunning;
      }
      task.body();
      bool abandoned = false;
      {
        const std::lock_guard lock(task.state->mutex);
        abandoned = task.state->phase == Phase::kAbandoned;
        task.state->phase = Phase::kDone;
      }
      task.state->changed.notify_all();
      if (abandoned && service->stuck_calls) service->stuck_calls->fetch_sub(1);
    }
  }

  // Stops the service queue and cancels the calls still queued on it, waking their
  // callers so they can try again on a fresh service queue.
  void give_up() {
    std::deque<Task> orphans;
    {
      const std::lock_guard lock(mutex);
      stop = true;
      orphans.swap(queue);
    }
    wake.notify_all();
    for (Task& task : orphans) {
      {
        const std::lock_guard lock(task.state->mutex);
        task.state->phase = Phase::kCancelled;
      }
      task.state->changed.notify_all();
    }
  }
};

DeadlineWorker::DeadlineWorker(std::shared_ptr<std::atomic<int>> stuck_calls, int max_stuck_threads)
    : stuck_calls_(std::move(stuck_calls)), max_stuck_threads_(max_stuck_threads) {}

DeadlineWorker::~DeadlineWorker() {
  const std::lock_guard lock(mutex_);
  if (service_ != nullptr) service_->give_up();
  if (thread_.joinable()) thread_.join();
}

int DeadlineWorker::abandoned_threads() const {
  const std::lock_guard lock(mutex_);
  return abandoned_;
}

DeadlineOutcome DeadlineWorker::run(const std::function<void()>& body, std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto state = std::make_shared<CallState>();
  while (true) {
    std::shared_ptr<ServiceQueue> service;
    {
      const std::lock_guard lock(mutex_);
      if (abandoned_ >= max_stuck_threads_) return DeadlineOutcome::kRefused;
      if (service_ == nullptr) {
        auto fresh = std::make_shared<ServiceQueue>();
        fresh->stuck_calls = stuck_calls_;
        try {
          thread_ = std::thread([fresh] { ServiceQueue::serve(fresh); });
        } catch (const std::system_error&) {
          // std::thread reports a failed pthread_create only by throwing.
          return DeadlineOutcome::kRefused;
        }
        service_ = std::move(fresh);
      }
      service = service_;
    }
    {
      const std::lock_guard lock(state->mutex);
      state->phase = Phase::kQueued;
    }
    {
      const std::lock_guard lock(service->mutex);
      service->queue.push_back(Task{body, state});
    }
    service->wake.notify_one();

    std::unique_lock lock(state->mutex);
    state->changed.wait_until(lock, deadline,
                              [&] { return state->phase == Phase::kDone || state->phase == Phase::kCancelled; });
    if (state->phase == Phase::kDone) return DeadlineOutcome::kReturned;
    if (state->phase == Phase::kCancelled) {
      // Queued behind a call that got stuck: try again on a fresh service queue
      // while time is left.
      if (std::chrono::steady_clock::now() < deadline) continue;
      return DeadlineOutcome::kTimedOut;
    }
    if (state->phase == Phase::kQueued) {
      // Still waiting behind another caller's call at our deadline; that
      // caller gives the service queue up at its own deadline.
      state->phase = Phase::kCancelled;
      return DeadlineOutcome::kTimedOut;
    }
    // Running and late: this call is stuck. Its service queue is given up (queued
    // calls move to a fresh one) and its thread left to finish alone.
    state->phase = Phase::kAbandoned;
    // Counted before the lock is let go: the thread uncounts it, under the
    // same lock, when the call returns.
    if (stuck_calls_) stuck_calls_->fetch_add(1);
    lock.unlock();
    {
      const std::lock_guard worker_lock(mutex_);
      if (service_ == service) {
        service_.reset();
        thread_.detach();
        ++abandoned_;
      }
    }
    service->give_up();
    return DeadlineOutcome::kTimedOut;
  }
}

}  // namespace pcieval
