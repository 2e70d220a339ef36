// Judging the numbers of the tools people already run (nvbandwidth,
// bandwidthTest) against a link: the one the user states (`diagnose --link
// gen4x16`), or the one the GPU's captured path should train to. It answers
// the question those users ask: is this number normal for this link?
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/evidence.hpp"
#include "model/link.hpp"
#include "model/result.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// "gen4x16", "Gen4 x16", "gen5 x8", "16GT/s x16", "16 GT/s x16", "16.0 GT/s
// PCIe x16" (case-insensitive). Generations 1 to 6 (the budget model stops at
// Gen6), widths the spec defines. Anything else is an error quoting the text
// and the accepted spellings.
[[nodiscard]] Result<LinkState> parse_stated_link(std::string_view text);

// Below this a bandwidthTest row is latency-bound (launch and completion
// overhead dominate): only copies of at least 16 MB are judged (bandwidthTest
// quick mode copies 32 MB, nvbandwidth 512 MiB by default).
inline constexpr std::uint64_t kMinJudgedCopyBytes = 16'000'000;

// A tool's number: probe "nvbandwidth_<test>" or "bandwidthtest_<table>"
// (ingest/tool_output.hpp).
[[nodiscard]] bool is_tool_measurement(const Measurement& m);

// "nvbandwidth" or "bandwidthTest" for a tool's probe; "" otherwise.
[[nodiscard]] std::string tool_of(const Measurement& m);

struct ToolJudgeOptions {
  std::optional<LinkState> stated_link;  // --link
  // Where each measurement was read ("nvbw.txt:12"), by index into
  // evidence.measurements; the verdict's reason ends with it.
  std::map<std::size_t, std::string> origins;
};

struct ToolJudgement {
  std::vector<Verdict> verdicts;
  std::vector<std::string> notes;  // what was read but not judged, and why
};

// One verdict per judged tool number: host<->device, copy engine, pinned, one
// GPU alone (nvbandwidth host_to_device_memcpy_ce / device_to_host_memcpy_ce,
// bandwidthTest PINNED tables), the largest copy of each GPU, probe and
// direction, at least kMinJudgedCopyBytes, in every run the output holds (a
// file with a run per NUMA placement judges each). The budget is the stated
// link's when given, else gpu_path_budget of the GPU when its address and
// captured path are known.
// The floor and the warning line are the profile's for that GPU and probe
// (bandwidth_thresholds_for), the verdicts those of a live run:
// - bandwidth_at_budget (pass): at or above warn x budget; the reason names
//   the links the number fits (links_that_fit);
// - bandwidth_in_warning_band (pass): between the floor and warn;
// - bandwidth_below_budget (bandwidth_low): under floor x budget; the reason
//   names the links it fits instead, and, when another run of the same copy
//   in the same output reached the floor, says the run's conditions (host
//   buffer placement, load) are the cause, not the link;
// - bandwidth_above_budget (inconclusive): more than kAboveBudgetSlack over
//   the budget: the copies did not cross the link as stated or captured, so
//   nothing about that link can be said; it names what fits;
// - no_link_to_judge_against (inconclusive), one per GPU: no link stated and
//   none captured for it: the number proves nothing either way.
// The tool already aggregated its samples (one number per test), so there is
// no trial count or spread rule. SM-kernel copies (below the copy engine by
// design), bidirectional and all-GPU tests, pageable memory and sums over
// GPUs are recorded, never judged, and the notes say so once per kind.
[[nodiscard]] ToolJudgement judge_tool_bandwidth(const Evidence& evidence, const ThresholdProfile& profile,
                                                 const ToolJudgeOptions& options);

// nccl-tests all-reduce numbers read from a capture (probes
// kNcclTestsAllReduceProbe / kNcclTestsAllReduceHostProbe): reported as
// measured, and judged only when the user states the link (--link) AND the
// capture shows peer-to-peer disabled (the _host probe), because then every
// byte crossed each GPU's PCIe link both ways at once through host memory;
// with peer-to-peer NCCL may use NVLink or a switch, which no host link's
// budget bounds, and a captured path is not used either (the all-reduce's
// slowest GPU link bounds it, and the live allreduce_nccl_host rule,
// validate/collective_rules.hpp, judges that). The number judged: each
// subject's largest size of at least kMinJudgedCopyBytes. Its budget: the
// stated link's all-reduce budget (the lower of its read and write budgets);
// thresholds: those of the live allreduce_nccl_host (host_path_thresholds). Verdicts as
// judge_tool_bandwidth's (bandwidth_at_budget, bandwidth_in_warning_band,
// bandwidth_below_budget, bandwidth_above_budget); without --link each
// subject is no_link_to_judge_against. Notes say why a capture's numbers
// were not judged.
[[nodiscard]] ToolJudgement judge_nccl_tests_bandwidth(const Evidence& evidence, const ThresholdProfile& profile,
                                                       const ToolJudgeOptions& options);

}  // namespace pcieval
