#include "bench/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace pcieval {

std::string format_duration(double seconds) {
  const long total = std::lround(std::max(0.0, seconds));
  const long hours = total / 3600;
  const long minutes = (total / 60) % 60;
  const long secs = total % 60;
  char text[32];
  if (hours > 0) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", hours, minutes, secs);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", minutes, secs);
  }
  return text;
}

std::optional<double> estimate_left_s(const std::vector<double>& finished_durations_s, std::size_t not_finished,
                                      double current_elapsed_s) {
  if (not_finished == 0) return 0.0;
  if (finished_durations_s.empty()) return std::nullopt;
  const double mean_s = std::accumulate(finished_durations_s.begin(), finished_durations_s.end(), 0.0) /
                        static_cast<double>(finished_durations_s.size());
  // A probe running longer than the mean is not "done soon": never below 0.
  return std::max(0.0, mean_s * static_cast<double>(not_finished) - current_elapsed_s);
}

namespace {

std::string place(const ProbeStep& step) { return std::to_string(step.index + 1) + "/" + std::to_string(step.count); }

std::string left_text(std::optional<double> left_s) {
  return left_s ? "~" + format_duration(*left_s) : std::string("unknown");
}

std::string timing(double elapsed_s, std::optional<double> left_s) {
  return "elapsed " + format_duration(elapsed_s) + ", left " + left_text(left_s);
}

}  // namespace

std::string format_status_line(const ProbeStep& step, double elapsed_s, std::optional<double> left_s) {
  return "[" + place(step) + "] " + step.key + " " + step.subject + "  elapsed " + format_duration(elapsed_s) +
         "  left " + left_text(left_s);
}

std::string format_start_line(const ProbeStep& step, double elapsed_s, std::optional<double> left_s) {
  return "pcieval: probe " + place(step) + " " + step.key + " (" + step.subject + ") started, " +
         timing(elapsed_s, left_s) + "\n";
}

std::string format_end_line(const ProbeStep& step, const ProbeRun& run, double elapsed_s,
                            std::optional<double> left_s) {
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", run.duration_s);
  const std::string outcome = run.status == ProbeStatus::kRan ? "ran" : std::string(to_string(run.status));
  return "pcieval: probe " + place(step) + " " + step.key + " (" + step.subject + ") " + outcome + " in " + took +
         ", " + timing(elapsed_s, left_s) + "\n";
}

ProgressReporter::ProgressReporter(std::ostream& out, Style style) : out_(out), style_(style) {
  // Redraw often enough that the seconds count visibly, rarely enough to
  // cost nothing next to a copy.
  if (style_ == Style::kTerminal) ticker_ = std::thread([this] { tick(); });
}

ProgressReporter::~ProgressReporter() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (style_ == Style::kTerminal && drawn_width_ > 0) {
    out_ << "\r" << std::string(drawn_width_, ' ') << "\r" << std::flush;
  }
}

double ProgressReporter::since(Clock::time_point from) const {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

std::optional<double> ProgressReporter::left_locked() const {
  if (!current_) return estimate_left_s(finished_s_, 0, 0);
  return estimate_left_s(finished_s_, current_->count - current_->index, since(current_started_));
}

void ProgressReporter::redraw_locked() {
  if (!current_) return;
  const std::string line = format_status_line(*current_, since(started_), left_locked());
  // Spaces over what is left of a longer previous line: no terminal escape
  // codes, so a log that captures a terminal stays readable.
  const std::size_t pad = drawn_width_ > line.size() ? drawn_width_ - line.size() : 0;
  out_ << "\r" << line << std::string(pad, ' ') << std::flush;
  drawn_width_ = line.size();
}

void ProgressReporter::tick() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (!stopping_) redraw_locked();
  }
}

void ProgressReporter::probe_started(const ProbeStep& step) {
  const std::lock_guard lock(mutex_);
  current_ = step;
  current_started_ = Clock::now();
  if (style_ == Style::kTerminal) {
    redraw_locked();
  } else {
    out_ << format_start_line(step, since(started_), left_locked()) << std::flush;
  }
}

void ProgressReporter::probe_finished(const ProbeStep& step, const ProbeRun& run) {
  const std::lock_guard lock(mutex_);
  finished_s_.push_back(run.duration_s);
  current_.reset();
  const std::size_t not_finished = step.count - step.index - 1;
  const std::optional<double> left_s = estimate_left_s(finished_s_, not_finished, 0);
  if (style_ == Style::kLines) out_ << format_end_line(step, run, since(started_), left_s) << std::flush;
}

}  // namespace pcieval
