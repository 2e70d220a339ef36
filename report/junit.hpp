// JUnit XML of a results document, so CI systems (Jenkins, GitLab, GitHub
// test reporters) show a failed burn-in like a failed test.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "model/results.hpp"

namespace pcieval {

// The name of the second test suite, one test case per probe.
inline constexpr std::string_view kProbesSuiteName = "probes";

// The test case names of one document, each distinct: take("x") is "x" the
// first time, then "x (2)", "x (3)", ...: the first of those no earlier
// take() returned, so a literal name that looks numbered ("x (2)" given as a
// base) is never handed out twice. Each take() is O(1) amortised: a counter
// per base says where its search resumes, and every name tried and found
// taken stays taken. A name is found taken at most twice (as a bare base, and
// as the one numbered form "B (n)" it spells), so over a document the names
// tried are at most three times the names taken. render_junit uses one for
// both suites.
class UniqueCaseNames {
 public:
  [[nodiscard]] std::string take(const std::string& base);
  // How many names take() has tried so far, taken or not: the work done, for
  // the test that keeps it linear.
  [[nodiscard]] std::size_t tries() const { return tries_; }

 private:
  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, int> next_;  // base -> the number to try next (1: the bare base)
  std::size_t tries_ = 0;
};

// The Jenkins/Ant JUnit schema: one <testsuites> holding one <testsuite
// name=suite_name tests failures errors skipped time [timestamp] [hostname]>
// with <properties> (pcieval.version, kernel, overall, summary) and one
// <testcase classname name time> per verdict, in verdict order:
//
// - classname "pcieval.<hostname>", the hostname's dots replaced by "_" so a
//   CI that splits class names on dots does not read an FQDN as packages
//   ("unknown-host" when the evidence has none);
// - name "<bdf> <kind>" for a device ("0000:17:00.0 gpu"), "node" for a
//   node-wide verdict, the bare subject for a subject the evidence does not
//   list. Status and code stay out of the name, so a device keeps one test
//   history across runs whatever its verdict; a name met again in the same
//   run gets " (2)", " (3)", ... so every test case is distinct;
// - pass: an empty test case;
// - link_downgraded, bandwidth_low, link_errors, missing, misconfigured: <failure
//   type=status message=reason> whose text is the remediation, the reason
//   code and the link the verdict names;
// - inconclusive: <error type="inconclusive" message=reason>, same text.
//
// Why inconclusive is an <error> and not <skipped>: an inconclusive verdict
// means the check ran and could not prove the device good (a reading failed,
// an idle GPU's speed proves nothing), and pcieval fails closed: exit code 3,
// never a pass. CI systems treat <skipped> as acceptable (a suite of passes
// and skips is green in Jenkins, GitLab and GitHub), so an inconclusive node
// would look healthy to anyone reading the CI page. JUnit's <error> says
// exactly "the test could not reach a pass or fail judgement", CI systems
// show it as not passed, and it is counted apart from failures: failures map
// to pcieval's exit code 1 and errors to exit code 3, as in `pcieval check`.
// <skipped> is kept for a check that was deliberately not run, which no
// verdict means today; the verdict suite's `skipped` is therefore always 0.
//
// When the evidence lists probes, a second <testsuite name="probes"> follows
// (same timestamp and hostname, no properties) with one test case per probe,
// in run order: classname as above, name "probe <key>" ("probe h2d_ce"),
// time its duration in seconds. A probe that ran is an empty test case (with
// <system-out> listing its warnings, if any); a skipped one holds <skipped
// message=reason/>, the probe not applying here (no GPU, --full only); a
// failed one holds <error type="failed" message=reason> whose text names
// the probe, the reason and the warnings: like an inconclusive verdict, a
// probe that could not measure is evidence missing, not a fault proven (its
// probe_failed verdict in the verdict suite is an <error> too). <testsuites> then counts both suites:
// tests, failures and errors are the sums, time the probes' total. Without
// probes the document is the verdict suite alone, as before.
//
// Verdict test cases' time is "0": verdicts are not timed one by one. timestamp is
// the start of the run in UTC ("2024-06-10T06:13:20", the Ant form without
// zone) when given, finite and within years 1970..9999; hostname is left
// out when the evidence has none.
//
// Text is escaped for XML 1.0 (& < > " ' as entities; tab, newline and
// carriage return as character references inside attributes, carriage return
// in text too, so parsers keep them). Bytes that are not UTF-8 and code
// points XML 1.0 forbids (control characters other than tab, newline and
// carriage return; U+FFFE, U+FFFF) become U+FFFD, so the document is always
// well-formed. No verdicts gives tests="0" and an empty test suite.
[[nodiscard]] std::string render_junit(const Results& results, std::string_view suite_name,
                                       std::optional<double> run_timestamp_seconds = std::nullopt);

}  // namespace pcieval
