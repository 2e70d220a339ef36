// `nvidia-smi -q` text: fields by section path, bus ids in sysfs form, drivers
// old and new, and how busy the GPU was when it was captured.
#include "ingest/nvidia_smi.hpp"

#include <gtest/gtest.h>

#include "ingest/capture_test_util.hpp"

namespace pcieval::testing {
namespace {

const NvidiaSmiGpu* gpu_at(const NvidiaSmiCapture& capture, const std::string& bdf) {
  for (const NvidiaSmiGpu& gpu : capture.gpus) {
    if (to_string(gpu.bdf) == bdf) return &gpu;
  }
  return nullptr;
}

TEST(NvidiaSmiText, BusyFixtureReadsEveryPciField) {
  const std::string text = read_capture(kSmiBusy);
  const auto parsed = parse_nvidia_smi(text, "smi.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->gpus.size(), 4U);
  const NvidiaSmiGpu* c1 = gpu_at(*parsed, "0000:c1:00.0");
  ASSERT_NE(c1, nullptr);
  EXPECT_EQ(c1->source, "smi.txt");
  EXPECT_EQ(c1->line, line_of(text, "GPU 00000000:c1:00.0"));
  // "Current : 3" under PCIe Generation, not "Current : 16x" under Link Width.
  EXPECT_EQ(c1->link_line, line_of(text, "Current                   : 3"));
  EXPECT_EQ(c1->nvml.current_gen, 3);
  EXPECT_EQ(c1->nvml.max_gen, 4);
  EXPECT_EQ(c1->nvml.gpu_max_gen, 4);
  EXPECT_EQ(c1->nvml.host_max_gen, 5);
  EXPECT_EQ(c1->nvml.current_width, 16);
  EXPECT_EQ(c1->nvml.max_width, 16);
  EXPECT_EQ(c1->nvml.replay_counter, 212U);
  EXPECT_EQ(c1->replay_rollovers, 3U);
  EXPECT_EQ(c1->nvml.tx_kbps, 1529077U);
  EXPECT_EQ(c1->nvml.rx_kbps, 8412950U);
  EXPECT_EQ(c1->nvml.pstate, 2);
  EXPECT_EQ(c1->nvml.utilization_gpu_percent, 97);
  EXPECT_EQ(c1->nvml.name, "NVIDIA RTX 6000 Ada Generation");
  EXPECT_EQ(c1->vendor_id, 0x10de);
  EXPECT_EQ(c1->device_id, 0x26b1);
  EXPECT_FALSE(c1->nvml.under_load) << "the caller decides from captured_load";
  EXPECT_EQ(captured_load(c1->nvml), CapturedLoad::kBusy);
  // The fixture's '#' header lines are outside any GPU block.
  EXPECT_GT(parsed->skipped_lines, 0U);
}

// Modelled on a 2016 GeForce GTX TITAN Z capture (driver 369): four-digit
// domain, "Replays since reset" in lower case, no Device/Host Max, trailing
// blanks, Tx "N/A".
constexpr std::string_view kOldDriver =
    "\n==============NVSMI LOG============== \n\nDriver Version                      : 369.30 \n"
    "Attached GPUs                       : 1 \n"
    "GPU 0000:06:00.0 \n"
    "    Product Name                    : GeForce GTX TITAN Z \n"
    "    PCI \n"
    "        Bus Id                      : 0000:06:00.0 \n"
    "        GPU Link Info \n"
    "            PCIe Generation \n"
    "                Max                 : 3 \n"
    "                Current             : 2 \n"
    "            Link Width \n"
    "                Max                 : 16x \n"
    "                Current             : 8x \n"
    "        Replays since reset         : 5 \n"
    "        Tx Throughput               : N/A \n"
    "    Performance State               : P0 \n"
    "    Utilization \n"
    "        Gpu                         : 1 % \n";

TEST(NvidiaSmiText, OldDriverLayout) {
  const auto parsed = parse_nvidia_smi(kOldDriver, "old");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->gpus.size(), 1U);
  const NvidiaSmiGpu& gpu = parsed->gpus.front();
  EXPECT_EQ(to_string(gpu.bdf), "0000:06:00.0");
  EXPECT_EQ(gpu.nvml.max_gen, 3);
  EXPECT_EQ(gpu.nvml.current_gen, 2);
  EXPECT_EQ(gpu.nvml.current_width, 8);
  EXPECT_FALSE(gpu.nvml.gpu_max_gen);
  EXPECT_FALSE(gpu.nvml.host_max_gen);
  EXPECT_EQ(gpu.nvml.replay_counter, 5U);
  EXPECT_FALSE(gpu.nvml.tx_kbps);
  EXPECT_TRUE(gpu.notes.empty()) << "N/A is unknown, not unreadable: " << gpu.notes.front();
  EXPECT_EQ(gpu.nvml.name, "GeForce GTX TITAN Z");
  EXPECT_EQ(captured_load(gpu.nvml), CapturedLoad::kBusy);
  EXPECT_EQ(parsed->skipped_lines, 0U);
}

TEST(NvidiaSmiText, UnreadableValueIsANoteNotAGuess) {
  std::string text(kOldDriver);
  text.replace(text.find("16x"), 3, "sixteen");
  const auto parsed = parse_nvidia_smi(text, "bad");
  ASSERT_TRUE(parsed);
  const NvidiaSmiGpu& gpu = parsed->gpus.front();
  EXPECT_FALSE(gpu.nvml.max_width);
  ASSERT_EQ(gpu.notes.size(), 1U);
  EXPECT_NE(gpu.notes.front().find("bad:" + std::to_string(line_of(text, "sixteen"))), std::string::npos)
      << gpu.notes.front();
}

TEST(NvidiaSmiText, RepeatedGpuKeepsTheFirstBlock) {
  std::string second(kOldDriver);
  second.replace(second.find("Current             : 2"), 23, "Current             : 1");
  const auto parsed = parse_nvidia_smi(std::string(kOldDriver) + second, "twice");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->gpus.size(), 1U);
  EXPECT_EQ(parsed->gpus.front().nvml.current_gen, 2);
  ASSERT_FALSE(parsed->notes.empty());
  EXPECT_NE(parsed->notes.front().find("appears again"), std::string::npos);
}

TEST(NvidiaSmiText, PromptAndMarkdownAroundTheBlockAreSkipped) {
  const std::string text = "```\n$ nvidia-smi -q\n" + std::string(kOldDriver) + "```\n$ exit\n";
  const auto parsed = parse_nvidia_smi(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->gpus.front().nvml.current_gen, 2);
  EXPECT_EQ(parsed->skipped_lines, 4U);
}

TEST(NvidiaSmiText, NoGpuBlockIsAnError) {
  EXPECT_FALSE(parse_nvidia_smi("==============NVSMI LOG==============\nAttached GPUs : 0\n"));
  EXPECT_FALSE(parse_nvidia_smi("GPU 0: NVIDIA A100 (UUID: GPU-1234)\n")) << "nvidia-smi -L is not -q";
}

TEST(NvidiaSmiText, BusIdsInSysfsForm) {
  EXPECT_EQ(to_string(parse_nvidia_smi_bus_id("00000000:17:00.0").value()), "0000:17:00.0");
  EXPECT_EQ(to_string(parse_nvidia_smi_bus_id("00000000:C1:00.0").value()), "0000:c1:00.0");
  EXPECT_EQ(to_string(parse_nvidia_smi_bus_id("0000:06:00.0").value()), "0000:06:00.0");
  EXPECT_EQ(to_string(parse_nvidia_smi_bus_id("00000001:17:00.0").value()), "0001:17:00.0");
  EXPECT_FALSE(parse_nvidia_smi_bus_id("17:00.0"));
  EXPECT_FALSE(parse_nvidia_smi_bus_id("00000000:17:00"));
  EXPECT_FALSE(parse_nvidia_smi_bus_id("GPU-b42dd28e"));
}

TEST(NvidiaSmiText, ValueParsers) {
  EXPECT_EQ(parse_smi_generation("4"), 4);
  EXPECT_FALSE(parse_smi_generation("0"));
  EXPECT_FALSE(parse_smi_generation("N/A"));
  EXPECT_EQ(parse_smi_width("16x"), 16);
  EXPECT_FALSE(parse_smi_width("0x"));
  EXPECT_EQ(parse_smi_pstate("P8"), 8);
  EXPECT_FALSE(parse_smi_pstate("P16"));
  EXPECT_FALSE(parse_smi_pstate("Unknown"));
  EXPECT_EQ(parse_smi_percent("37 %"), 37);
  EXPECT_FALSE(parse_smi_percent("137 %"));
  EXPECT_EQ(parse_smi_kbps("567 KB/s"), 567U);
  EXPECT_FALSE(parse_smi_kbps("567 MB/s"));
  EXPECT_FALSE(parse_smi_count("-1"));
}

TEST(NvidiaSmiText, CapturedLoad) {
  NvmlGpuLink idle;
  idle.pstate = 8;
  idle.utilization_gpu_percent = 0;
  idle.tx_kbps = 412;
  idle.rx_kbps = 388;
  EXPECT_EQ(captured_load(idle), CapturedLoad::kIdle);

  NvmlGpuLink busy = idle;
  busy.pstate = 0;
  busy.utilization_gpu_percent = 55;
  EXPECT_EQ(captured_load(busy), CapturedLoad::kBusy);

  NvmlGpuLink copying = idle;  // 0 % SM but the copy engines move data
  copying.pstate = 2;
  copying.rx_kbps = 9'000'000;
  EXPECT_EQ(captured_load(copying), CapturedLoad::kBusy);

  NvmlGpuLink p0_quiet = idle;  // an idle H100 stays at P0 with driver chatter
  p0_quiet.pstate = 0;
  p0_quiet.tx_kbps = 567;
  EXPECT_EQ(captured_load(p0_quiet), CapturedLoad::kUnclear);

  NvmlGpuLink p8_busy = idle;  // a P8 GPU reporting work is not idle
  p8_busy.utilization_gpu_percent = 3;
  EXPECT_EQ(captured_load(p8_busy), CapturedLoad::kUnclear);

  NvmlGpuLink unknown;
  EXPECT_EQ(captured_load(unknown), CapturedLoad::kUnclear);
}

TEST(NvidiaSmiText, LooksLike) {
  EXPECT_TRUE(looks_like_nvidia_smi(read_capture(kSmiBusy)));
  EXPECT_TRUE(looks_like_nvidia_smi("GPU 00000000:17:00.0\n    Product Name : NVIDIA H100\n"));
  EXPECT_FALSE(looks_like_nvidia_smi("GPU 00000000:17:00.0\nProduct Name : x\n"));
  EXPECT_FALSE(looks_like_nvidia_smi(read_capture(kEscFull)));
  EXPECT_FALSE(looks_like_nvidia_smi(read_capture(kDmesgEsc)));
}

TEST(NvidiaSmiRobustness, EveryPrefixAndHostileInput) {
  const std::string text = read_capture(kSmiBusy);
  for (std::size_t size = 0; size <= text.size(); size += 7) {
    const auto parsed = parse_nvidia_smi(std::string_view(text).substr(0, size), "prefix");
    if (parsed) {
      for (const auto& gpu : parsed->gpus) {
        for (const auto& note : gpu.notes) EXPECT_TRUE(printable(note)) << note;
      }
    }
  }
  for (const std::string& input : hostile_inputs()) {
    const auto parsed = parse_nvidia_smi(input, "hostile");
    EXPECT_FALSE(parsed);
    if (!parsed) EXPECT_TRUE(printable(parsed.error().message));
  }
}

}  // namespace
}  // namespace pcieval::testing
