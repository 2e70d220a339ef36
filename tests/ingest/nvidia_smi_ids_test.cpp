// nvidia-smi's ids: a GPU is NVIDIA's by its class or product name when the
// Device Id it prints names another vendor (AWS A10G: "000000DE"), and the
// replay counters are read in both formats.
#include <gtest/gtest.h>

#include <string>

#include "ingest/capture_test_util.hpp"
#include "ingest/nvidia_smi.hpp"
#include "ingest/nvidia_smi_xml.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kG5Text = "nvsmi_aws_g5_12xlarge_4xa10g_replays.txt";
constexpr const char* kG5Xml = "nvsmi_aws_g5_xlarge_a10g_odd_device_id.xml";

bool has_note(const NvidiaSmiGpu& gpu, const std::string& part) {
  for (const auto& note : gpu.notes) {
    if (note.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(NvidiaSmiIds, TextA10gIsAnNvidiaGpuByClassAndNameWithItsReplays) {
  const std::string text = read_capture(kG5Text);
  const auto parsed = parse_nvidia_smi(text, "g5.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->gpus.size(), 4U);
  std::vector<std::uint64_t> replays;
  for (const NvidiaSmiGpu& gpu : parsed->gpus) {
    EXPECT_EQ(gpu.vendor_id, 0x10de);
    EXPECT_FALSE(gpu.device_id) << "0000 is no device id";
    EXPECT_EQ(gpu.class_code, 0x0302);
    EXPECT_TRUE(has_note(gpu, "'000000de' names vendor 00de"));
    EXPECT_TRUE(has_note(gpu, "g5.txt:" + std::to_string(gpu.line)));
    ASSERT_TRUE(gpu.nvml.replay_counter);
    replays.push_back(*gpu.nvml.replay_counter);
  }
  EXPECT_EQ(replays, (std::vector<std::uint64_t>{0, 3, 12, 0}));
}

TEST(NvidiaSmiIds, XmlA10gIsAnNvidiaGpuByName) {
  const auto parsed = parse_nvidia_smi_xml(read_capture(kG5Xml), "g5.xml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->gpus.size(), 1U);
  const NvidiaSmiGpu& gpu = parsed->gpus.front();
  EXPECT_EQ(to_string(gpu.bdf), "0000:00:1e.0");
  EXPECT_EQ(gpu.vendor_id, 0x10de);
  EXPECT_FALSE(gpu.device_id);
  EXPECT_TRUE(has_note(gpu, "by its product name 'NVIDIA A10G'"));
  EXPECT_EQ(gpu.nvml.replay_counter, 0U);
}

TEST(NvidiaSmiIds, XmlClassOfNewerDtds) {
  const auto parsed = parse_nvidia_smi_xml(
      "<?xml version=\"1.0\" ?>\n<nvidia_smi_log><gpu id=\"00000000:17:00.0\"><product_name>Some Board</product_name>"
      "<pci><pci_base_class>3</pci_base_class><pci_sub_class>2</pci_sub_class>"
      "<pci_device_id>233112AB</pci_device_id></pci></gpu></nvidia_smi_log>\n",
      "x.xml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const NvidiaSmiGpu& gpu = parsed->gpus.front();
  EXPECT_EQ(gpu.class_code, 0x0302);
  EXPECT_EQ(gpu.vendor_id, 0x10de) << "a 3D controller nvidia-smi lists is NVIDIA's";
  EXPECT_TRUE(has_note(gpu, "by its display class"));
}

TEST(NvidiaSmiIds, NeitherClassNorNameKeepsThePrintedIds) {
  const auto parsed = parse_nvidia_smi(
      "GPU 00000000:17:00.0\n"
      "    Product Name                          : Acme Accelerator\n"
      "    PCI\n"
      "        Device Id                         : 0x12341AB0\n");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const NvidiaSmiGpu& gpu = parsed->gpus.front();
  EXPECT_EQ(gpu.vendor_id, 0x1ab0);
  EXPECT_EQ(gpu.device_id, 0x1234);
  EXPECT_TRUE(gpu.notes.empty());
}

TEST(NvidiaSmiIds, ClassBytes) {
  EXPECT_EQ(parse_smi_class_byte("0x3"), 3);
  EXPECT_EQ(parse_smi_class_byte(" 02 "), 2);
  EXPECT_EQ(parse_smi_class_byte("0xff"), 0xff);
  EXPECT_FALSE(parse_smi_class_byte("0x"));
  EXPECT_FALSE(parse_smi_class_byte("0x100"));
  EXPECT_FALSE(parse_smi_class_byte("N/A"));
}

}  // namespace
}  // namespace pcieval::testing
