// Ctrl-C, SIGTERM (Slurm's scancel, systemd's stop, a burn-in harness's
// timeout), SIGHUP (the ssh session or terminal of a burn-in went away),
// SIGUSR1 and SIGALRM (what a harness or Slurm's --signal sends to say time
// is up) ask `check` to stop: the probe in flight finishes, nothing further
// starts, and what was measured is judged and written, marked interrupted.
// Their default action would end the process with nothing written. A SIGHUP
// that was ignored when pcieval started (nohup) stays ignored, as nohup asks.
// More signals within the grace (check --stop-grace, 10 s by default) of the
// first change nothing: GNU `timeout` and Slurm signal the process and then
// its whole group, and two quick Ctrl-C are one request. A signal after the
// grace ends the process (the default action), for an operator who really
// means it; SIGKILL always does.
#pragma once

#include <time.h>

#include <atomic>
#include <csignal>
#include <cstddef>
#include <iterator>
#include <string>

namespace pcieval::app {

inline constexpr long long kDefaultStopGraceNs = 10'000'000'000;

// The signal number, 0 until one arrives, and when the first arrived.
// Lock-free, so the handler may store to them (async-signal-safe).
inline std::atomic<int> g_stop_signal{0};
inline std::atomic<long long> g_stop_signal_at_ns{0};
inline std::atomic<long long> g_stop_grace_ns{kDefaultStopGraceNs};
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<long long>::is_always_lock_free);

extern "C" inline void pcieval_store_stop_signal(int signal_number) {
  // clock_gettime, signal and raise are async-signal-safe (signal-safety(7)).
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const long long now_ns = static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
  int none = 0;
  if (g_stop_signal.compare_exchange_strong(none, signal_number)) {
    g_stop_signal_at_ns.store(now_ns);
    return;
  }
  if (now_ns - g_stop_signal_at_ns.load() < g_stop_grace_ns.load()) return;
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

// The signals that stop a run (above); signal_name names each.
inline constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM};

// Installs the handlers for its lifetime and puts the old ones back after.
class StopOnSignal {
 public:
  explicit StopOnSignal(long long grace_ns = kDefaultStopGraceNs) {
    g_stop_grace_ns.store(grace_ns);
    struct sigaction action {};
    action.sa_handler = pcieval_store_stop_signal;
    // Each handler runs with every stop signal blocked, so the first one's
    // time is stored before a second is looked at.
    sigemptyset(&action.sa_mask);
    for (const int signal_number : kStopSignals) sigaddset(&action.sa_mask, signal_number);
    action.sa_flags = 0;
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
      const int signal_number = kStopSignals[i];
      struct sigaction current {};
      if (sigaction(signal_number, nullptr, &current) != 0) continue;
      if (signal_number == SIGHUP && current.sa_handler == SIG_IGN) continue;
      installed_[i] = sigaction(signal_number, &action, &old_[i]) == 0;
    }
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  ~StopOnSignal() {
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
      if (installed_[i]) sigaction(kStopSignals[i], &old_[i], nullptr);
    }
  }

  [[nodiscard]] const std::atomic<int>& flag() const { return g_stop_signal; }

 private:
  struct sigaction old_[std::size(kStopSignals)]{};
  bool installed_[std::size(kStopSignals)] = {};
};

// "SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1", "SIGALRM", or "signal N".
[[nodiscard]] inline std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGALRM:
      return "SIGALRM";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

}  // namespace pcieval::app
