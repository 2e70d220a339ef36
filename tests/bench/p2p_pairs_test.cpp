// Which GPU pairs the p2p probes measure, from hand-built evidence: every
// pair up to 8 GPUs, a sample that still crosses every route above.
#include "bench/p2p_pairs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <utility>

namespace pcieval {
namespace {

using ::testing::HasSubstr;

PciAddress bdf(const std::string& text) { return *parse_pci_address(text); }

std::string hex_bdf(int bus) {
  char text[16];
  std::snprintf(text, sizeof text, "0000:%02x:00.0", bus);
  return text;
}

Link link(const std::string& downstream, const std::string& upstream, LinkPosition position) {
  Link result;
  result.downstream = bdf(downstream);
  result.upstream = bdf(upstream);
  result.position = position;
  return result;
}

// `switches` PCIe switches, each on a root port of its own with
// `per_switch` GPUs below it (a DGX-2-like layout when 8 x 2), GPUs at buses
// 0x10 * switch + 3, + 4, ...; root ports at bus 0x10 * switch, device 1.
Evidence node_of(int switches, int per_switch) {
  Evidence evidence;
  for (int s = 0; s < switches; ++s) {
    const int base = 0x10 * (s + 1);
    char root[16];
    std::snprintf(root, sizeof root, "0000:%02x:01.0", base);
    for (int g = 0; g < per_switch; ++g) {
      DeviceRecord gpu;
      gpu.function.bdf = bdf(hex_bdf(base + 3 + g));
      gpu.function.kind = DeviceKind::kGpu;
      gpu.function.vendor_id = 0x10de;
      gpu.function.class_code = 0x030200;
      gpu.path = {link(hex_bdf(base + 3 + g), hex_bdf(base + 2), LinkPosition::kDeviceLink),
                  link(hex_bdf(base + 1), root, LinkPosition::kUplink)};
      evidence.devices.push_back(gpu);
    }
  }
  return evidence;
}

TEST(P2pPairs, UpToEightGpusEveryPairIsMeasuredAndNothingIsSaidSampled) {
  const P2pPairPlan plan = plan_p2p_pairs(node_of(4, 2));
  EXPECT_EQ(plan.pairs.size(), 28U);
  EXPECT_TRUE(plan.sampled_note.empty());
  std::set<std::pair<PciAddress, PciAddress>> unique(plan.pairs.begin(), plan.pairs.end());
  EXPECT_EQ(unique.size(), 28U);
  for (const auto& [a, b] : plan.pairs) EXPECT_LT(a, b);
}

TEST(P2pPairs, AboveEightGpusASampleOfSwitchNeighboursAndOnePairPerTwoRootPortsIsNamed) {
  // 16 GPUs: 8 switches of 2, each on its own root port.
  const P2pPairPlan plan = plan_p2p_pairs(node_of(8, 2));
  // 8 neighbour pairs and C(8, 2) = 28 root-port pairs, out of 120.
  EXPECT_EQ(plan.pairs.size(), 8U + 28U);
  const std::set<std::pair<PciAddress, PciAddress>> chosen(plan.pairs.begin(), plan.pairs.end());
  EXPECT_TRUE(chosen.count({bdf("0000:13:00.0"), bdf("0000:14:00.0")}));   // switch neighbours
  EXPECT_TRUE(chosen.count({bdf("0000:13:00.0"), bdf("0000:23:00.0")}));   // the first GPUs of two root ports
  EXPECT_FALSE(chosen.count({bdf("0000:14:00.0"), bdf("0000:24:00.0")}));  // not sampled
  EXPECT_THAT(plan.sampled_note, HasSubstr("16 GPUs: a sample of 36 of 120 pairs"));
  EXPECT_THAT(plan.sampled_note, HasSubstr("0000:13:00.0/0000:14:00.0"));
}

TEST(P2pPairs, OneGpuHasNoPair) { EXPECT_TRUE(plan_p2p_pairs(node_of(1, 1)).pairs.empty()); }

TEST(P2pPairs, TheSubjectNamesTheGpuThatRunsTheCopyFirst) {
  EXPECT_EQ(p2p_subject(bdf("0000:18:00.0"), bdf("0000:17:00.0")), "0000:18:00.0->0000:17:00.0");
}

}  // namespace
}  // namespace pcieval
