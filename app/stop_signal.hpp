// Ctrl-C and SIGTERM (Slurm's scancel, systemd's stop, a burn-in harness's
// timeout) ask `check` to stop: the probe in flight finishes, nothing further
// starts, and what was measured is judged and written, marked interrupted.
// A second signal finds the default action restored and ends the process, for
// an operator who really means it.
#pragma once

#include <atomic>
#include <csignal>
#include <string>

namespace pcieval::app {

// The signal number, 0 until one arrives. Lock-free, so the handler may
// store to it (an async-signal-safe operation).
inline std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" inline void pcieval_store_stop_signal(int signal_number) { g_stop_signal.store(signal_number); }

// Installs the handlers for its lifetime and puts the old ones back after.
class StopOnSignal {
 public:
  StopOnSignal() {
    struct sigaction action {};
    action.sa_handler = pcieval_store_stop_signal;
    sigemptyset(&action.sa_mask);
    // The first signal restores the default action: the second one kills.
    action.sa_flags = static_cast<int>(SA_RESETHAND);
    installed_ = sigaction(SIGINT, &action, &old_int_) == 0 && sigaction(SIGTERM, &action, &old_term_) == 0;
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  ~StopOnSignal() {
    if (!installed_) return;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

  [[nodiscard]] const std::atomic<int>& flag() const { return g_stop_signal; }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  bool installed_ = false;
};

// "SIGTERM", "SIGINT", or "signal N".
[[nodiscard]] inline std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

}  // namespace pcieval::app
