// Placing lspci functions from bridge bus ranges, and merging captures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ingest/lspci.hpp"
#include "ingest/lspci_test_util.hpp"

namespace pcieval::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::optional<PciAddress> parent_of(const LspciCapture& capture, const std::string& address) {
  const LspciDevice* device = find(capture, address);
  if (device == nullptr) throw std::runtime_error("no " + address);
  return device->function.parent;
}

TEST(LspciParents, NestedSwitchFromBusRanges) {
  const std::string text =
      bridge_block("00:01.1", "Root Port (Slot+)", "primary=00, secondary=01, subordinate=05") +
      bridge_block("01:00.0", "Upstream Port", "primary=01, secondary=02, subordinate=05") +
      bridge_block("02:00.0", "Downstream Port (Slot+)", "primary=02, secondary=03, subordinate=03") +
      bridge_block("02:08.0", "Downstream Port (Slot+)", "primary=02, secondary=04, subordinate=05") +
      gpu_block("03:00.0", "Speed 16GT/s, Width x16") +
      bridge_block("04:00.0", "Upstream Port", "primary=04, secondary=05, subordinate=05") +
      gpu_block("05:00.0", "Speed 16GT/s, Width x16");
  const auto capture = parse_ok(text);
  EXPECT_FALSE(parent_of(capture, "00:01.1").has_value());
  EXPECT_EQ(parent_of(capture, "01:00.0"), bdf("00:01.1"));
  EXPECT_EQ(parent_of(capture, "02:00.0"), bdf("01:00.0"));
  EXPECT_EQ(parent_of(capture, "02:08.0"), bdf("01:00.0"));
  EXPECT_EQ(parent_of(capture, "03:00.0"), bdf("02:00.0"));
  EXPECT_EQ(parent_of(capture, "04:00.0"), bdf("02:08.0")) << "secondary 04 of 02:08.0, not just inside 01-05";
  EXPECT_EQ(parent_of(capture, "05:00.0"), bdf("04:00.0"));
  for (const auto& device : capture.devices) EXPECT_FALSE(device.placement_note.has_value());
}

TEST(LspciParents, RootBusesNeedNoBridge) {
  // AMD hosts start root buses at 0x20, 0x40, ...: a root port there has no parent and needs none.
  const auto capture =
      parse_ok(bridge_block("40:01.1", "Root Port (Slot+)", "primary=40, secondary=41, subordinate=41") +
               gpu_block("41:00.0", "Speed 2.5GT/s, Width x16"));
  EXPECT_FALSE(find(capture, "40:01.1")->placement_note.has_value());
  EXPECT_EQ(parent_of(capture, "41:00.0"), bdf("40:01.1"));
}

TEST(LspciParents, ADeviceOnAnUnclaimedBusSaysSo) {
  const auto capture =
      parse_ok(gpu_block("0001:c1:00.0", "Speed 16GT/s, Width x16") + gpu_block("00:02.0", "Speed 16GT/s, Width x16"));
  EXPECT_EQ(find(capture, "0001:c1:00.0")->placement_note,
            "capture has no bridge for bus 0001:c1; its path is unknown");
  EXPECT_FALSE(find(capture, "00:02.0")->placement_note.has_value()) << "bus 0 is a root bus";
}

TEST(LspciParents, OnlyBridgesOfTheSameDomain) {
  const auto capture =
      parse_ok(bridge_block("0000:00:01.0", "Root Port (Slot+)", "primary=00, secondary=01, subordinate=01") +
               gpu_block("0001:01:00.0", "Speed 16GT/s, Width x16"));
  EXPECT_FALSE(parent_of(capture, "0001:01:00.0").has_value());
  EXPECT_THAT(*find(capture, "0001:01:00.0")->placement_note, HasSubstr("no bridge for bus 0001:01"));
}

TEST(LspciParents, TwoBridgesClaimingOneBusPickTheNarrowerAndSaySo) {
  const auto capture =
      parse_ok(bridge_block("00:01.0", "Root Port (Slot+)", "primary=00, secondary=05, subordinate=09") +
               bridge_block("00:02.0", "Root Port (Slot+)", "primary=00, secondary=05, subordinate=05") +
               gpu_block("05:00.0", "Speed 16GT/s, Width x16"));
  EXPECT_EQ(parent_of(capture, "05:00.0"), bdf("00:02.0"));
  EXPECT_EQ(find(capture, "05:00.0")->placement_note,
            "bridges 0000:00:01.0, 0000:00:02.0 all claim bus 05; placed under 0000:00:02.0");
}

