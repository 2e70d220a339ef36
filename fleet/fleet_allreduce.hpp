// The fleet all-reduce of an MPI run: one NCCL all-reduce over every GPU of
// every node, after the nodes' own checks (app/mpi_fleet_allreduce.cpp runs
// it). Pure: which nodes take part and with which ranks, and what the
// per-node trial times add up to. Reported as measured, never judged
// against a PCIe budget: between nodes the bytes cross the network, whose
// budget pcieval does not know.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pcieval {

struct Fleet;

enum class FleetAllReduceStatus {
  kMeasured,  // every node took part; busbw from the slowest node per trial
  kSkipped,   // not attempted: why in reason
  kFailed,    // attempted and did not complete on some node: why in reason
};
[[nodiscard]] std::string_view to_string(FleetAllReduceStatus status);

struct FleetAllReduce {
  FleetAllReduceStatus status = FleetAllReduceStatus::kSkipped;
  std::string reason;  // skipped or failed: why; empty when measured
  int nodes = 0;       // nodes that took part (or would have)
  int gpus = 0;        // ranks of the communicator
  std::uint64_t size_bytes = 0;
  // Per timed trial: nccl-tests' busbw (algbw x 2(n-1)/n, GB = 1e9), the
  // trial's time being the slowest node's (each node's being its slowest
  // GPU's, by CUDA events).
  std::vector<double> trials_busbw_gbps;
  double median_busbw_gbps = 0;
  double median_algbw_gbps = 0;
  // "host: what NCCL was left or forced to" per node, and each failing
  // node's error: what a reader needs to trust or distrust the number.
  std::vector<std::string> notes;
};

// What one node offers: its GPUs, or why it has none to give.
struct AllReduceOffer {
  std::string host;
  int gpus = 0;
  std::string why_not;  // non-empty: the node cannot take part
};

struct AllReducePlan {
  bool go = false;
  std::string reason;            // when !go: why it is skipped
  std::vector<int> first_ranks;  // per offer, the global rank of its first GPU
  int total_ranks = 0;
};

// Runs only when there are 2 or more nodes (one node's GPUs together are its
// own allreduce_nccl probes) and every node can take part: a collective
// waits for all its ranks, so one node without NCCL would hang the rest.
[[nodiscard]] AllReducePlan plan_fleet_allreduce(const std::vector<AllReduceOffer>& offers);

// The measured entry from each node's per-trial seconds (same count on
// every node). An empty or mismatched set, or a zero time, is an error
// entry (kFailed), never a number.
[[nodiscard]] FleetAllReduce measured_fleet_allreduce(int nodes, int gpus, std::uint64_t size_bytes,
                                                      const std::vector<std::vector<double>>& node_trial_s,
                                                      std::vector<std::string> notes);

// One line for the table and the page: "all-reduce over 4 nodes, 32 GPUs
// at 256 MiB: busbw 41.20 GB/s (algbw 21.25), median of 5 trials; measured,
// not judged", or what was skipped or failed and why.
[[nodiscard]] std::string describe_fleet_allreduce(const FleetAllReduce& allreduce);

// Puts the entry on the fleet. A failed all-reduce makes a passing fleet
// inconclusive (exit 3): some node could not join a collective its peers
// completed, which a scheduler's jobs would hit too. The summary says so.
void attach_fleet_allreduce(Fleet& fleet, FleetAllReduce allreduce);

}  // namespace pcieval
