// Judges every device's PCIe path from link state alone: is any link running
// below what both of its ends can do?
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/verdict.hpp"

namespace pcieval {

struct LinkRuleOptions {
  // `missing` when fewer GPUs than this are found; nullopt: no expectation.
  std::optional<int> expected_gpus;
};

// One verdict per judged device, in device order, then node-wide verdicts.
// Judged: endpoints with a PCIe path (or a link whose path is missing), not SR-IOV virtual functions, and only
// function 0 of a multi-function device (its other functions report the same
// physical link, so judging them would repeat the verdict).
//
// Rules, per link of the path, from the device upward:
// - expected = lower of both ends' capabilities; a link is downgraded when its
//   negotiated speed or width is below that;
// - an NVIDIA GPU's own link read at lower speed while the GPU was not under
//   load is inconclusive, never a downgrade: idle GPUs lower their link speed
//   on purpose. Width, and every link above a switch upstream port, is judged
//   as read;
// - when link samples taken under load exist for a GPU's own port, that link
//   is judged from the best state seen under load (highest speed, widest
//   width: the link retrains up when busy, so any loaded reading at full
//   state proves it can), and the idle rule above no longer applies to it;
// - an unknown reading makes the device inconclusive, never a pass;
// - a device that reports a working link but has no port above it in the
//   evidence (a partial capture) is inconclusive: its path is unknown.
[[nodiscard]] std::vector<Verdict> judge_links(const Evidence& evidence, const LinkRuleOptions& options);

// The highest speed and widest width `port` was read at while under load,
// from samples whose speed and width were both read; nullopt when there is none.
[[nodiscard]] std::optional<LinkState> best_state_under_load(const std::vector<LinkSample>& samples,
                                                             const PciAddress& port);

// The devices judge_links judges, so callers can tell "nothing to judge".
[[nodiscard]] bool is_judged(const DeviceRecord& device, const Evidence& evidence);

// One line fit for a Slurm drain reason: the overall outcome, the first
// failing (or inconclusive) verdict and how many more there are.
[[nodiscard]] std::string summarize(const std::vector<Verdict>& verdicts, const Evidence& evidence);

}  // namespace pcieval
