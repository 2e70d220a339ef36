#include "kernels/blocking_call.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

namespace pcieval {
namespace {

std::atomic<int>& stuck_count() {
  static std::atomic<int> count{0};
  return count;
}

// Shared by the caller and the thread, so a thread left behind keeps what it
// refers to alive after the caller is gone.
struct CallState {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;       // guarded by mutex
  bool abandoned = false;  // guarded by mutex: the caller stopped waiting
};

}  // namespace

BlockingCallOutcome run_blocking_call(std::function<void()> body, double timeout_s) {
  const double wait_s = std::isfinite(timeout_s) && timeout_s > 0 ? timeout_s : 0.0;
  // Capped at a year: a nonsense timeout must not overflow the clock.
  const auto timeout =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(std::min(wait_s, 3.2e7)));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto state = std::make_shared<CallState>();
  std::thread thread;
  try {
    thread = std::thread([state, body = std::move(body)] {
      body();
      bool late = false;
      {
        const std::lock_guard lock(state->mutex);
        state->done = true;
        late = state->abandoned;
      }
      state->finished.notify_all();
      if (late) stuck_count().fetch_sub(1);
    });
  } catch (const std::system_error&) {
    // std::thread reports a failed pthread_create only by throwing.
    return BlockingCallOutcome::kNotStarted;
  }
  bool done = false;
  {
    std::unique_lock lock(state->mutex);
    done = state->finished.wait_until(lock, deadline, [&] { return state->done; });
    if (!done) {
      state->abandoned = true;
      stuck_count().fetch_add(1);
    }
  }
  if (done) {
    thread.join();
    return BlockingCallOutcome::kReturned;
  }
  thread.detach();
  return BlockingCallOutcome::kTimedOut;
}

int stuck_blocking_calls() { return stuck_count().load(); }

std::string host_work_timeout_message(const std::string& what, const std::string& within, const std::string& where,
                                      const std::string& host_name) {
  return what + " did not complete within " + within + where + ": pinning host memory is work of the host " +
         host_name +
         " (its kernel pins and maps every page, through the IOMMU where there is one; slow behind a guest's "
         "vIOMMU), not of the GPU, so the GPU cannot be judged";
}

std::string this_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "this host";
  return name;
}

}  // namespace pcieval
