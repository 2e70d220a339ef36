// The command line's own checks: numbers with bounds an operator can read,
// times with units, and the nearest command to a mistyped one. CLI11's stock
// validators print their range as doubles ("0.000000 to 1797693134862315708145
// ..." for PositiveNumber) and accept 1e19 seconds; these say what was typed
// and what is allowed, in the units the flag is documented in.
// Header-only: main.cpp and the CLI tests include it.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pcieval::app {

// The longest a soak or a wait may be. Longer than any burn-in, and every
// duration then fits the nanosecond counters of std::chrono (int64: 292
// years) and the progress line's whole seconds, which 1e19 s overflowed.
inline constexpr double kMaxDurationS = 30.0 * 24 * 3600;

namespace cli_detail {

inline std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

// The whole of `text` as a finite double; "+" allowed, "nan"/"inf" not.
inline std::optional<double> finite_number(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// %g without an exponent for the values flags hold: "0.05", "90", "2592000".
inline std::string number_text(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}

}  // namespace cli_detail

// "90s", "30m", "2h", "1d", "1.5h", or a bare number of seconds ("90");
// nullopt for anything else (a unit other than s/m/h/d, NaN, infinity).
inline std::optional<double> parse_duration_s(std::string_view text) {
  text = cli_detail::trim(text);
  double unit_s = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        unit_s = 1;
        break;
      case 'm':
        unit_s = 60;
        break;
      case 'h':
        unit_s = 3600;
        break;
      case 'd':
        unit_s = 86400;
        break;
      default:
        unit_s = 0;
        break;
    }
    if (unit_s != 0) {
      text = cli_detail::trim(text.substr(0, text.size() - 1));
    } else {
      unit_s = 1;
    }
  }
  const auto number = cli_detail::finite_number(text);
  if (!number) return std::nullopt;
  const double seconds = *number * unit_s;
  if (!std::isfinite(seconds)) return std::nullopt;
  return seconds;
}

// A time as the bounds of a flag are written: "1 s", "60 s", "30 d", "0.01 s".
inline std::string duration_text(double seconds) {
  if (seconds >= 86400 && std::fmod(seconds, 86400) == 0) return cli_detail::number_text(seconds / 86400) + " d";
  if (seconds >= 3600 && std::fmod(seconds, 3600) == 0) return cli_detail::number_text(seconds / 3600) + " h";
  return cli_detail::number_text(seconds) + " s";
}

// A whole number in [min, max]. The message is what follows the flag's name:
// "must be between 0 and 1024, got -3".
inline CLI::Validator whole_number_between(long long min, long long max) {
  const std::string range = "between " + std::to_string(min) + " and " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& input) -> std::string {
        std::string_view text = cli_detail::trim(input);
        if (!text.empty() && text.front() == '+') text.remove_prefix(1);
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || end != text.data() + text.size() ||
            (error != std::errc() && error != std::errc::result_out_of_range)) {
          return "must be a whole number " + range + ", got '" + input + "'";
        }
        if (error == std::errc::result_out_of_range || value < min || value > max) {
          return "must be " + range + ", got " + input;
        }
        input = std::to_string(value);
        return {};
      },
      // No description: the help shows the type name alone ("N"), and the
      // option's own text states the range.
      "");
}

// A time in [min_s, max_s] in parse_duration_s's forms; rewrites the value to
// its seconds, which the option then converts to a double.
inline CLI::Validator duration_between(double min_s, double max_s) {
  const std::string range = "between " + duration_text(min_s) + " and " + duration_text(max_s);
  return CLI::Validator(
      [min_s, max_s, range](std::string& input) -> std::string {
        const auto seconds = parse_duration_s(input);
        if (!seconds) {
          return "must be a time such as 90s, 30m, 2h or 1d (a bare number is seconds) " + range + ", got '" + input +
                 "'";
        }
        if (*seconds < min_s || *seconds > max_s) return "must be " + range + ", got " + input;
        input = cli_detail::number_text(*seconds);
        return {};
      },
      "");
}

// Damerau-Levenshtein distance (optimal string alignment: an insertion, a
// deletion, a substitution or a swap of two neighbours each cost 1), so that
// "chek" and "chekc" are both one step from "check".
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The name `typed` most likely meant: the nearest by edit distance when it is
// at most 2 steps away (1 for names of 4 letters or fewer, where 2 steps
// reach unrelated words), else the one it is a prefix of ("diag"). Case is
// ignored. nullopt when nothing is close.
inline std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& names) {
  std::string lower(typed);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::optional<std::string> best;
  std::size_t best_distance = lower.size() <= 4 ? 1 : 2;
  for (const std::string& name : names) {
    const std::size_t distance = edit_distance(lower, name);
    if (distance <= best_distance && (!best || distance < best_distance)) {
      best = name;
      best_distance = distance;
    }
  }
  if (best) return best;
  if (lower.size() >= 3) {
    for (const std::string& name : names) {
      if (name.rfind(lower, 0) == 0) return name;
    }
  }
  return std::nullopt;
}

}  // namespace pcieval::app
