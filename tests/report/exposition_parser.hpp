// A strict reader of the Prometheus text exposition format 0.0.4, for the
// tests: it parses what the textfile collector would and lists every way the
// text breaks the format or the rules node_exporter adds (no timestamps, one
// HELP and TYPE per family before its samples, families contiguous, no
// duplicate series, valid UTF-8, trailing newline).
#pragma once

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace pcieval::testing {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0;
};

struct PromExposition {
  std::vector<PromSample> samples;
  std::map<std::string, std::string> help;  // unescaped
  std::map<std::string, std::string> type;
  std::vector<std::string> problems;  // empty: the text is valid

  // Samples of `name` whose labels include every pair of `labels`.
  [[nodiscard]] std::vector<PromSample> find(const std::string& name,
                                             const std::map<std::string, std::string>& labels = {}) const {
    std::vector<PromSample> found;
    for (const PromSample& sample : samples) {
      if (sample.name != name) continue;
      bool match = true;
      for (const auto& [key, value] : labels) {
        const auto it = sample.labels.find(key);
        match = match && it != sample.labels.end() && it->second == value;
      }
      if (match) found.push_back(sample);
    }
    return found;
  }
};

namespace exposition_detail {

inline bool is_name(const std::string& name, bool colons) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (const char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (colons && c == ':'))) return false;
  }
  return true;
}

// Strict UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
inline bool is_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80         ? 1
                               : (lead >> 5) == 6  ? 2
                               : (lead >> 4) == 14 ? 3
                               : (lead >> 3) == 30 ? 4
                                                   : 0;
    if (length == 0 || i + length > text.size()) return false;
    unsigned code_point = length == 1 ? lead : lead & (0x7fU >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code_point = (code_point << 6) | (next & 0x3fU);
    }
    static constexpr unsigned kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kMinimum[length] || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) {
      return false;
    }
    i += length;
  }
  return true;
}

// Reads a quoted label value at text[pos] (the opening quote), unescaping
// \\, \" and \n; false on any other escape or a missing closing quote.
inline bool read_label_value(const std::string& text, std::size_t& pos, std::string& value) {
  if (pos >= text.size() || text[pos] != '"') return false;
  for (++pos; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '"') {
      ++pos;
      return true;
    }
    if (c != '\\') {
      value += c;
      continue;
    }
    if (++pos >= text.size()) return false;
    if (text[pos] == '\\' || text[pos] == '"') {
      value += text[pos];
    } else if (text[pos] == 'n') {
      value += '\n';
    } else {
      return false;
    }
  }
  return false;
}

}  // namespace exposition_detail

inline PromExposition parse_exposition(const std::string& text) {
  using namespace exposition_detail;
  PromExposition out;
  auto problem = [&out](std::size_t line_number, const std::string& what) {
    out.problems.push_back("line " + std::to_string(line_number) + ": " + what);
  };
  if (text.empty() || text.back() != '\n') out.problems.push_back("does not end with a newline");
  if (!is_utf8(text)) out.problems.push_back("not valid UTF-8");

  std::set<std::string> finished_families;  // families left behind: may not come back
  std::string current_family;
  std::set<std::string> series_seen;
  std::istringstream lines(text);
  std::size_t number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.empty()) continue;
    std::string family;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const bool is_help = line[2] == 'H';
      const std::size_t name_end = line.find(' ', 7);
      family = line.substr(7, name_end == std::string::npos ? std::string::npos : name_end - 7);
      const std::string rest = name_end == std::string::npos ? "" : line.substr(name_end + 1);
      if (!is_name(family, true)) problem(number, "bad metric name in '" + line + "'");
      auto& table = is_help ? out.help : out.type;
      if (table.count(family) != 0) problem(number, std::string(is_help ? "HELP" : "TYPE") + " repeated for " + family);
      if (!is_help && out.type.count(family) == 0 && !out.find(family).empty()) {
        problem(number, "TYPE of " + family + " after its samples");
      }
      if (!is_help && rest != "gauge" && rest != "counter" && rest != "untyped" && rest != "summary" &&
          rest != "histogram") {
        problem(number, "unknown type '" + rest + "'");
      }
      table[family] = rest;
    } else if (line[0] == '#') {
      continue;  // a comment
    } else {
      PromSample sample;
      std::size_t pos = line.find_first_of("{ ");
      sample.name = line.substr(0, pos);
      family = sample.name;
      if (!is_name(sample.name, true)) problem(number, "bad metric name in '" + line + "'");
      if (pos != std::string::npos && line[pos] == '{') {
        ++pos;
        while (pos < line.size() && line[pos] != '}') {
          const std::size_t eq = line.find('=', pos);
          if (eq == std::string::npos) break;
          const std::string label = line.substr(pos, eq - pos);
          pos = eq + 1;
          std::string value;
          if (!is_name(label, false) || label.rfind("__", 0) == 0) problem(number, "bad label name '" + label + "'");
          if (!read_label_value(line, pos, value)) {
            problem(number, "bad label value of " + label);
            break;
          }
          if (!sample.labels.emplace(label, value).second) problem(number, "label " + label + " repeated");
          if (pos < line.size() && line[pos] == ',') ++pos;
        }
        if (pos >= line.size() || line[pos] != '}') {
          problem(number, "unterminated label set");
          continue;
        }
        ++pos;
      }
      if (pos == std::string::npos || pos >= line.size() || line[pos] != ' ') {
        problem(number, "no value in '" + line + "'");
        continue;
      }
      const std::string value_text = line.substr(pos + 1);
      if (value_text.find(' ') != std::string::npos) problem(number, "a timestamp (the textfile collector refuses it)");
      char* end = nullptr;
      sample.value = std::strtod(value_text.c_str(), &end);
      if (value_text.empty() || *end != '\0') problem(number, "value '" + value_text + "' is not a number");
      std::string key = sample.name;
      for (const auto& [label, value] : sample.labels) key += "|" + label + "=" + value;
      if (!series_seen.insert(key).second) problem(number, "duplicate series " + key);
      out.samples.push_back(sample);
    }
    if (family != current_family) {
      if (finished_families.count(family) != 0) problem(number, "family " + family + " is not contiguous");
      if (!current_family.empty()) finished_families.insert(current_family);
      current_family = family;
    }
  }
  for (const PromSample& sample : out.samples) {
    if (out.type.count(sample.name) == 0) {
      out.problems.push_back("no TYPE for " + sample.name);
      break;
    }
  }
  return out;
}

}  // namespace pcieval::testing
