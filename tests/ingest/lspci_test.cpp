// parse_lspci on every format variant: pciutils before and after 3.8, -D and
// -nn or not, tabs or spaces, markdown pastes, and every speed, width and
// annotation lspci prints.
#include "ingest/lspci.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ingest/lspci_test_util.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

LinkState state(PcieGen gen, int width) { return LinkState{gen, width}; }

TEST(LspciFixtures, EscMarkdownPasteNewPciutilsNoDomainsNoIds) {
  const LspciCapture capture = parse_ok(read_capture(kEscFull), "esc.txt");
  EXPECT_EQ(capture.devices.size(), 40U);
  // 16 comment lines, the markdown heading, two fences and the shell prompt.
  EXPECT_EQ(capture.skipped_lines, 20U);
  EXPECT_THAT(capture.notes, ::testing::Contains(HasSubstr("esc.txt: skipped 20 lines")));
  EXPECT_THAT(capture.notes, ::testing::Contains(HasSubstr("captured without -nn")));

  const LspciDevice* gpu = find(capture, "41:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->function.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu->function.vendor_id, 0x10de);
  EXPECT_EQ(gpu->function.device_id, 0);
  EXPECT_FALSE(gpu->device_known);
  EXPECT_EQ(gpu->function.class_code, 0x030000U);
  EXPECT_EQ(gpu->function.role, PortRole::kEndpoint);
  ASSERT_TRUE(gpu->function.link.has_value());
  EXPECT_EQ(gpu->function.link->capable().value(), state(PcieGen::kGen4, 16));
  EXPECT_EQ(gpu->function.link->negotiated().value(), state(PcieGen::kGen1, 16)) << "(downgraded) is ignored";
  EXPECT_EQ(gpu->function.numa_node.value(), 0);
  EXPECT_EQ(gpu->function.parent, bdf("40:01.1"));
  EXPECT_EQ(gpu->line, 263U);
  EXPECT_EQ(gpu->source, "esc.txt");

  const LspciDevice* root = find(capture, "40:01.1");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->function.role, PortRole::kRootPort);
  EXPECT_TRUE(root->function.is_bridge);
  EXPECT_EQ(root->bus, (BusRange{0x40, 0x41, 0x41}));
  EXPECT_FALSE(root->function.parent.has_value());
  EXPECT_FALSE(root->placement_note.has_value()) << "bus 40 holds a host bridge: a root bus";

  const LspciDevice* raid = find(capture, "71:00.0");
  ASSERT_NE(raid, nullptr);
  EXPECT_EQ(raid->function.parent, bdf("70:14.0"));
  EXPECT_EQ(raid->function.link->negotiated().value(), state(PcieGen::kGen2, 1));
  EXPECT_EQ(find(capture, "70:14.0")->function.parent, bdf("6f:00.0"));
  EXPECT_EQ(find(capture, "70:14.0")->function.role, PortRole::kDownstreamPort);
  EXPECT_EQ(find(capture, "6f:00.0")->function.parent, bdf("62:0c.0"));
  EXPECT_EQ(find(capture, "6f:00.0")->function.role, PortRole::kUpstreamPort);
  EXPECT_EQ(find(capture, "61:00.0")->function.parent, bdf("60:01.1"));

  EXPECT_EQ(find(capture, "65:00.0")->function.kind, DeviceKind::kNvme);
  EXPECT_EQ(find(capture, "65:00.0")->function.class_code, 0x010802U) << "prog-if 02";
  EXPECT_EQ(find(capture, "21:00.0")->function.kind, DeviceKind::kNic);
  EXPECT_EQ(find(capture, "21:00.0")->function.vendor_id, 0x15b3);

  // The BMC: a PCIe-to-PCI bridge (link on its upstream side) and a VGA with no PCIe link.
  EXPECT_EQ(find(capture, "74:00.0")->function.role, PortRole::kUpstreamPort);
  EXPECT_FALSE(find(capture, "75:00.0")->function.link.has_value());
  EXPECT_EQ(find(capture, "75:00.0")->function.parent, bdf("74:00.0"));
  EXPECT_EQ(find(capture, "75:00.0")->function.vendor_id, 0x1a03);
  // Host bridges without capabilities have no link.
  EXPECT_FALSE(find(capture, "00:00.0")->function.link.has_value());

  // Empty ports: "Width x0" is a link that is down.
  const LspciDevice* empty = find(capture, "70:15.0");
  ASSERT_NE(empty, nullptr);
  ASSERT_FALSE(empty->function.link->current_width.ok());
  EXPECT_EQ(empty->function.link->current_width.error().message, "LnkSta width 'x0': the link is down");
  EXPECT_TRUE(empty->function.link->current_speed.ok());

  for (const auto& device : capture.devices) {
    EXPECT_FALSE(device.placement_note.has_value()) << to_string(device.function.bdf) << ": " << *device.placement_note;
  }
}

