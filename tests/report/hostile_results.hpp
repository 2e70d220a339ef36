// Results whose text holds everything a renderer must escape or repair:
// quotes, backslashes, markup characters, newlines, control characters,
// bytes that are not UTF-8, U+FFFE, and a verdict subject that is no device.
// A results document read back from a hand-edited file can hold all of it.
#pragma once

#include <string>

#include "report/sample_results.hpp"

namespace pcieval::testing {

// "back\slash", "quote", a newline, ESC, an invalid byte, then "é".
inline const std::string kHostileSubject = "dev \"q\" back\\slash\nline \x1b \xff caf\xc3\xa9";
// Markup, both quotes, CR LF, a tab, C0 and DEL controls, an overlong '/',
// U+FFFE, a CDATA end, and a 4-byte emoji that must survive.
inline const std::string kHostileReason =
    "<b>&amp; \"double\" 'single'\r\nnext\tline \x01\x08\x7f \xc0\xaf \xef\xbf\xbe ]]> \xf0\x9f\x98\x80";

inline Results hostile_results() {
  Results results = hgx_spr_results();
  results.evidence.host.hostname = "gpu01.rack\"7\".example&co";
  results.evidence.host.kernel = "6.1.0 <custom>\x02";
  results.summary = "pcieval fail: " + kHostileReason;
  results.verdicts.front().reason = kHostileReason;
  results.verdicts.front().remediation = "reseat & retrain\r\nthen <check>\x0c";
  results.verdicts.push_back({kHostileSubject, VerdictStatus::kInconclusive, ReasonCode::kLinkStateUnknown,
                              std::nullopt, kHostileReason, kHostileReason});
  // The same device judged twice: the series and test case names must stay
  // distinct.
  results.verdicts.push_back({"0000:18:00.0", VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, std::nullopt,
                              "every link up to the root port runs at its expected state", ""});
  return results;
}

}  // namespace pcieval::testing
