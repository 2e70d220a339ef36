#include "report/junit.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "report/detail/utf8.hpp"

namespace pcieval {
namespace {

bool allowed_in_xml(char32_t code_point) {
  return code_point == 0x9 || code_point == 0xa || code_point == 0xd || (code_point >= 0x20 && code_point <= 0xd7ff) ||
         (code_point >= 0xe000 && code_point <= 0xfffd) || (code_point >= 0x10000 && code_point <= 0x10ffff);
}

enum class Context { kText, kAttribute };

std::string escaped(std::string_view raw, Context context) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t pos = 0; pos < raw.size();) {
    char32_t code_point = utf8::next_code_point(raw, pos);
    if (!allowed_in_xml(code_point)) code_point = utf8::kReplacement;
    switch (code_point) {
      case U'&':
        out += "&amp;";
        break;
      case U'<':
        out += "&lt;";
        break;
      case U'>':
        out += "&gt;";
        break;
      case U'"':
        out += "&quot;";
        break;
      case U'\'':
        out += "&apos;";
        break;
      case U'\r':
        // Parsers turn a literal CR (or CR LF) into LF, in text and attributes.
        out += "&#13;";
        break;
      case U'\n':
      case U'\t':
        // Attribute value normalisation turns literal tabs and newlines into
        // spaces; references survive it. In text they are kept as they are.
        if (context == Context::kAttribute) {
          out += code_point == U'\n' ? "&#10;" : "&#9;";
        } else {
          utf8::append(out, code_point);
        }
        break;
      default:
        utf8::append(out, code_point);
    }
  }
  return out;
}

std::string attribute(std::string_view name, std::string_view value) {
  return " " + std::string(name) + "=\"" + escaped(value, Context::kAttribute) + "\"";
}

// "2024-06-10T06:13:20", or nothing when the time is not one Ant's form can
// hold.
std::optional<std::string> iso8601_utc(std::optional<double> seconds) {
  constexpr double kYear10000 = 253402300800.0;
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds >= kYear10000) return std::nullopt;
  using std::chrono::days;
  const std::chrono::sys_seconds time{std::chrono::seconds(static_cast<std::int64_t>(std::floor(*seconds)))};
  const auto day = std::chrono::floor<days>(time);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss clock{time - day};
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                static_cast<int>(clock.seconds().count()));
  return std::string(buffer);
}

std::string class_name(const std::string& hostname) {
  std::string host = hostname.empty() ? "unknown-host" : hostname;
  for (char& c : host) {
    if (c == '.') c = '_';
  }
  return "pcieval." + host;
}

std::string case_name(const Results& results, const std::string& subject) {
  if (subject == "node") return subject;
  for (const DeviceRecord& device : results.evidence.devices) {
    if (to_string(device.function.bdf) == subject) return subject + " " + std::string(to_string(device.function.kind));
  }
  return subject;
}

// What a CI page shows under the message: the next step first, then what
// automation keys on.
std::string details(const Verdict& verdict) {
  std::string text;
  if (!verdict.remediation.empty()) text += "remediation: " + verdict.remediation + "\n";
  text += "code: " + std::string(to_string(verdict.code)) + "\n";
  if (verdict.link) {
    text += "link: " + to_string(verdict.link->downstream) + " <-> " + to_string(verdict.link->upstream) + "\n";
  }
  return text;
}

std::string test_case(const std::string& classname, const std::string& name, const Verdict& verdict) {
  std::string xml =
      "    <testcase" + attribute("classname", classname) + attribute("name", name) + attribute("time", "0");
  if (verdict.status == VerdictStatus::kPass) return xml + "/>\n";
  const bool inconclusive = verdict.status == VerdictStatus::kInconclusive;
  const std::string element = inconclusive ? "error" : "failure";
  xml += ">\n      <" + element + attribute("message", verdict.reason) +
         attribute("type", std::string(to_string(verdict.status))) + ">" + escaped(details(verdict), Context::kText) +
         "</" + element + ">\n";
  return xml + "    </testcase>\n";
}

// Seconds as CI systems read them: "12.345", "0" for what was not timed.
std::string seconds_text(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds);
  return buffer;
}

std::string probe_details(const ProbeRun& probe) {
  std::string text = "probe: " + probe.key + "\n";
  if (!probe.reason.empty()) text += "reason: " + probe.reason + "\n";
  for (const std::string& warning : probe.warnings) text += "warning: " + warning + "\n";
  return text;
}

