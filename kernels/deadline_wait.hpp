// Waiting for GPU work with a deadline. A copy engine that hangs, or a GPU
// that falls off the bus, never completes its work, and CUDA's own waits
// (cudaEventSynchronize, cudaStreamSynchronize, cudaDeviceSynchronize) then
// block for ever. Every wait on the measurement path polls instead
// (cudaEventQuery / cudaStreamQuery through a ReadyQuery) and gives up at a
// deadline, so one stuck GPU becomes an error naming it while the other GPUs
// are still measured.
//
// Plain C++ (no CUDA header): the poll loop and the deadline arithmetic are
// tested with fake queries and a fake clock.
//
// How it breaks: polling only learns that the work finished up to one poll
// interval late. Event-timed regions are unaffected (the events carry the
// GPU's own times); a host-timed wait must poll with a zero interval.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace pcieval {

// The shortest deadline of any wait on GPU work. Far above any healthy copy
// or kernel of pcieval (a 1 GiB trial at Gen1 x1 takes about 5 s), so only
// a stuck GPU reaches it. RunConfig has no field for it yet; callers pass
// this default.
inline constexpr double kDefaultOperationTimeoutS = 30.0;

// A rate below any link pcieval judges: Gen1 x1 carries about 0.2 GB/s after
// encoding and protocol overhead. A copy slower than this is stuck, not slow.
inline constexpr double kPessimisticCopyGbps = 0.1;

// Between polls: short against the milliseconds a verdict-sized copy takes,
// long enough that the waiting thread costs no measurable CPU.
inline constexpr std::chrono::microseconds kDefaultPollInterval{100};

// The deadline of a wait for `bytes` of copies queued behind a latch: the
// latch may hold them for latch_timeout_s, then they move at no less than
// kPessimisticCopyGbps; never less than floor_s. A negative or NaN input
// counts as zero.
[[nodiscard]] double copy_deadline_s(std::uint64_t bytes, double latch_timeout_s,
                                     double floor_s = kDefaultOperationTimeoutS);

// "30 s", "0.25 s": how messages state a timeout.
[[nodiscard]] std::string format_timeout_s(double seconds);

// One poll of the work: true when it is done, false while it runs, an error
// when it failed (the error ends the wait).
using ReadyQuery = std::function<Result<bool>()>;

// The time source and the sleep of the poll loop. The steady one is the real
// clock; tests pass a fake that advances when the loop sleeps.
class PollClock {
 public:
  PollClock() = default;
  PollClock(const PollClock&) = delete;
  PollClock& operator=(const PollClock&) = delete;
  virtual ~PollClock() = default;
  // Integer nanoseconds: deadline arithmetic without rounding.
  [[nodiscard]] virtual std::chrono::nanoseconds now() = 0;
  // A zero duration yields the thread instead of sleeping.
  virtual void sleep_for(std::chrono::microseconds duration) = 0;
};
[[nodiscard]] PollClock& steady_poll_clock();

struct PollPolicy {
  double timeout_s = kDefaultOperationTimeoutS;
  std::chrono::microseconds interval = kDefaultPollInterval;  // zero: yield between polls
};

enum class WaitOutcome {
  kReady,     // the query said done
  kFailed,    // the query returned an error (message: that error)
  kTimedOut,  // still not done at the deadline
};

struct WaitResult {
  WaitOutcome outcome = WaitOutcome::kReady;
  std::string message;  // empty when ready
  int polls = 0;        // queries made, for tests and diagnostics
};

// Queries at once, then every policy.interval until the query says done,
// fails, or policy.timeout_s has passed since the call; one last query at the
// deadline. A timeout's message is "<what> did not complete within <T> s".
// REQUIRES: query is callable.
[[nodiscard]] WaitResult wait_until_ready(const ReadyQuery& query, const PollPolicy& policy, std::string_view what,
                                          PollClock& clock = steady_poll_clock());

}  // namespace pcieval