TEST(LspciFixtures, OldPciutilsWithDomainsAndNumericIds) {
  const LspciCapture capture = parse_ok(read_capture(kIcelakePlx), "icx.txt");
  EXPECT_EQ(capture.devices.size(), 9U);
  EXPECT_EQ(capture.skipped_lines, 14U);
  for (const auto& note : capture.notes) EXPECT_THAT(note, ::testing::Not(HasSubstr("-nn")));

  const LspciDevice* busy = find(capture, "0000:4b:00.0");
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->function.vendor_id, 0x10de);
  EXPECT_EQ(busy->function.device_id, 0x20f1);
  EXPECT_TRUE(busy->device_known);
  EXPECT_EQ(busy->function.class_code, 0x030200U);
  EXPECT_EQ(busy->function.kind, DeviceKind::kGpu);
  EXPECT_EQ(busy->function.link->negotiated().value(), state(PcieGen::kGen4, 16)) << "(ok) is ignored";
  EXPECT_EQ(busy->function.parent, bdf("0000:4a:00.0"));

  const LspciDevice* uplink = find(capture, "0000:49:00.0");
  EXPECT_EQ(uplink->function.role, PortRole::kUpstreamPort);
  EXPECT_EQ(uplink->function.vendor_id, 0x1000);
  EXPECT_EQ(uplink->function.link->negotiated().value(), state(PcieGen::kGen3, 16));
  EXPECT_EQ(uplink->function.parent, bdf("0000:48:02.0"));
  EXPECT_EQ(find(capture, "0000:48:02.0")->function.role, PortRole::kRootPort);
  EXPECT_EQ(find(capture, "0000:48:02.0")->function.device_id, 0x347a) << "'Device [8086:347a]'";

  const LspciDevice* ib = find(capture, "0000:4d:00.0");
  EXPECT_EQ(ib->function.class_code, 0x020700U);
  EXPECT_EQ(ib->function.kind, DeviceKind::kNic);
  // A root-complex integrated endpoint has no link.
  EXPECT_FALSE(find(capture, "0000:48:00.0")->function.link.has_value());
}

TEST(LspciFixtures, PartialCaptureSaysThePathIsUnknown) {
  const LspciCapture capture = parse_ok(read_capture(kEscGpu41));
  ASSERT_EQ(capture.devices.size(), 1U);
  const LspciDevice& gpu = capture.devices.front();
  EXPECT_FALSE(gpu.function.parent.has_value());
  EXPECT_EQ(gpu.placement_note, "capture has no bridge for bus 41; its path is unknown");
  EXPECT_EQ(gpu.function.link->negotiated().value(), state(PcieGen::kGen1, 16));
}

TEST(LspciSpeed, EverySpeedLspciPrints) {
  const std::vector<std::pair<std::string, PcieGen>> speeds = {
      {"2.5GT/s", PcieGen::kGen1}, {"5GT/s", PcieGen::kGen2},  {"8GT/s", PcieGen::kGen3},   {"16GT/s", PcieGen::kGen4},
      {"32GT/s", PcieGen::kGen5},  {"64GT/s", PcieGen::kGen6}, {"128GT/s", PcieGen::kGen7},
  };
  for (const auto& [text, gen] : speeds) {
    const auto parsed = parse_lspci_speed(text);
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(parsed.value(), gen) << text;
    // And inside a block, with each annotation.
    for (const std::string annotation : {"", " (ok)", " (downgraded)", " (strange)", " (overdriven)"}) {
      const auto capture = parse_ok(gpu_block("01:00.0", "Speed " + text + annotation + ", Width x8" + annotation));
      EXPECT_EQ(capture.devices.front().function.link->negotiated().value(), state(gen, 8)) << text << annotation;
    }
  }
}