TEST(LspciParents, ARangeThatLoopsBackIsIgnored) {
  // 03:00.0 claims bus 02, above itself: following it would loop.
  const auto capture =
      parse_ok(bridge_block("00:01.0", "Root Port (Slot+)", "primary=00, secondary=02, subordinate=03") +
               bridge_block("02:00.0", "Upstream Port", "primary=02, secondary=03, subordinate=03") +
               bridge_block("03:00.0", "Downstream Port (Slot+)", "primary=03, secondary=02, subordinate=02"));
  EXPECT_EQ(parent_of(capture, "02:00.0"), bdf("00:01.0"));
  EXPECT_EQ(parent_of(capture, "03:00.0"), bdf("02:00.0"));
  EXPECT_FALSE(find(capture, "03:00.0")->bus.has_value());
  EXPECT_THAT(find(capture, "03:00.0")->notes, Contains(HasSubstr("does not describe buses below this bridge")));
  const auto garbled =
      parse_ok(bridge_block("00:01.0", "Root Port (Slot+)", "primary=00, secondary=zz, subordinate=03"));
  EXPECT_THAT(garbled.devices.front().notes, Contains(HasSubstr("unreadable bus line")));
}

TEST(LspciMerge, ABridgeFromAnotherFilePlacesTheDevice) {
  LspciCapture gpu = parse_ok(read_capture(kEscGpu41), "gpu.txt");
  LspciCapture port = parse_ok(read_capture(kEscRootPort40), "port.txt");
  std::vector<LspciCapture> both;
  both.push_back(std::move(gpu));
  both.push_back(std::move(port));
  const LspciCapture merged = merge_lspci_captures(std::move(both));
  EXPECT_EQ(merged.source, "gpu.txt, port.txt");
  ASSERT_EQ(merged.devices.size(), 2U);
  EXPECT_EQ(parent_of(merged, "41:00.0"), bdf("40:01.1"));
  for (const auto& device : merged.devices) {
    EXPECT_FALSE(device.placement_note.has_value());
    EXPECT_THAT(device.notes, IsEmpty());
  }
  EXPECT_EQ(merged.skipped_lines, 10U);
}

TEST(LspciMerge, LaterFilesFillWhatEarlierOnesLacked) {
  // No -nn and a block cut before LnkSta, then the same device with -nn in full.
  std::string cut = gpu_block("01:00.0", "Speed 2.5GT/s (downgraded), Width x16");
  cut = cut.substr(0, cut.find("LnkSta"));
  std::string full = gpu_block("01:00.0", "Speed 2.5GT/s (downgraded), Width x16");
  full.replace(full.find("(rev a1)"), 0, "[10de:26b1] ");
  std::vector<LspciCapture> captures;
  captures.push_back(parse_ok(cut, "a.txt"));
  captures.push_back(parse_ok(full, "b.txt"));
  const LspciCapture merged = merge_lspci_captures(std::move(captures));
  ASSERT_EQ(merged.devices.size(), 1U);
  const LspciDevice& gpu = merged.devices.front();
  EXPECT_EQ(gpu.function.device_id, 0x26b1);
  EXPECT_TRUE(gpu.device_known);
  EXPECT_EQ(gpu.function.link->negotiated().value(), (LinkState{PcieGen::kGen1, 16}));
  EXPECT_THAT(gpu.notes, IsEmpty()) << "filling is not a conflict";
  EXPECT_EQ(gpu.source, "a.txt");
}

TEST(LspciMerge, ConflictsKeepTheFirstAndNameBothSources) {
  std::vector<LspciCapture> captures;
  captures.push_back(parse_ok(gpu_block("01:00.0", "Speed 2.5GT/s, Width x16"), "idle.txt"));
  captures.push_back(parse_ok("\n" + gpu_block("01:00.0", "Speed 16GT/s, Width x8"), "busy.txt"));
  const LspciCapture merged = merge_lspci_captures(std::move(captures));
  const LspciDevice& gpu = merged.devices.front();
  EXPECT_EQ(gpu.function.link->negotiated().value(), (LinkState{PcieGen::kGen1, 16}));
  EXPECT_THAT(gpu.notes, Contains("LnkSta speed: idle.txt:1 reads Gen1, busy.txt:2 reads Gen4; kept idle.txt:1"));
  EXPECT_THAT(gpu.notes, Contains("LnkSta width: idle.txt:1 reads 16, busy.txt:2 reads 8; kept idle.txt:1"));
}

TEST(LspciMerge, AFunctionListedTwiceInOneCaptureIsOneDevice) {
  const std::string block = gpu_block("01:00.0", "Speed 16GT/s, Width x16");
  const auto same = parse_ok(block + block);
  ASSERT_EQ(same.devices.size(), 1U);
  EXPECT_THAT(same.devices.front().notes, IsEmpty());
  const auto differ = parse_ok(block + gpu_block("01:00.0", "Speed 8GT/s, Width x16"), "t.txt");
  ASSERT_EQ(differ.devices.size(), 1U);
  EXPECT_THAT(differ.devices.front().notes, Contains(HasSubstr("LnkSta speed: t.txt:1 reads Gen4, t.txt:")));
}

}  // namespace
}  // namespace pcieval::testing
