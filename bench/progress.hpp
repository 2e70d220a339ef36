// Progress while probes run. The engine prints nothing (probe.hpp): it tells
// an observer when each probe starts and ends, and app/ decides where that
// goes. ProgressReporter is the observer app/ passes in: one redrawn status
// line on a terminal, one plain line per probe start and end otherwise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "model/measurement.hpp"

namespace pcieval {

// One probe that is about to run, or has: its place among the probes that
// run (skipped ones are not counted) and what it measures.
struct ProbeStep {
  std::string key;        // "h2d_ce"
  std::string subject;    // "0000:17:00.0", "8 GPUs", "host memory"
  std::size_t index = 0;  // 0-based
  std::size_t count = 0;  // probes that run in all
};

class ProbeObserver {
 public:
  ProbeObserver() = default;
  ProbeObserver(const ProbeObserver&) = delete;
  ProbeObserver& operator=(const ProbeObserver&) = delete;
  virtual ~ProbeObserver() = default;
  // Called on the engine's thread, before and after each probe's run().
  virtual void probe_started(const ProbeStep& step) = 0;
  virtual void probe_finished(const ProbeStep& step, const ProbeRun& run) = 0;
};

// "0:07", "12:34", "1:02:03".
[[nodiscard]] std::string format_duration(double seconds);

// Time left: the mean duration of the probes that finished, times the probes
// not finished (the current one included), less what the current one has
// run. nullopt before any probe finished: there is nothing to go on.
[[nodiscard]] std::optional<double> estimate_left_s(const std::vector<double>& finished_durations_s,
                                                    std::size_t not_finished, double current_elapsed_s);

// The terminal status line (no "\r"): "[2/5] h2d_ce 8 GPUs  elapsed 0:12  left ~0:30".
[[nodiscard]] std::string format_status_line(const ProbeStep& step, double elapsed_s, std::optional<double> left_s);
// The plain lines, one per event, each ending in "\n":
// "pcieval: probe 2/5 h2d_ce (8 GPUs) started, elapsed 0:12, left ~0:30"
// "pcieval: probe 2/5 h2d_ce (8 GPUs) ran in 4.2 s, elapsed 0:16, left ~0:24"
[[nodiscard]] std::string format_start_line(const ProbeStep& step, double elapsed_s, std::optional<double> left_s);
[[nodiscard]] std::string format_end_line(const ProbeStep& step, const ProbeRun& run, double elapsed_s,
                                          std::optional<double> left_s);

// Writes progress to `out` (stderr, from app/). Terminal style redraws one
// line with "\r" from a ticker thread, so elapsed time moves while a long
// probe runs, and clears it on destruction so the table starts on a clean
// line. Destroy it before printing anything else to the same terminal.
class ProgressReporter final : public ProbeObserver {
 public:
  enum class Style { kTerminal, kLines };
  ProgressReporter(std::ostream& out, Style style);
  ~ProgressReporter() override;

  void probe_started(const ProbeStep& step) override;
  void probe_finished(const ProbeStep& step, const ProbeRun& run) override;

 private:
  using Clock = std::chrono::steady_clock;
  [[nodiscard]] double since(Clock::time_point from) const;
  [[nodiscard]] std::optional<double> left_locked() const;
  void redraw_locked();
  void tick();

  std::ostream& out_;
  Style style_;
  Clock::time_point started_ = Clock::now();
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<ProbeStep> current_;
  Clock::time_point current_started_;
  std::vector<double> finished_s_;
  std::size_t drawn_width_ = 0;  // of the last status line, to blank it
  std::thread ticker_;           // terminal style only
};

}  // namespace pcieval
