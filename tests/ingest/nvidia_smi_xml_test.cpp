// `nvidia-smi -q -x`: the same readings as the text form, through tinyxml2,
// and documents that are broken or hostile.
#include "ingest/nvidia_smi_xml.hpp"

#include <gtest/gtest.h>

#include "ingest/capture_test_util.hpp"

namespace pcieval::testing {
namespace {

TEST(NvidiaSmiXml, IdleFixture) {
  const std::string text = read_capture(kSmiIdleXml);
  const auto parsed = parse_nvidia_smi_xml(text, "smi.xml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->gpus.size(), 4U);
  const NvidiaSmiGpu& e1 = parsed->gpus.back();
  EXPECT_EQ(to_string(e1.bdf), "0000:e1:00.0");
  EXPECT_EQ(e1.line, line_of(text, "<gpu id=\"00000000:E1:00.0\">"));
  EXPECT_EQ(e1.link_line, line_of(text, "<current_link_gen>", 3));
  EXPECT_EQ(e1.nvml.current_gen, 1);
  EXPECT_EQ(e1.nvml.max_gen, 4);
  EXPECT_EQ(e1.nvml.gpu_max_gen, 4);
  EXPECT_EQ(e1.nvml.host_max_gen, 5);
  EXPECT_EQ(e1.nvml.current_width, 16);
  EXPECT_EQ(e1.nvml.pstate, 8);
  EXPECT_EQ(e1.nvml.utilization_gpu_percent, 0);
  EXPECT_EQ(e1.nvml.tx_kbps, 455U);
  EXPECT_EQ(e1.replay_rollovers, 0U);
  EXPECT_EQ(e1.device_id, 0x26b1);
  EXPECT_EQ(captured_load(e1.nvml), CapturedLoad::kIdle);
}

// Modelled on an AWS g5 A10G capture (driver 515, DTD v11): no device or host
// generation elements, "N/A" bridge chip, a busy GPU.
constexpr std::string_view kOlderDtd = R"(<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
    <driver_version>515.105.01</driver_version>
    <gpu id="00000000:00:1E.0">
        <product_name>NVIDIA A10G</product_name>
        <pci>
            <pci_device_id>223710DE</pci_device_id>
            <pci_gpu_link_info>
                <pcie_gen>
                    <max_link_gen>4</max_link_gen>
                    <current_link_gen>4</current_link_gen>
                </pcie_gen>
                <link_widths>
                    <max_link_width>16x</max_link_width>
                    <current_link_width>8x</current_link_width>
                </link_widths>
            </pci_gpu_link_info>
            <replay_counter>N/A</replay_counter>
            <tx_util>1520000 KB/s</tx_util>
            <rx_util>N/A</rx_util>
        </pci>
        <performance_state>P0</performance_state>
        <utilization><gpu_util>88 %</gpu_util></utilization>
    </gpu>
</nvidia_smi_log>
)";

TEST(NvidiaSmiXml, OlderDtdWithoutDeviceAndHostMax) {
  const auto parsed = parse_nvidia_smi_xml(kOlderDtd, "a10g.xml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const NvidiaSmiGpu& gpu = parsed->gpus.front();
  EXPECT_EQ(to_string(gpu.bdf), "0000:00:1e.0");
  EXPECT_EQ(gpu.nvml.current_width, 8);
  EXPECT_FALSE(gpu.nvml.gpu_max_gen);
  EXPECT_FALSE(gpu.nvml.host_max_gen);
  EXPECT_FALSE(gpu.nvml.replay_counter);
  EXPECT_FALSE(gpu.nvml.rx_kbps);
  EXPECT_TRUE(gpu.notes.empty());
  EXPECT_EQ(gpu.device_id, 0x2237);
  EXPECT_EQ(captured_load(gpu.nvml), CapturedLoad::kBusy);
}

TEST(NvidiaSmiXml, UnreadableElementIsANoteWithItsLine) {
  std::string text(kOlderDtd);
  text.replace(text.find("<current_link_gen>4"), 19, "<current_link_gen>four");
  const auto parsed = parse_nvidia_smi_xml(text, "x.xml");
  ASSERT_TRUE(parsed);
  const NvidiaSmiGpu& gpu = parsed->gpus.front();
  EXPECT_FALSE(gpu.nvml.current_gen);
  ASSERT_EQ(gpu.notes.size(), 1U);
  EXPECT_NE(gpu.notes.front().find("x.xml:" + std::to_string(line_of(text, "four"))), std::string::npos)
      << gpu.notes.front();
}

TEST(NvidiaSmiXml, BrokenDocumentsAreErrorsThatSayWhere) {
  std::string truncated(kOlderDtd.substr(0, kOlderDtd.size() / 2));
  const auto cut = parse_nvidia_smi_xml(truncated, "cut.xml");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("cut.xml:"), std::string::npos) << cut.error().message;
  EXPECT_NE(cut.error().message.find("not well-formed"), std::string::npos);

  const auto other_root = parse_nvidia_smi_xml("<?xml version=\"1.0\"?><topology/>", "t.xml");
  ASSERT_FALSE(other_root);
  EXPECT_NE(other_root.error().message.find("'topology'"), std::string::npos) << other_root.error().message;

  EXPECT_FALSE(parse_nvidia_smi_xml("<nvidia_smi_log><driver_version>1</driver_version></nvidia_smi_log>"));
  EXPECT_FALSE(parse_nvidia_smi_xml("<nvidia_smi_log><gpu id=\"garbage\"/></nvidia_smi_log>"));
}

TEST(NvidiaSmiXml, HostileDocumentsNeitherCrashNorExpand) {
  // Entities: tinyxml2 expands none beyond the five predefined ones, so a
  // billion-laughs DOCTYPE stays a few hundred bytes.
  const std::string laughs =
      "<?xml version=\"1.0\"?><!DOCTYPE nvidia_smi_log [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b "
      "\"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><nvidia_smi_log><gpu id=\"00000000:01:00.0\"><product_name>&b;"
      "</product_name></gpu></nvidia_smi_log>";
  const auto parsed = parse_nvidia_smi_xml(laughs);
  if (parsed) {
    ASSERT_EQ(parsed->gpus.size(), 1U);
    EXPECT_LT(parsed->gpus.front().nvml.name.value_or("").size(), 100U);
  }
  std::string deep = "<nvidia_smi_log>";
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  EXPECT_FALSE(parse_nvidia_smi_xml(deep));
  for (const std::string& input : hostile_inputs()) EXPECT_FALSE(parse_nvidia_smi_xml(input));
  const std::string text = read_capture(kSmiIdleXml);
  // Every cut before the root's end tag is complete (a cut after it, in the
  // trailing newline, leaves a whole document).
  const std::size_t root_end = text.rfind("</nvidia_smi_log>");
  ASSERT_NE(root_end, std::string::npos);
  for (std::size_t size = 0; size < root_end + 16; size += 13) {
    const auto prefix = parse_nvidia_smi_xml(std::string_view(text).substr(0, size));
    EXPECT_FALSE(prefix) << "a cut document is not well formed at " << size;
  }
}

TEST(NvidiaSmiXml, LooksLike) {
  EXPECT_TRUE(looks_like_nvidia_smi_xml(read_capture(kSmiIdleXml)));
  EXPECT_TRUE(looks_like_nvidia_smi_xml(kOlderDtd));
  EXPECT_FALSE(looks_like_nvidia_smi_xml("<?xml version=\"1.0\"?><topology/>"));
  EXPECT_FALSE(looks_like_nvidia_smi_xml("see <nvidia_smi_log> in the ticket"));
  EXPECT_FALSE(looks_like_nvidia_smi_xml(read_capture(kSmiBusy)));
}

}  // namespace
}  // namespace pcieval::testing
