// Every rule family in one pure call: what `check`, `validate`, `diagnose`
// and `compare` judge evidence with, so that they cannot disagree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

struct JudgeAllOptions {
  // `missing` when fewer GPUs than this are found.
  std::optional<int> expected_gpus;
  // --baseline: an earlier run of the same node to hold the medians against.
  const Evidence* baseline = nullptr;
};

// The verdicts of every rule, in this order: links (validate/link_rules),
// copy bandwidth, collectives, error counters, probes, the soak, the captured
// text (lines cited on the link verdicts first), the settings on the GPUs'
// paths (validate/path_settings_rules), the peer copies between GPUs
// (validate/peer_rules), then the baseline.
// Never empty: when no rule found anything to judge (an empty PCI tree, only
// devices without links, tool output that judged nothing), one node-wide
// inconclusive `nothing_judged` verdict says so. A pass needs judged
// evidence (DESIGN.md).
[[nodiscard]] std::vector<Verdict> judge_all(const Evidence& evidence, const ThresholdProfile& profile,
                                             const JudgeAllOptions& options);

// What the path-settings and peer rules read but did not judge, and why
// (settings not read without root, peer copies that cross the root complex
// by design or NVLink): one line each, for Evidence::notes. Said once where
// the evidence is gathered (check, diagnose), as the tools' notes are, not
// by every re-judgement.
[[nodiscard]] std::vector<std::string> unjudged_notes(const Evidence& evidence, const ThresholdProfile& profile);

}  // namespace pcieval