TEST(LspciSpeed, UnknownAndOtherSpellingsAreErrorsQuotingTheText) {
  for (const std::string text : {"unknown", "Unknown"}) {
    const auto parsed = parse_lspci_speed(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().message, "speed '" + text + "': lspci could not decode the link speed");
  }
  for (const std::string text : {"2.5 GT/s", "16.0GT/s", "17GT/s", "", "16gt/s", "8Gb/s"}) {
    const auto parsed = parse_lspci_speed(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_THAT(parsed.error().message, HasSubstr("'" + text + "'"));
  }
  const auto capture = parse_ok(gpu_block("01:00.0", "Speed unknown, Width x16"));
  const PortLinkReading& link = *capture.devices.front().function.link;
  ASSERT_FALSE(link.current_speed.ok());
  EXPECT_EQ(link.current_speed.error().message, "LnkSta speed 'unknown': lspci could not decode the link speed");
  EXPECT_EQ(link.current_width.value(), 16) << "a known width survives an unknown speed";
}

TEST(LspciWidth, ValidWidthsAndErrors) {
  for (int lanes : {1, 2, 4, 8, 12, 16, 32}) EXPECT_EQ(parse_lspci_width("x" + std::to_string(lanes)).value(), lanes);
  EXPECT_EQ(parse_lspci_width("x0").error().message, "width 'x0': the link is down");
  for (const std::string text : {"x3", "x64", "x-1", "16", "x", "", "x16x", "x99999999999"}) {
    const auto parsed = parse_lspci_width(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_THAT(parsed.error().message, HasSubstr("'" + text + "'"));
  }
}

TEST(LspciFormat, TabsAndSpacesReadTheSame) {
  const auto tabs = parse_ok(gpu_block("01:00.0", "Speed 8GT/s, Width x8", "\t"));
  const auto spaces = parse_ok(gpu_block("01:00.0", "Speed 8GT/s, Width x8", "        "));
  const auto four = parse_ok(gpu_block("01:00.0", "Speed 8GT/s, Width x8", "    "));
  for (const LspciCapture* capture : {&tabs, &spaces, &four}) {
    ASSERT_EQ(capture->devices.size(), 1U);
    const PciFunction& f = capture->devices.front().function;
    EXPECT_EQ(f.link->capable().value(), state(PcieGen::kGen4, 16));
    EXPECT_EQ(f.link->negotiated().value(), state(PcieGen::kGen3, 8));
    EXPECT_EQ(f.numa_node.value(), 0);
    EXPECT_EQ(f.kind, DeviceKind::kGpu);
    EXPECT_EQ(capture->skipped_lines, 0U);
  }
}

TEST(LspciFormat, CarriageReturnsAndAnIndentedMarkdownCodeBlock) {
  std::string text = gpu_block("01:00.0", "Speed 8GT/s, Width x16");
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(parse_ok(crlf).devices.front().function.link->negotiated().value(), state(PcieGen::kGen3, 16));

  // A markdown code block indented by four spaces: the header is indented too.
  std::string indented;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    indented += "    " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  EXPECT_EQ(parse_ok(indented).devices.front().function.link->negotiated().value(), state(PcieGen::kGen3, 16));
}

TEST(LspciFormat, PciutilsBefore36PrintsFlagsOnTheLnkStaLine) {
  BlockSpec spec;
  spec.header =
      "0000:03:00.0 Ethernet controller [0200]: Intel Corporation I350 Gigabit Network Connection [8086:1521]";
  spec.express = "Endpoint";
  spec.lnkcap = "Port #0, Speed 5GT/s, Width x4, ASPM L0s L1, Exit Latency L0s <4us, L1 <32us";
  spec.lnksta = "Speed 5GT/s, Width x1, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-";
  const auto capture = parse_ok(render(spec));
  const PciFunction& f = capture.devices.front().function;
  EXPECT_EQ(f.link->negotiated().value(), state(PcieGen::kGen2, 1));
  EXPECT_EQ(f.vendor_id, 0x8086);
  EXPECT_EQ(f.device_id, 0x1521);
  EXPECT_EQ(f.kind, DeviceKind::kNic);
}

TEST(LspciFormat, DomainsKeepTheirDigits) {
  const auto wide = parse_ok(gpu_block("10000:01:00.0", "Speed 16GT/s, Width x16"));
  EXPECT_EQ(wide.devices.front().function.bdf.domain, 0x10000U);
  const auto one = parse_ok(gpu_block("0001:01:00.0", "Speed 16GT/s, Width x16"));
  EXPECT_EQ(one.devices.front().function.bdf, bdf("0001:01:00.0"));
}

TEST(LspciHeader, VendorsClassesAndVirtualFunctions) {
  BlockSpec spec;
  spec.express = "Endpoint";
  spec.lnkcap = "Port #0, Speed 16GT/s, Width x16";
  spec.lnksta = "Speed 16GT/s, Width x16";
  spec.header = "01:00.0 Frobnicator: Acme Widgets Ltd Thing (rev 01)";
  const auto unknown = parse_ok(render(spec));
  const LspciDevice& acme = unknown.devices.front();
  EXPECT_EQ(acme.function.vendor_id, 0);
  EXPECT_EQ(acme.function.class_code, 0U);
  EXPECT_FALSE(acme.vendor_known);
  EXPECT_FALSE(acme.class_known);
  EXPECT_THAT(acme.notes, ::testing::Contains(HasSubstr("class 'Frobnicator' is not one pcieval knows")));
  EXPECT_THAT(acme.notes, ::testing::Contains(HasSubstr("vendor of 'Acme Widgets Ltd Thing (rev 01)'")));

  spec.header = "01:00.0 Class 0b40: Advanced Micro Devices, Inc. [AMD/ATI] Device 74a1";
  const auto numbered = parse_ok(render(spec));
  EXPECT_EQ(numbered.devices.front().function.class_code, 0x0b4000U);
  EXPECT_EQ(numbered.devices.front().function.vendor_id, 0x1002) << "[AMD/ATI], not [AMD]";

  spec.header = "21:00.2 Ethernet controller: Mellanox Technologies ConnectX Family mlx5Gen Virtual Function";
  EXPECT_TRUE(parse_ok(render(spec)).devices.front().function.is_virtual_function);

  spec.header = "c1:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 PCIe] [10de:2331] (rev a1)";
  const auto h100 = parse_ok(render(spec));
  EXPECT_EQ(h100.devices.front().function.device_id, 0x2331);
  EXPECT_EQ(h100.devices.front().function.kind, DeviceKind::kGpu);
  EXPECT_THAT(h100.devices.front().notes, IsEmpty());
}

TEST(LspciExpress, PortTypesDecideTheRole) {
  const std::vector<std::tuple<std::string, PortRole, bool>> types = {
      {"Root Port (Slot+)", PortRole::kRootPort, true},
      {"Upstream Port", PortRole::kUpstreamPort, true},
      {"Downstream Port (Slot-)", PortRole::kDownstreamPort, true},
      {"Endpoint", PortRole::kEndpoint, true},
      {"Legacy Endpoint", PortRole::kEndpoint, true},
      {"PCI-Express to PCI/PCI-X Bridge", PortRole::kUpstreamPort, true},
      {"PCI/PCI-X to PCI-Express Bridge", PortRole::kDownstreamPort, true},
      {"Root Complex Integrated Endpoint", PortRole::kEndpoint, false},
      {"Root Complex Event Collector", PortRole::kEndpoint, false},
  };
  for (const auto& [type, role, has_link] : types) {
    const auto capture = parse_ok(bridge_block("00:01.1", type, "primary=00, secondary=01, subordinate=01"));
    const LspciDevice& device = capture.devices.front();
    EXPECT_TRUE(device.role_known) << type;
    EXPECT_EQ(device.function.role, role) << type;
    EXPECT_EQ(device.function.link.has_value(), has_link) << type;
  }
  const auto odd = parse_ok(bridge_block("00:01.1", "Unknown type 11", "primary=00, secondary=01, subordinate=01"));
  EXPECT_FALSE(odd.devices.front().role_known);
  EXPECT_THAT(odd.devices.front().notes, ::testing::Contains(HasSubstr("'Unknown type 11' is not known")));
}

TEST(LspciBlocks, AccessDeniedNotRespondingAndCutShort) {
  const std::string header = "01:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev a1)\n";
  const auto denied = parse_ok(header + "\tStatus: Cap+ 66MHz-\n\tCapabilities: <access denied>\n");
  const auto& denied_link = denied.devices.front().function.link;
  ASSERT_TRUE(denied_link.has_value());
  EXPECT_THAT(denied_link->current_speed.error().message, HasSubstr("run it as root"));

  const auto gone =
      parse_ok("01:00.0 3D controller: NVIDIA Corporation GA100 (rev ff)\n\t!!! Unknown header type 7f\n");
  EXPECT_THAT(gone.devices.front().function.link->max_width.error().message, HasSubstr("not responding"));

  // Cut after LnkCap: the negotiated half is missing, the capable half known.
  std::string cut = gpu_block("01:00.0", "Speed 16GT/s, Width x16");
  cut = cut.substr(0, cut.find("LnkSta"));
  const auto truncated = parse_ok(cut);
  const PortLinkReading& link = *truncated.devices.front().function.link;
  EXPECT_EQ(link.capable().value(), state(PcieGen::kGen4, 16));
  EXPECT_THAT(link.current_speed.error().message, HasSubstr("no LnkSta line"));

  // Cut before the capabilities of a function that lists some.
  const auto early = parse_ok(header + "\tStatus: Cap+ 66MHz-\n\tNUMA node: 1\n");
  EXPECT_THAT(early.devices.front().function.link->max_speed.error().message, HasSubstr("ends before its capab"));
  // A conventional PCI function: capabilities, none of them Express.
  const auto pci = parse_ok(header + "\tStatus: Cap+\n\tCapabilities: [40] Power Management version 3\n");
  EXPECT_FALSE(pci.devices.front().function.link.has_value());
}

TEST(LspciBlocks, NumaNodeReadOrNot) {
  EXPECT_EQ(parse_ok(gpu_block("01:00.0", "Speed 16GT/s, Width x16")).devices.front().function.numa_node.value(), 0);
  BlockSpec spec;
  spec.header = "01:00.0 Ethernet controller: Intel Corporation Ethernet Controller X710";
  spec.details = {"NUMA node: banana"};
  const auto bad = parse_ok(render(spec));
  EXPECT_EQ(bad.devices.front().function.numa_node.error().message, "unrecognised NUMA node 'banana'");
  spec.details = {};
  EXPECT_THAT(parse_ok(render(spec)).devices.front().function.numa_node.error().message, HasSubstr("no NUMA node"));
}

TEST(LspciInput, NoDeviceBlockIsAnErrorNamingTheSource) {
  for (const std::string text : {"", "\n\n", "hello world\n", "{\"schema_version\": \"1.0.0\"}", "\t\tLnkSta: x\n"}) {
    const auto parsed = parse_lspci(text, "ticket.txt");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().message, "no lspci -vv device blocks found in ticket.txt");
    EXPECT_FALSE(looks_like_lspci_vv(text));
  }
  const std::string plain =
      "00:00.0 Host bridge: Intel Corporation Device 09a2 (rev 04)\n"
      "01:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev a1)\n";
  const auto parsed = parse_lspci(plain, "lspci.txt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.error().message, HasSubstr("(2 device lines without details: capture with lspci -vv"));
  EXPECT_FALSE(looks_like_lspci_vv(plain));
  EXPECT_TRUE(looks_like_lspci_vv(read_capture(kEscFull)));
  EXPECT_TRUE(looks_like_lspci_vv(read_capture(kIcelakePlx)));
  EXPECT_TRUE(looks_like_lspci_vv(read_capture(kEscGpu41)));
}

TEST(LspciInput, DeviceLinesWithoutDetailsInsideACaptureAreSkipped) {
  const std::string text = "02:00.0 Ethernet controller: Intel Corporation I210\n\n" +
                           gpu_block("01:00.0", "Speed 16GT/s, Width x16") + "# a comment\n$ lspci -tv\n";
  const auto capture = parse_ok(text);
  ASSERT_EQ(capture.devices.size(), 1U);
  EXPECT_EQ(capture.skipped_lines, 3U);
  EXPECT_THAT(capture.notes.front(), HasSubstr("device lines without details"));
}

}  // namespace
}  // namespace pcieval::testing
