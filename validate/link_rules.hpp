// Judges every device's PCIe path from link state alone: is any link running
// below what both of its ends can do?
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/verdict.hpp"
#include "validate/expectation.hpp"

namespace pcieval {

struct LinkRuleOptions {
  // `missing` when fewer GPUs than this are found; nullopt: no expectation.
  std::optional<int> expected_gpus;
  // What an emulated port above a device lets the rules assume.
  ExpectationOptions expectation;
};

// One verdict per judged device, in device order, then node-wide verdicts.
// Judged: endpoints with a PCIe path or a link of their own (lspci LnkSta,
// sysfs, NVML), and GPUs whose link could not be read at all; not SR-IOV
// virtual functions, and only function 0 of a multi-function device (its
// other functions report the same physical link, so judging them would
// repeat the verdict). Where function 0 is a switch upstream port, no device
// of its own, the other function is judged by function 0's link
// (model/pci_tree.hpp build_path), never by its own LnkCap, and the reason
// says so.
//
// Each link's expectation comes from validate/expectation.hpp:
// - with both ends known, the lower of both ends' capabilities; a link is
//   downgraded when its negotiated speed or width is below that;
// - under an emulated port (QEMU's pcie-root-port, ...), the device's own
//   capability, stated in the reason (the profile can turn this off: then
//   inconclusive); the links above the first emulated port are not judged;
// - an NVIDIA GPU's own link read at lower speed while the GPU was not under
//   load is inconclusive, never a downgrade: idle GPUs lower their link speed
//   on purpose. Width, and every link above a switch upstream port, is judged
//   as read: width does not drop to save power;
// - when link samples taken under load exist for a GPU's own port, that link
//   is judged from the best state seen under load (highest speed, widest
//   width: the link retrains up when busy, so any loaded reading at full
//   state proves it can), and the idle rule above no longer applies to it;
// - an unknown reading makes the device inconclusive, never a pass; a GPU
//   with no link reading at all is inconclusive (link_state_unknown). A
//   reading missing or broken at either end of a link is unknown: the other
//   end's does not stand in for it, and load samples replace an idle state,
//   not a broken one. Two ends that read but disagree are unknown too, unless
//   state_despite_disagreement (validate/expectation.hpp) settles it;
// - a device with a link but no port above it in the evidence is held to its
//   own ceiling: NVML/nvidia-smi Max (which folds in the port above), else its
//   own capability. At that ceiling it passes (link_at_own_capability: the
//   hops above were not judged); below an NVML Max, or below its own
//   capability in a guest with no ports, the rules above apply; below its own
//   capability with the port above unknown it is inconclusive
//   (link_path_unknown), naming both states and the capture that settles it.
[[nodiscard]] std::vector<Verdict> judge_links(const Evidence& evidence, const LinkRuleOptions& options);

// The highest speed and widest width `port` was read at while under load,
// from samples whose speed and width were both read; nullopt when there is none.
[[nodiscard]] std::optional<LinkState> best_state_under_load(const std::vector<LinkSample>& samples,
                                                             const PciAddress& port);

// How long, in all, a port must have been read under load at its last state
// below its best, through the end of its readings, for that state to count as
// where the link ended up (a retrain mid-run), not a reading taken while it
// ramped up from idle, which lasts a sampling period or two.
inline constexpr double kSustainedUnderLoadS = 0.2;

// What a port ran at under load. `state` is what a verdict holds the link
// to: the best state read under load, unless the samples are per GPU
// (Evidence::load_per_gpu) and the port's last state read under load is
// below that best and was held for at least kSustainedUnderLoadS in all
// through the end: then that last state, with `reached` the best state it
// was read at before (a real reading; absent when none was higher),
// `since_s` when the last stretch began and `held_s` how long under load it
// lasted.
struct StateUnderLoad {
  LinkState state;
  std::optional<LinkState> reached;
  double since_s = 0;
  double held_s = 0;
};
[[nodiscard]] std::optional<StateUnderLoad> state_under_load(const std::vector<LinkSample>& samples,
                                                             const PciAddress& port, bool load_per_gpu);

// The devices judge_links judges, so callers can tell "nothing to judge".
[[nodiscard]] bool is_judged(const DeviceRecord& device, const Evidence& evidence);

// One line fit for a Slurm drain reason: the overall outcome, the first
// failing (or inconclusive) verdict and how many more there are.
[[nodiscard]] std::string summarize(const std::vector<Verdict>& verdicts, const Evidence& evidence);

}  // namespace pcieval
