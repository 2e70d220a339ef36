// Every probe key a measurement can carry: the live probes of the registry
// (bench/registry.cpp, `pcieval check --list-probes`) and the keys the
// readers of captured tool output give theirs (ingest/). Here, in model/, so
// that a threshold profile's `per_probe` entry can be checked against them
// by code that may not include bench/ or ingest/ (DESIGN.md's layers): a
// misspelt key would otherwise be stored and never match, and the floor it
// meant to set would silently stay the default.
//
// tests/bench/probe_keys_test.cpp holds kRegistryProbeKeys equal to the
// registry's keys, and tests/ingest/probe_keys_test.cpp every key the tool
// readers produce from the captures of the corpus to kToolProbeKeys.
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

namespace pcieval {

// In the registry's order.
inline constexpr std::array<std::string_view, 18> kRegistryProbeKeys = {
    "h2d_ce",         "d2h_ce",       "h2d_sm",        "d2h_sm",
    "bidir_ce",       "pageable_ce",  "all_gpus_ce",   "group_ce",
    "remote_numa_ce", "sweep_ce",     "p2p_write_ce",  "p2p_read_ce",
    "p2p_write_sm",   "p2p_read_sm",  "p2p_staged_ce", "allreduce_nccl_host",
    "allreduce_nccl", "host_ceiling",
};

// nvbandwidth's host tests (ingest/nvbandwidth.cpp, "nvbandwidth_" + the
// test's name), CUDA samples' bandwidthTest (ingest/bandwidth_test.cpp),
// nccl-tests' all_reduce_perf (model/captured_event.hpp), and the
// device-to-device numbers of nvbandwidth and p2pBandwidthLatencyTest, which
// carry the peer probes' own keys (issue 28's measurement contract,
// ingest/tool_output.hpp) so that one per_probe entry sets the floor of both.
inline constexpr std::array<std::string_view, 23> kToolProbeKeys = {
    "nvbandwidth_host_to_device_memcpy_ce",
    "nvbandwidth_host_to_device_memcpy_sm",
    "nvbandwidth_device_to_host_memcpy_ce",
    "nvbandwidth_device_to_host_memcpy_sm",
    "nvbandwidth_host_to_device_bidirectional_memcpy_ce",
    "nvbandwidth_host_to_device_bidirectional_memcpy_sm",
    "nvbandwidth_device_to_host_bidirectional_memcpy_ce",
    "nvbandwidth_device_to_host_bidirectional_memcpy_sm",
    "nvbandwidth_host_to_all_memcpy_ce",
    "nvbandwidth_host_to_all_memcpy_sm",
    "nvbandwidth_all_to_host_memcpy_ce",
    "nvbandwidth_all_to_host_memcpy_sm",
    "bandwidthtest_h2d_pinned",
    "bandwidthtest_h2d_pageable",
    "bandwidthtest_d2h_pinned",
    "bandwidthtest_d2h_pageable",
    "nccltests_all_reduce",
    "nccltests_all_reduce_host",
    "p2p_write_ce",
    "p2p_read_ce",
    "p2p_write_sm",
    "p2p_read_sm",
    "p2p_staged_ce",
};

// Peer copies between GPUs (issue 28, direction d2d), live (check --p2p)
// and from captured peer tools alike: writes and reads by copy engine and
// by SM kernel, and the copy-engine copy with peer access off (staged
// through host memory). validate/peer_rules.hpp judges them.
inline constexpr std::array<std::string_view, 5> kPeerProbeKeys = {
    "p2p_write_ce", "p2p_read_ce", "p2p_write_sm", "p2p_read_sm", "p2p_staged_ce",
};

[[nodiscard]] constexpr bool is_probe_key(std::string_view key) {
  return std::find(kRegistryProbeKeys.begin(), kRegistryProbeKeys.end(), key) != kRegistryProbeKeys.end() ||
         std::find(kToolProbeKeys.begin(), kToolProbeKeys.end(), key) != kToolProbeKeys.end() ||
         std::find(kPeerProbeKeys.begin(), kPeerProbeKeys.end(), key) != kPeerProbeKeys.end();
}

}  // namespace pcieval
