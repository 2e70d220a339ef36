// Judges what only captured text records: kernel log events (the kernel's
// "limited by" bandwidth lines, AER errors, Surprise Down, a GPU that fell off
// the bus), GPUs only nvidia-smi describes and the numbers of bandwidth tools.
// The link state the capture holds goes through judge_links like a live
// run's; these are the verdicts that come on top. Everything they read is in
// the evidence (schema 1.3), so `validate` of a diagnose document draws the
// same verdicts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/captured_event.hpp"
#include "model/evidence.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// Verdicts, one per device and finding, in device order:
// - uncorrectable AER errors (fatal or not), Surprise Down and a GPU that fell
//   off the bus: link_errors (uncorrectable_errors_logged, gpu_fell_off_bus).
//   An event on a port counts against every device of the evidence whose path
//   runs through that port; with none known it is judged on the port itself;
// - a "limited by" line: link_downgraded at the link of the named port (the
//   kernel names the upper end of the limiting link on a tie), with the
//   link_*_below_expected code of what was lost. The kernel prints it at
//   enumeration, when an NVIDIA GPU may still idle: a speed-only limit on the
//   GPU's own link (or, without the device's path, on a link that may be its
//   own) is inconclusive (gpu_link_speed_idle), as judge_links treats an idle
//   reading; a lost width, or a limit above the GPU's own link, is judged as
//   read; the idle case gives no verdict when the evidence holds a link sample
//   of the GPU under load (that reading is judged by judge_links). A line
//   whose states are unknown is not judged.
// Correctable errors make no verdict here: a few are normal, and a burst is
// judged by rate per port (judge_captured_rates, event_rate_rules.hpp), which
// also names each port's count in a note.
[[nodiscard]] std::vector<Verdict> judge_captured_events(const Evidence& evidence,
                                                         const std::vector<CapturedEvent>& events);

// Every verdict captured evidence adds to the rules of a live run, in this
// order: the tool numbers (judge_tool_bandwidth against evidence.stated_link
// or the captured path, then judge_nccl_tests_bandwidth against the stated
// link, each citing its line), the kernel events (judge_captured_events), then
// bursts of correctable errors (judge_captured_rates, event_rate_rules.hpp).
// GPUs only nvidia-smi describes are judge_links' (held to nvidia-smi's Max,
// validate/expectation.hpp), like any device without a port above it. Empty for the evidence
// of a live run, which has no capture lines, events or tool numbers.
[[nodiscard]] std::vector<Verdict> judge_captured(const Evidence& evidence, const ThresholdProfile& profile);

// Appends " (lspci.txt:61, nvidia-smi.txt:42)" to each verdict of a link
// rule (judge_links' codes): the captured lines of the link's lower end and
// of the subject. Call it on judge_links' verdicts before anything else is
// appended; it changes nothing where evidence.capture_lines is empty.
void cite_capture_lines(std::vector<Verdict>& verdicts, const Evidence& evidence);

}  // namespace pcieval
