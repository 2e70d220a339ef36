// Judges peer-to-peer copies between GPUs (issue 28): each pair against the
// budget of its own route, and peer access against the same copy staged
// through host memory. The route comes from the two GPUs' paths
// (validate/path_settings_rules.hpp route_between).
#pragma once

#include <string_view>

#include "model/evidence.hpp"
#include "model/measurement.hpp"
#include "model/probe_keys.hpp"
#include "model/thresholds.hpp"
#include "validate/path_settings_rules.hpp"

namespace pcieval {

// The probe keys of peer copies: gpus[0] moved the bytes (its copy engine or
// SMs), gpus[1] is its peer; direction d2d; subject "SRC->DST".
inline constexpr std::string_view kPeerWriteCeProbe = "p2p_write_ce";
inline constexpr std::string_view kPeerReadCeProbe = "p2p_read_ce";
inline constexpr std::string_view kPeerWriteSmProbe = "p2p_write_sm";
inline constexpr std::string_view kPeerReadSmProbe = "p2p_read_sm";
// The same copy with peer access off: the driver stages it through host memory.
inline constexpr std::string_view kPeerStagedCeProbe = "p2p_staged_ce";
static_assert(kPeerProbeKeys[0] == kPeerWriteCeProbe && kPeerProbeKeys[1] == kPeerReadCeProbe &&
              kPeerProbeKeys[2] == kPeerWriteSmProbe && kPeerProbeKeys[3] == kPeerReadSmProbe &&
              kPeerProbeKeys[4] == kPeerStagedCeProbe);

// A peer copy: direction d2d, a "p2p_" key, two GPUs.
[[nodiscard]] bool is_peer_measurement(const Measurement& m);

// Verdicts, in measurement order, then notes for what was measured and not
// judged:
// - probe_failed (inconclusive): a peer copy whose data was not verified;
// - peer_slower_than_host_staged (misconfigured): a copy-engine peer copy
//   (p2p_write_ce, p2p_read_ce) whose median is below the same pair's
//   p2p_staged_ce median of the same aggregation (the same order of GPUs, or
//   else the reverse): peer access makes it slower than the detour through
//   host memory, a routing fault whatever the link, with or without one in
//   the evidence (NVIDIA/nccl#814: 9.6-10.5 GB/s enabled against 20-22
//   disabled);
// - pairs that meet inside a switch (route_between): each copy-engine copy
//   alone is held to the narrowest link below the meeting switch on both
//   GPUs' paths (expected state; the payload programmed there where read),
//   write_gbps for writes, read_gbps for reads, with the bandwidth floor and
//   warning line of the profile (per_probe entries for the p2p key, direction
//   d2d, apply): peer_bandwidth_at_budget (pass), bandwidth_in_warning_band
//   (pass), peer_bandwidth_below_budget (bandwidth_low, naming an
//   ACS-redirecting port on the route as the likely cause), in a live run
//   bandwidth_too_noisy (inconclusive) for too few or too spread trials,
//   no_link_budget (inconclusive) where a link's state there is unknown;
// - pairs whose traffic crosses the root complex by design: judged only
//   against path_settings.cross_root_peer_floor_gbps when the profile sets
//   it (peer_bandwidth_below_floor, bandwidth_low; at or above it
//   peer_bandwidth_at_budget); otherwise a note, never a verdict;
// - a copy more than kAboveBudgetSlack above what PCIe on its route allows
//   crossed NVLink or another interconnect: a note, never judged against PCIe;
// - pairs without a route in the evidence (captures without lspci): held to
//   the stated link (--link) as the tools' host numbers are; without one, a
//   capture's copies are no_link_to_judge_against (inconclusive, one verdict
//   for the node), a live run's a note;
// - peer_access_unavailable (misconfigured): a pair that meets inside a
//   switch, with a PeerStatus that is not ok and no peer copy measured; a
//   note for other pairs.
// SM-kernel copies and copies measured while the reverse ran are recorded,
// not judged against a budget (as the host's); the staged comparison is of
// copy-engine copies only (like with like).
[[nodiscard]] RuleJudgement judge_peers(const Evidence& evidence, const ThresholdProfile& profile);

}  // namespace pcieval
