// What the fleet table and page show of a large fleet: the nodes that need a
// look one by one, and the passing rest as a count per kind of node. A
// 10,000-node table with a row per node buries the three that matter.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/fleet.hpp"

namespace pcieval {

// Up to this many nodes every node is listed, in host order, as always.
inline constexpr std::size_t kListEveryNodeUpTo = 100;
// A larger fleet lists at most this many nodes (and outliers, and problem
// lines) one by one; the fleet document has them all.
inline constexpr std::size_t kMaxListedRows = 500;

// Passing nodes with no outlier GPU and the same GPUs: the same count of the
// same model at the same expected link.
struct PassingKind {
  std::string gpus;  // "8 x NVIDIA A100-SXM4-80GB"; "no GPU measured"; mixed: "4 x A, 4 x B"
  std::string link;  // "Gen4 x16"; mixed: "Gen4 x16, Gen4 x8"
  std::size_t nodes = 0;
  std::string first_host;  // in host order
  std::string last_host;
};

struct FleetOverview {
  bool every_node = true;  // small fleet: `listed` is every node in host order, `passing` empty
  // Large fleet: failing nodes, then passing nodes with an outlier GPU, then
  // unreadable ones, then inconclusive ones; host order within each.
  std::vector<const FleetNode*> listed;
  std::size_t not_listed = 0;        // nodes that need a look beyond kMaxListedRows
  std::vector<PassingKind> passing;  // most nodes first
};

// Pointers into `fleet`, valid while it lives.
[[nodiscard]] FleetOverview overview_of(const Fleet& fleet, std::size_t list_every_node_up_to = kListEveryNodeUpTo);

// "9950" as "9,950": counts of nodes read at a glance.
[[nodiscard]] std::string grouped_count(std::size_t count);

}  // namespace pcieval
