#include "kernels/deadline_wait.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

namespace pcieval {
namespace {

double non_negative(double value) { return std::isfinite(value) && value > 0 ? value : 0.0; }

class SteadyPollClock final : public PollClock {
 public:
  std::chrono::nanoseconds now() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch());
  }
  void sleep_for(std::chrono::microseconds duration) override {
    if (duration.count() <= 0) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(duration);
    }
  }
};

}  // namespace

double copy_deadline_s(std::uint64_t bytes, double latch_timeout_s, double floor_s) {
  const double moving_s = static_cast<double>(bytes) / (kPessimisticCopyGbps * 1e9);
  return std::max(non_negative(floor_s), non_negative(latch_timeout_s) + moving_s);
}

std::string format_timeout_s(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

PollClock& steady_poll_clock() {
  static SteadyPollClock clock;
  return clock;
}

WaitResult wait_until_ready(const ReadyQuery& query, const PollPolicy& policy, std::string_view what,
                            PollClock& clock) {
  WaitResult result;
  const double timeout_s = non_negative(policy.timeout_s);
  // Capped at a year: a nonsense timeout must not overflow the clock.
  const auto timeout =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(std::min(timeout_s, 3.2e7)));
  const std::chrono::nanoseconds deadline = clock.now() + timeout;
  while (true) {
    ++result.polls;
    Result<bool> ready = query();
    if (!ready) {
      result.outcome = WaitOutcome::kFailed;
      result.message = ready.error().message;
      return result;
    }
    if (ready.value()) return result;
    const std::chrono::nanoseconds now = clock.now();
    if (now >= deadline) break;
    // Never sleep past the deadline: the last poll comes at it, not after.
    const auto left = std::chrono::ceil<std::chrono::microseconds>(deadline - now);
    clock.sleep_for(policy.interval.count() <= 0 ? std::chrono::microseconds(0) : std::min(policy.interval, left));
  }
  result.outcome = WaitOutcome::kTimedOut;
  result.message = std::string(what) + " did not complete within " + format_timeout_s(timeout_s);
  return result;
}

}  // namespace pcieval