std::string probe_case(const std::string& classname, const std::string& name, const ProbeRun& probe) {
  std::string xml = "    <testcase" + attribute("classname", classname) + attribute("name", name) +
                    attribute("time", seconds_text(probe.duration_s));
  switch (probe.status) {
    case ProbeStatus::kRan:
      if (probe.warnings.empty()) return xml + "/>\n";
      // Ran, and passed, but a latch timed out or the like: shown, not failed.
      return xml + ">\n      <system-out>" + escaped(probe_details(probe), Context::kText) +
             "</system-out>\n    </testcase>\n";
    case ProbeStatus::kSkipped:
      return xml + ">\n      <skipped" + attribute("message", probe.reason) + "/>\n    </testcase>\n";
    case ProbeStatus::kFailed:
      break;
  }
  return xml + ">\n      <error" + attribute("message", probe.reason) + attribute("type", "failed") + ">" +
         escaped(probe_details(probe), Context::kText) + "</error>\n    </testcase>\n";
}

std::string property(std::string_view name, std::string_view value) {
  return "      <property" + attribute("name", name) + attribute("value", value) + "/>\n";
}

}  // namespace

// Equivalent to searching "x", "x (2)", ... from the start every time: the
// names below a base's counter were all found taken, and names are never
// given back, so they are still taken.
std::string UniqueCaseNames::take(const std::string& base) {
  int& n = next_.try_emplace(base, 1).first->second;
  for (;; ++n) {
    std::string name = n == 1 ? base : base + " (" + std::to_string(n) + ")";
    ++tries_;
    if (taken_.insert(name).second) {
      ++n;
      return name;
    }
  }
}

std::string render_junit(const Results& results, std::string_view suite_name,
                         std::optional<double> run_timestamp_seconds) {
  const std::vector<ProbeRun>& probes = results.evidence.probes;
  std::size_t failure_count = 0;
  std::size_t error_count = 0;
  for (const Verdict& verdict : results.verdicts) {
    if (is_failing(verdict.status)) ++failure_count;
    if (verdict.status == VerdictStatus::kInconclusive) ++error_count;
  }
  std::size_t probe_failures = 0;
  std::size_t probe_skips = 0;
  double probe_seconds = 0;
  for (const ProbeRun& probe : probes) {
    if (probe.status == ProbeStatus::kFailed) ++probe_failures;
    if (probe.status == ProbeStatus::kSkipped) ++probe_skips;
    if (std::isfinite(probe.duration_s) && probe.duration_s > 0) probe_seconds += probe.duration_s;
  }
  const std::string tests = std::to_string(results.verdicts.size());
  const std::string failures = std::to_string(failure_count);
  const std::string errors = std::to_string(error_count);

  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites" + attribute("name", suite_name) +
         attribute("tests", std::to_string(results.verdicts.size() + probes.size())) + attribute("failures", failures) +
         attribute("errors", std::to_string(error_count + probe_failures)) +
         attribute("time", seconds_text(probe_seconds)) + ">\n";
  const std::optional<std::string> timestamp = iso8601_utc(run_timestamp_seconds);
  const HostInfo& host = results.evidence.host;
  // The attributes both suites carry after their counts.
  std::string stamp;
  if (timestamp) stamp += attribute("timestamp", *timestamp);
  if (!host.hostname.empty()) stamp += attribute("hostname", host.hostname);

  xml += "  <testsuite" + attribute("name", suite_name) + attribute("tests", tests) + attribute("failures", failures) +
         attribute("errors", errors) + attribute("skipped", "0") + attribute("time", "0") + stamp;
  xml += ">\n    <properties>\n";
  xml += property("pcieval.version", results.tool.version);
  xml += property("kernel", host.kernel);
  xml += property("overall", to_string(results.overall));
  xml += property("summary", results.summary);
  xml += "    </properties>\n";

  const std::string classname = class_name(host.hostname);
  UniqueCaseNames names;
  for (const Verdict& verdict : results.verdicts) {
    xml += test_case(classname, names.take(case_name(results, verdict.subject)), verdict);
  }
  xml += "  </testsuite>\n";

  if (!probes.empty()) {
    xml += "  <testsuite" + attribute("name", kProbesSuiteName) + attribute("tests", std::to_string(probes.size())) +
           attribute("failures", "0") + attribute("errors", std::to_string(probe_failures)) +
           attribute("skipped", std::to_string(probe_skips)) + attribute("time", seconds_text(probe_seconds)) + stamp +
           ">\n";
    for (const ProbeRun& probe : probes) xml += probe_case(classname, names.take("probe " + probe.key), probe);
    xml += "  </testsuite>\n";
  }
  xml += "</testsuites>\n";
  return xml;
}

}  // namespace pcieval
