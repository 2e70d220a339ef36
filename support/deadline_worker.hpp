// Calls that can hang (NVML in a bad driver state, a GPU that fell off the
// bus, cudaHostRegister or a pageable copy inside a sick driver, NCCL's
// communicator setup) made on a worker thread and waited for with a deadline,
// so the caller always gets an answer in bounded time.
//
// One long-lived thread runs the queued calls in order: a thread per call
// would cost far more than the NVML calls the link sampler makes every few
// milliseconds. A caller with one call to make (kernels/blocking_call.hpp)
// uses a worker for that call only, so a stuck call never holds up another
// caller's. A call that misses its deadline cannot be cancelled (a thread
// stuck inside a C library cannot be stopped safely), so its thread is
// detached and left to finish, or not, on its own; the next call gets a fresh
// thread. After max_stuck_threads such threads the worker gives up and
// refuses every call at once, so a library that hangs on every call costs a
// bounded number of threads and deadlines, not one per call.
//
// Everything a call writes lives in the call's own closure and a shared slot,
// never in the caller's frame: a stuck call that returns after its caller gave
// up writes into memory that is still its own.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace pcieval {

enum class DeadlineOutcome {
  kReturned,  // the call returned within its deadline: the value is there
  kTimedOut,  // the call started and had not returned at the deadline
  kRefused,   // not run: too many earlier calls are stuck, or no thread could be started
};

template <class T>
struct DeadlineCall {
  DeadlineOutcome outcome = DeadlineOutcome::kRefused;
  std::optional<T> value;  // set when kReturned
};

class DeadlineWorker {
 public:
  // `stuck_calls`, when given, counts the calls that missed their deadline
  // and have not returned yet: the owner of the library reads it before
  // shutting the library down (a stuck thread still runs inside it).
  explicit DeadlineWorker(std::shared_ptr<std::atomic<int>> stuck_calls = nullptr, int max_stuck_threads = 4);
  // The worker's thread is referred to by queued calls: neither copyable nor
  // movable.
  DeadlineWorker(const DeadlineWorker&) = delete;
  DeadlineWorker& operator=(const DeadlineWorker&) = delete;
  DeadlineWorker(DeadlineWorker&&) = delete;
  DeadlineWorker& operator=(DeadlineWorker&&) = delete;
  // Stops and joins the current thread (idle: every call was waited for).
  // Threads stuck in a call stay detached.
  ~DeadlineWorker();

  // Runs fn() on the worker thread and waits until `timeout` for it.
  // REQUIRES: fn owns everything it uses (captures by value) and does not
  // throw; the result type is movable.
  template <class Fn>
  [[nodiscard]] auto call(Fn fn, std::chrono::nanoseconds timeout) -> DeadlineCall<std::invoke_result_t<Fn&>> {
    using T = std::invoke_result_t<Fn&>;
    auto slot = std::make_shared<std::optional<T>>();
    const DeadlineOutcome outcome = run([slot, fn = std::move(fn)]() mutable { slot->emplace(fn()); }, timeout);
    DeadlineCall<T> result;
    result.outcome = outcome;
    if (outcome == DeadlineOutcome::kReturned) result.value = std::move(*slot);
    return result;
  }

  // Threads left behind in calls that missed their deadline (they may have
  // returned since).
  [[nodiscard]] int abandoned_threads() const;

 private:
  struct ServiceQueue;

  // Queues `body` on the current service queue (starting one if needed) and waits.
  DeadlineOutcome run(const std::function<void()>& body, std::chrono::nanoseconds timeout);

  std::shared_ptr<std::atomic<int>> stuck_calls_;
  int max_stuck_threads_;
  mutable std::mutex mutex_;
  std::shared_ptr<ServiceQueue> service_;  // guarded by mutex_; null until the first call and after a timeout
  std::thread thread_;                     // the current service queue's thread; guarded by mutex_
  int abandoned_ = 0;                      // guarded by mutex_
};

}  // namespace pcieval
