// Which GPU pairs the p2p probes measure: a pure function of the evidence,
// so the plan can be tested without a GPU.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "model/evidence.hpp"
#include "model/pci_address.hpp"

namespace pcieval {

// Up to this many GPUs every unordered pair is measured (28 pairs on an
// 8-GPU node); above it a sample.
inline constexpr std::size_t kAllP2pPairsUpToGpus = 8;

struct P2pPairPlan {
  // Unordered pairs, first < second, ascending: each is measured both ways.
  std::vector<std::pair<PciAddress, PciAddress>> pairs;
  // Not every pair: says which were measured and why ("16 GPUs: each GPU
  // with its switch neighbours and one pair per pair of root ports; 39 of
  // 120 pairs: ..."). Empty when every pair is.
  std::string sampled_note;
};

// Every pair of gpus_of(evidence) on up to kAllP2pPairsUpToGpus GPUs. On more,
// a sample that still crosses every kind of route: every pair of GPUs behind
// one switch (or root port: group_gpus_by_uplink's neighbours), and for every
// two root ports the first GPU of each (the pair's traffic crosses the root
// complex). GPUs whose path is unknown pair with none in a sample.
[[nodiscard]] P2pPairPlan plan_p2p_pairs(const Evidence& evidence);

// "0000:17:00.0->0000:18:00.0": a pair named source first; a measurement's
// subject follows its bytes (a read's peer first), its gpus the initiator.
[[nodiscard]] std::string p2p_subject(const PciAddress& initiator, const PciAddress& peer);

}  // namespace pcieval
