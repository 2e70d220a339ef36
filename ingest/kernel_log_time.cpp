// Time stamps of kernel log lines: every logger prints its own (dmesg's
// seconds since boot, dmesg -T's and syslog's wall clock, journalctl's ISO
// 8601), and a rate of errors needs them. Apart from the reader's scan
// (kernel_log.cpp) because only lines that hold an event are stamped.
#include <charconv>
#include <optional>
#include <string_view>

#include "ingest/detail/lspci_text.hpp"
#include "ingest/kernel_log.hpp"

namespace pcieval {
namespace {

// Digits at `text[at, at + count)` as a number; nullopt when any is not one.
std::optional<int> digits_at(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm): dates
// need no time zone database, and these are all the calendar it takes.
long days_from_civil(int year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const long era = (year >= 0 ? year : year - 399) / 400;
  const long year_of_era = year - era * 400;
  const long day_of_year = (153L * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const long day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

// "Jan" .. "Dec" at `at`: 1..12.
std::optional<int> month_at(std::string_view text, std::size_t at) {
  constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (at + 3 > text.size()) return std::nullopt;
  const auto found = kMonths.find(text.substr(at, 3));
  if (found == std::string_view::npos || found % 3 != 0) return std::nullopt;
  return static_cast<int>(found / 3) + 1;
}

// "HH:MM:SS" at `at`, seconds into the day, and where it ends; a fraction
// (".123456") is added.
std::optional<double> clock_at(std::string_view text, std::size_t at, std::size_t& end) {
  const auto hours = digits_at(text, at, 2);
  const auto minutes = digits_at(text, at + 3, 2);
  const auto seconds = digits_at(text, at + 6, 2);
  if (!hours || !minutes || !seconds || text[at + 2] != ':' || text[at + 5] != ':' || *hours > 23 || *minutes > 59 ||
      *seconds > 60) {
    return std::nullopt;
  }
  double value = *hours * 3600.0 + *minutes * 60.0 + *seconds;
  end = at + 8;
  if (end < text.size() && text[end] == '.') {
    double scale = 0.1;
    for (++end; end < text.size() && text[end] >= '0' && text[end] <= '9'; ++end) {
      value += (text[end] - '0') * scale;
      scale /= 10;
    }
  }
  return value;
}

// "Mon DD HH:MM:SS[.frac]" (syslog, journalctl short and short-precise; the
// day padded with a space or a zero) at `at`. No year is printed: the days
// count from the start of a fixed non-leap year.
std::optional<double> syslog_time_at(std::string_view text, std::size_t at) {
  const auto month = month_at(text, at);
  if (!month || at + 15 > text.size() || text[at + 3] != ' ') return std::nullopt;
  const char tens = text[at + 4] == ' ' ? '0' : text[at + 4];
  const auto day = digits_at(std::string_view(&tens, 1), 0, 1);
  const auto units = digits_at(text, at + 5, 1);
  if (!day || !units || text[at + 6] != ' ' || *day * 10 + *units < 1 || *day * 10 + *units > 31) return std::nullopt;
  std::size_t end = 0;
  const auto clock = clock_at(text, at + 7, end);
  if (!clock) return std::nullopt;
  constexpr int kYearWithoutLeapDay = 2001;
  return static_cast<double>(days_from_civil(kYearWithoutLeapDay, *month, *day * 10 + *units) -
                             days_from_civil(kYearWithoutLeapDay, 1, 1)) *
             86400.0 +
         *clock;
}

// "2026-12-03T10:00:00[.frac][Z|+0100|+01:00]" (journalctl -o short-iso,
// rsyslog's RFC 3339 stamps) at the start: seconds since 1970, UTC.
std::optional<double> iso_time(std::string_view text) {
  const auto year = digits_at(text, 0, 4);
  const auto month = digits_at(text, 5, 2);
  const auto day = digits_at(text, 8, 2);
  if (!year || !month || !day || text.size() < 19 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != ' ') || *month < 1 || *month > 12 || *day < 1 || *day > 31) {
    return std::nullopt;
  }
  std::size_t end = 0;
  const auto clock = clock_at(text, 11, end);
  if (!clock) return std::nullopt;
  double value = static_cast<double>(days_from_civil(*year, *month, *day)) * 86400.0 + *clock;
  if (end < text.size() && (text[end] == '+' || text[end] == '-')) {
    const double sign = text[end] == '+' ? 1.0 : -1.0;
    const auto hours = digits_at(text, end + 1, 2);
    const std::size_t minutes_at = end + 3 < text.size() && text[end + 3] == ':' ? end + 4 : end + 3;
    const auto minutes = digits_at(text, minutes_at, 2);
    if (hours && minutes) value -= sign * (*hours * 3600.0 + *minutes * 60.0);
  }
  return value;
}

// "[  123.456789]" at `at`: seconds since boot.
std::optional<double> monotonic_at(std::string_view text, std::size_t at) {
  if (at >= text.size() || text[at] != '[') return std::nullopt;
  const auto close = text.find(']', at);
  if (close == std::string_view::npos || close - at > 24) return std::nullopt;
  const std::string_view stamp = trim_blanks(text.substr(at + 1, close - at - 1));
  double value = 0;
  const auto [end, ec] = std::from_chars(stamp.data(), stamp.data() + stamp.size(), value);
  if (ec != std::errc{} || end != stamp.data() + stamp.size() || stamp.find('.') == std::string_view::npos ||
      value < 0) {
    return std::nullopt;
  }
  return value;
}

// "[Thu Dec  3 10:00:00 2026]" (dmesg -T) at the start: seconds since 1970
// in the local time it was printed in.
std::optional<double> dmesg_wall_time(std::string_view text) {
  if (text.size() < 26 || text[0] != '[' || text[4] != ' ') return std::nullopt;
  const auto month = month_at(text, 5);
  const char tens = text[9] == ' ' ? '0' : text[9];
  const auto day = digits_at(std::string_view(&tens, 1), 0, 1);
  const auto units = digits_at(text, 10, 1);
  if (!month || !day || !units || text[8] != ' ' || text[11] != ' ') return std::nullopt;
  std::size_t end = 0;
  const auto clock = clock_at(text, 12, end);
  if (!clock || end + 5 >= text.size() || text[end] != ' ') return std::nullopt;
  const auto year = digits_at(text, end + 1, 4);
  if (!year || text[end + 5] != ']') return std::nullopt;
  return static_cast<double>(days_from_civil(*year, *month, *day * 10 + *units)) * 86400.0 + *clock;
}

}  // namespace

std::optional<double> kernel_log_time(std::string_view line) {
  line = trim_blanks(line);
  if (line.empty()) return std::nullopt;
  if (line.front() == '[') {
    if (auto since_boot = monotonic_at(line, 0)) return since_boot;
    return dmesg_wall_time(line);
  }
  // A syslog or journal line: the kernel's own stamp after "kernel: " is
  // finer than the logger's, and what dmesg of the same boot would print.
  if (const auto tag = line.find(" kernel: "); tag != std::string_view::npos && tag < 80) {
    if (auto since_boot = monotonic_at(line, tag + 9)) return since_boot;
  }
  if (auto wall = syslog_time_at(line, 0)) return wall;
  return iso_time(line);
}

}  // namespace pcieval
