// Captures turned into evidence (ingest/capture_evidence.hpp): small captures,
// each modelled on a file of tests/fixtures/captures and read the way
// diagnose reads a file (split into sections, parsed, merged), with the
// paths, roles, capture lines and notes asserted.
#include "ingest/capture_evidence.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ingest/capture_test_util.hpp"
#include "ingest/captures.hpp"

namespace pcieval {
namespace {

using testing::bdf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::line_of;
using ::testing::Not;
using ::testing::StartsWith;

// The ASUS ESC8000A-E12 (2x EPYC Genoa, RTX 6000 Ada GPUs idle at Gen1):
// `sudo lspci -vv -s 40:01.1` (the Gen5 root port above GPU 41:00.0) and
// `-s 41:00.0` pasted one after the other, raw, tabs
// (lspci_esc8000a_e12_root_port_40_01_1.txt, lspci_esc8000a_e12_gpu_41_only.txt).
const std::string kEscRootPort =
    "40:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Device 14ab (prog-if 00 [Normal decode])\n"
    "\tBus: primary=40, secondary=41, subordinate=41, sec-latency=0\n"
    "\tCapabilities: [60] Express (v2) Root Port (Slot+), MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L1, Exit Latency L1 <64us\n"
    "\t\tLnkSta:\tSpeed 2.5GT/s, Width x16\n"
    "\tKernel driver in use: pcieport\n"
    "\n";
const std::string kEscGpu =
    "41:00.0 VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] (rev a1) (prog-if 00 "
    "[VGA controller])\n"
    "\tCapabilities: [60] Express (v2) Legacy Endpoint, MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1, Exit Latency L1 <64us\n"
    "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n"
    "\tKernel driver in use: nvidia\n"
    "\n";

// A Dell PowerEdge R750 (Ice Lake, Gen4 root ports) with an H100 PCIe (Gen5)
// busy in a training job: `nvidia-smi -q`, driver 535 layout, trimmed to the
// blocks pcieval reads; the host caps the link at Gen4
// (nvsmi_r750_2xh100pcie_gen5_gpus_gen4_host_busy.txt).
const std::string kR750Busy =
    "==============NVSMI LOG==============\n"
    "\n"
    "Driver Version                            : 535.183.01\n"
    "Attached GPUs                             : 1\n"
    "GPU 00000000:17:00.0\n"
    "    Product Name                          : NVIDIA H100 PCIe\n"
    "    PCI\n"
    "        Bus                               : 0x17\n"
    "        Device Id                         : 0x233110DE\n"
    "        Bus Id                            : 00000000:17:00.0\n"
    "        GPU Link Info\n"
    "            PCIe Generation\n"
    "                Max                       : 4\n"
    "                Current                   : 4\n"
    "                Device Current            : 4\n"
    "                Device Max                : 5\n"
    "                Host Max                  : 4\n"
    "            Link Width\n"
    "                Max                       : 16x\n"
    "                Current                   : 16x\n"
    "        Replays Since Reset               : 0\n"
    "        Replay Number Rollovers           : 0\n"
    "        Tx Throughput                     : 2315007 KB/s\n"
    "        Rx Throughput                     : 11890442 KB/s\n"
    "    Performance State                     : P0\n"
    "    Utilization\n"
    "        Gpu                               : 97 %\n"
    "        Memory                            : 37 %\n";

// The ESC8000A-E12's GPU 41:00.0 idle in `nvidia-smi -q` (P8, 0 %, Gen1),
// driver 550 layout (nvsmi_esc8000a_e12_4xrtx6000ada_busy_c1_gen3.txt, idle).
// Its Link Width Max reads 8x, unlike lspci's LnkCap x16: a disagreement to
// note.
const std::string kEscSmiIdle =
    "==============NVSMI LOG==============\n"
    "\n"
    "Driver Version                            : 550.127.05\n"
    "Attached GPUs                             : 1\n"
    "GPU 00000000:41:00.0\n"
    "    Product Name                          : NVIDIA RTX 6000 Ada Generation\n"
    "    PCI\n"
    "        Bus                               : 0x41\n"
    "        Device Id                         : 0x26B110DE\n"
    "        Bus Id                            : 00000000:41:00.0\n"
    "        GPU Link Info\n"
    "            PCIe Generation\n"
    "                Max                       : 4\n"
    "                Current                   : 1\n"
    "                Device Current            : 1\n"
    "                Device Max                : 4\n"
    "                Host Max                  : 5\n"
    "            Link Width\n"
    "                Max                       : 8x\n"
    "                Current                   : 16x\n"
    "        Tx Throughput                     : 0 KB/s\n"
    "        Rx Throughput                     : 0 KB/s\n"
    "    Performance State                     : P8\n"
    "    Utilization\n"
    "        Gpu                               : 0 %\n"
    "        Memory                            : 0 %\n";

// The ESC8000A-E12's `sudo dmesg` (kernel 6.8, monotonic stamps): GPU c1:00.0
// enumerated limited by its root port at 8 GT/s, one corrected AER error on
// it, a bwctrl line (dmesg_esc8000a_e12_c1_aer_corrected.txt).
const std::string kEscDmesg =
    "[    2.242101] pci 0000:c1:00.0: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at "
    "0000:c0:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n"
    "[    2.955321] pcieport 0000:c0:01.1: bwctrl: enabled with IRQ 61\n"
    "[ 3611.507113] pcieport 0000:c0:01.1: AER: Correctable error message received from 0000:c1:00.0\n"
    "[ 3611.507130] nvidia 0000:c1:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
    "[ 3611.507135] nvidia 0000:c1:00.0:   device [10de:26b1] error status/mask=00000001/0000e000\n"
    "[ 3611.507140] nvidia 0000:c1:00.0:    [ 0] RxErr                  (First)\n";

// CUDA samples bandwidthTest, quick mode, on the ESC8000A-E12's one GPU of
// the lspci above (bwtest_esc8000a_e12_rtx6000ada_quick.txt, device 0 only).
const std::string kEscBandwidthTest =
    "[CUDA Bandwidth Test] - Starting...\n"
    "Running on...\n"
    "\n"
    " Device 0: NVIDIA RTX 6000 Ada Generation\n"
    " Quick Mode\n"
    "\n"
    " Host to Device Bandwidth, 1 Device(s)\n"
    " PINNED Memory Transfers\n"
    "   Transfer Size (Bytes)        Bandwidth(GB/s)\n"
    "   32000000                     26.7\n"
    "\n"
    " Device to Host Bandwidth, 1 Device(s)\n"
    " PINNED Memory Transfers\n"
    "   Transfer Size (Bytes)        Bandwidth(GB/s)\n"
    "   32000000                     26.2\n"
    "\n"
    "Result = PASS\n";

// Reads each (name, text) as diagnose reads a file.
Captures read(const std::vector<std::pair<std::string, std::string>>& inputs) {
  Captures captures;
  for (const auto& [name, text] : inputs) {
    auto sections = split_capture_sections(text);
    if (!sections) {
      ADD_FAILURE() << name << ": " << sections.error().message;
      continue;
    }
    const Status added = add_capture(text, name, sections.value(), captures);
    EXPECT_TRUE(added.ok()) << name << ": " << (added.ok() ? "" : added.error().message);
  }
  return captures;
}

const DeviceRecord* device(const Evidence& evidence, const std::string& address) {
  const auto it = std::find_if(evidence.devices.begin(), evidence.devices.end(),
                               [&](const DeviceRecord& d) { return d.function.bdf == bdf(address); });
  return it == evidence.devices.end() ? nullptr : &*it;
}

bool cites(const Evidence& evidence, const std::string& address, const std::string& source, std::size_t line) {
  return std::any_of(evidence.capture_lines.begin(), evidence.capture_lines.end(), [&](const CaptureLine& c) {
    return c.device && *c.device == bdf(address) && c.source == source && c.line == line;
  });
}

TEST(CaptureEvidence, RootPortAndGpuGiveOnePathOfOneLink) {
  const std::string text = kEscRootPort + kEscGpu;
  const Evidence evidence = evidence_from_captures(read({{"esc.txt", text}}));

  ASSERT_EQ(evidence.devices.size(), 1U) << "the root port is no device of its own";
  const DeviceRecord& gpu = evidence.devices[0];
  EXPECT_EQ(gpu.function.bdf, bdf("0000:41:00.0"));
  EXPECT_EQ(gpu.function.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.function.role, PortRole::kEndpoint);
  ASSERT_EQ(gpu.path.size(), 1U);
  EXPECT_EQ(gpu.path[0].position, LinkPosition::kDeviceLink);
  EXPECT_EQ(gpu.path[0].upstream, bdf("0000:40:01.1"));
  EXPECT_EQ(gpu.path[0].negotiated().value(), (LinkState{PcieGen::kGen1, 16}));
  EXPECT_EQ(gpu.path[0].upstream_end.capable().value(), (LinkState{PcieGen::kGen5, 16}));

  // Each block's header line, so that a verdict names it.
  EXPECT_TRUE(cites(evidence, "0000:41:00.0", "esc.txt", line_of(text, "41:00.0 VGA")));
  EXPECT_TRUE(cites(evidence, "0000:40:01.1", "esc.txt", line_of(text, "40:01.1 PCI bridge")));

  // Captured text names no host: nothing of this machine may leak in.
  EXPECT_EQ(evidence.sysfs_root, "");
  EXPECT_FALSE(evidence.topology.has_value());
  EXPECT_FALSE(evidence.gpus_under_load);
  ASSERT_GE(evidence.notes.size(), 3U);
  EXPECT_EQ(evidence.notes[0], "diagnosed from captured text: esc.txt");
  EXPECT_THAT(evidence.notes[1], StartsWith("GPU links in captured text are taken as read without load"));
  EXPECT_THAT(evidence.notes, Contains("lspci output carries no AER counters or CPU lists: aer and cpulist are null"));
  EXPECT_TRUE(evidence.link_samples.empty());
}

TEST(CaptureEvidence, GpuWithoutItsPortHasNoPathAndSaysWhatToCapture) {
  const Evidence evidence = evidence_from_captures(read({{"gpu.txt", kEscGpu}}));
  const DeviceRecord* gpu = device(evidence, "0000:41:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_TRUE(gpu->path.empty());
  EXPECT_THAT(gpu->notes, Contains(HasSubstr("bus 41")));
  EXPECT_THAT(evidence.notes, Contains("1 device has a PCIe link but no port above it in the capture (capture `sudo "
                                       "lspci -vv` of the whole machine, not `-s` of one device)"));
}

TEST(CaptureEvidence, PathEndingAtASwitchPortSaysTheLinksAboveWereNotJudged) {
  // The Ice Lake host with a PLX switch of lspci_icelake_plx_a100_uplink_gen3_pciutils36.txt,
  // captured from one switch downstream port down: an A100 at 4c:00.0 under
  // port 4b:00.0, whose own upstream port is not in the capture.
  const std::string text =
      testing::bridge_block("4b:00.0", "Downstream Port (Slot+)", "primary=4b, secondary=4c, subordinate=4c",
                            "Port #0, Speed 16GT/s, Width x16, ASPM L1", "Speed 16GT/s, Width x16") +
      testing::gpu_block("4c:00.0", "Speed 16GT/s, Width x16");
  const Evidence evidence = evidence_from_captures(read({{"plx.txt", text}}));
  const DeviceRecord* gpu = device(evidence, "0000:4c:00.0");
  ASSERT_NE(gpu, nullptr);
  ASSERT_EQ(gpu->path.size(), 1U);
  EXPECT_EQ(gpu->path[0].upstream, bdf("0000:4b:00.0"));
  EXPECT_THAT(gpu->notes, Contains("the capture ends at 0000:4b:00.0 (a switch downstream port): links above it are "
                                   "not in the capture and were not judged"));
  // The bridge's own caveat (no port above it) goes to the evidence's notes.
  EXPECT_THAT(evidence.notes, Contains(StartsWith("0000:4b:00.0: ")));
}

TEST(CaptureEvidence, BusyNvidiaSmiGpuGivesALinkSampleUnderLoad) {
  const Evidence evidence = evidence_from_captures(read({{"r750.txt", kR750Busy}}));
  const DeviceRecord* gpu = device(evidence, "0000:17:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->function.kind, DeviceKind::kGpu);
  EXPECT_TRUE(gpu->path.empty()) << "no lspci: the path is unknown";
  ASSERT_TRUE(gpu->function.link.has_value());
  EXPECT_EQ(gpu->function.link->capable().value(), (LinkState{PcieGen::kGen4, 16}));
  ASSERT_TRUE(gpu->nvml.has_value());
  EXPECT_TRUE(gpu->nvml->under_load);
  EXPECT_THAT(gpu->notes, Contains(StartsWith("known only from nvidia-smi (r750.txt:")));
  EXPECT_THAT(gpu->notes, Contains(HasSubstr("captured the GPU busy (P0, 97 %, Tx 2315007 KB/s, Rx 11890442 KB/s)")));

  ASSERT_EQ(evidence.link_samples.size(), 1U);
  const LinkSample& sample = evidence.link_samples[0];
  EXPECT_EQ(sample.port, bdf("0000:17:00.0"));
  EXPECT_EQ(sample.source, SampleSource::kNvml);
  EXPECT_TRUE(sample.under_load);
  EXPECT_EQ(sample.speed, PcieGen::kGen4);
  EXPECT_EQ(sample.width, 16);

  EXPECT_TRUE(cites(evidence, "0000:17:00.0", "r750.txt", line_of(kR750Busy, "Current                   : 4")));
  EXPECT_THAT(evidence.notes, Contains("1 GPU link was captured busy by nvidia-smi and judged as read under load"));
  EXPECT_THAT(evidence.notes, Not(Contains(StartsWith("GPU links in captured text are taken as read without load"))))
      << "every GPU was captured busy";
}

TEST(CaptureEvidence, HostCapNoteFollowsTheGenerationTheValidatorJudgesAgainst) {
  const std::string host_cap =
      "nvidia-smi r750.txt:" + std::to_string(line_of(kR750Busy, "Current                   : 4")) +
      ": the host caps the link at Gen4 (Host Max) below the GPU's Gen5 (Device Max): judged against Gen4, not a "
      "downgrade";
  CaptureEvidenceOptions options;
  options.judged_nvml_generation = [](const NvmlGpuLink& nvml) { return nvml.host_max_gen; };
  const Evidence capped = evidence_from_captures(read({{"r750.txt", kR750Busy}}), options);
  EXPECT_THAT(device(capped, "0000:17:00.0")->notes, Contains(host_cap));

  options.judged_nvml_generation = [](const NvmlGpuLink& nvml) { return nvml.gpu_max_gen; };
  const Evidence judged_at_device_max = evidence_from_captures(read({{"r750.txt", kR750Busy}}), options);
  EXPECT_THAT(device(judged_at_device_max, "0000:17:00.0")->notes, Not(Contains(HasSubstr("the host caps"))));

  const Evidence no_rule = evidence_from_captures(read({{"r750.txt", kR750Busy}}));
  EXPECT_THAT(device(no_rule, "0000:17:00.0")->notes, Not(Contains(HasSubstr("the host caps"))));
}

TEST(CaptureEvidence, NvidiaSmiMergesIntoLspciByAddressAndTheFirstCaptureWins) {
  const Evidence evidence = evidence_from_captures(
      read({{"esc.txt", kEscRootPort + kEscGpu}, {"smi.txt", kEscSmiIdle}, {"smi-again.txt", kEscSmiIdle}}));
  ASSERT_EQ(evidence.devices.size(), 1U) << "one GPU, described three times";
  const DeviceRecord& gpu = evidence.devices[0];
  EXPECT_EQ(gpu.path.size(), 1U) << "lspci's path is kept";
  ASSERT_TRUE(gpu.nvml.has_value());
  EXPECT_FALSE(gpu.nvml->under_load);
  const std::string where = "smi.txt:" + std::to_string(line_of(kEscSmiIdle, "Current                   : 1"));
  EXPECT_THAT(gpu.notes, Contains("lspci LnkCap reads x16, nvidia-smi " + where + " Link Width Max reads x8"));
  EXPECT_THAT(gpu.notes, Contains("nvidia-smi " + where + " captured the GPU idle (P8, 0 %, Tx 0 KB/s, Rx 0 KB/s)"));
  EXPECT_THAT(gpu.notes, Contains(StartsWith("nvidia-smi smi-again.txt:")));
  EXPECT_THAT(gpu.notes, Contains(HasSubstr("also describes this GPU; kept the first capture's readings")));
  EXPECT_TRUE(evidence.link_samples.empty()) << "an idle capture is no sample under load";
  EXPECT_EQ(evidence.notes[0], "diagnosed from captured text: esc.txt, smi.txt, smi-again.txt");
  EXPECT_THAT(evidence.notes[1], StartsWith("GPU links in captured text are taken as read without load"));
}

TEST(CaptureEvidence, KernelLogEventsInTheValidatorsTerms) {
  const Evidence evidence = evidence_from_captures(read({{"dmesg.txt", kEscDmesg}}));
  EXPECT_TRUE(evidence.devices.empty());
  ASSERT_EQ(evidence.captured_events.size(), 2U) << "the bwctrl line is reported, not an event";
  const CapturedEvent& limited = evidence.captured_events[0];
  EXPECT_EQ(limited.kind, CapturedEvent::Kind::kLinkLimited);
  EXPECT_EQ(limited.device, bdf("0000:c1:00.0"));
  EXPECT_EQ(limited.limiting_port, bdf("0000:c0:01.1"));
  EXPECT_EQ(limited.source, "dmesg.txt");
  EXPECT_EQ(limited.line, 1U);
  const CapturedEvent& corrected = evidence.captured_events[1];
  EXPECT_EQ(corrected.kind, CapturedEvent::Kind::kCorrectableError);
  EXPECT_EQ(corrected.device, bdf("0000:c1:00.0"));
  // The report line that names the error, not the port's "received from" line.
  EXPECT_EQ(corrected.line, line_of(kEscDmesg, "severity=Corrected"));
  ASSERT_TRUE(corrected.time_s.has_value());
  EXPECT_NEAR(*corrected.time_s, 3611.50713, 1e-6);
  EXPECT_THAT(evidence.notes, Contains(StartsWith("dmesg.txt: 3 PCIe events in 6 lines; skipped ")));
  EXPECT_THAT(evidence.notes, Contains("dmesg.txt: 1 link bandwidth notification line (the link changed speed or "
                                       "width; GPUs do so when idle): reported, not judged"));
}

TEST(CaptureEvidence, AFileOfSeveralFormatsIsReadSectionBySectionWithItsOwnLines) {
  // A ticket paste: the ESC8000A-E12's dmesg, then its lspci
  // (mixed_esc8000a_e12_ticket_dmesg_lspci.txt).
  const std::string text = kEscDmesg + "\n" + kEscRootPort + kEscGpu;
  const Evidence evidence = evidence_from_captures(read({{"ticket.txt", text}}));
  EXPECT_EQ(evidence.notes[0], "diagnosed from captured text: ticket.txt");
  EXPECT_THAT(evidence.notes, Contains("ticket.txt holds several captures, read one by one: kernel-log from line 1, "
                                       "lspci from line " +
                                       std::to_string(line_of(text, "40:01.1 PCI bridge"))));
  EXPECT_TRUE(cites(evidence, "0000:41:00.0", "ticket.txt", line_of(text, "41:00.0 VGA")));
  EXPECT_EQ(evidence.captured_events.size(), 2U);
  ASSERT_NE(device(evidence, "0000:41:00.0"), nullptr);
}

TEST(CaptureEvidence, ToolNumbersByCudaIndexAreMatchedToTheCapturedGpusInBusOrder) {
  const Evidence evidence =
      evidence_from_captures(read({{"esc.txt", kEscRootPort + kEscGpu}, {"bwtest.txt", kEscBandwidthTest}}));
  ASSERT_EQ(evidence.measurements.size(), 2U);
  for (const Measurement& measurement : evidence.measurements) {
    EXPECT_EQ(measurement.subject, "0000:41:00.0") << measurement.probe;
  }
  EXPECT_THAT(evidence.notes, Contains(HasSubstr("bandwidthTest names GPUs by CUDA index only; matched to the 1 GPUs "
                                                 "of the other captures in PCI bus order")));
  // Each number cites its own line, by measurement index.
  std::vector<std::size_t> lines;
  for (const CaptureLine& line : evidence.capture_lines) {
    if (line.measurement) {
      EXPECT_EQ(line.source, "bwtest.txt");
      lines.push_back(line.line);
    }
  }
  EXPECT_THAT(lines, ::testing::ElementsAre(line_of(kEscBandwidthTest, "26.7"), line_of(kEscBandwidthTest, "26.2")));
}

TEST(Captures, ASectionThatDoesNotParseIsTheError) {
  // --format nvidia-smi-xml given a text that is no XML.
  Captures captures;
  const std::string text = "GPU 00000000:17:00.0\n";
  const Status added =
      add_capture(text, "smi.xml", {CaptureSection{CaptureFormat::kNvidiaSmiXml, 0, text.size(), 1}}, captures);
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(added.error().message, HasSubstr("smi.xml"));
  EXPECT_TRUE(captures.nvidia_smi.empty());
}

}  // namespace
}  // namespace pcieval
