// Peer-to-peer evidence from captured tool output (issue 28):
// p2pBandwidthLatencyTest's matrices and CAN/CANNOT lines, nvbandwidth's
// device_to_device tests, `nvidia-smi topo -p2p` matrices, and how their
// CUDA indices become addresses (never guessed).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ingest/capture_evidence.hpp"
#include "ingest/captures.hpp"
#include "ingest/nvbandwidth.hpp"
#include "ingest/nvidia_smi_topo.hpp"
#include "ingest/p2p_bandwidth_latency.hpp"
#include "ingest/tool_evidence.hpp"
#include "ingest/tool_test_util.hpp"

namespace pcieval {
namespace {

using testing::find_measurement;
using testing::read_capture;

constexpr const char* kNccl814 = "p2pbw_nccl814_6gpu_p2p_enabled_slower.txt";
constexpr const char* kTopoAllOk = "topo_p2p_r_genoa_8gpu_all_ok.txt";
constexpr const char* kTopoCns = "topo_p2p_rw_2gpu_blackwell_phb_cns.txt";

std::string read_corpus(const std::string& name) {
  std::ifstream in(testing::corpus_path(name), std::ios::binary);
  if (!in) return {};
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::size_t count_probe(const ToolCapture& capture, const std::string& probe) {
  return static_cast<std::size_t>(
      std::count_if(capture.measurements.begin(), capture.measurements.end(),
                    [&](const ToolMeasurement& m) { return m.measurement.probe == probe; }));
}

// A two-GPU run pasted with its command line, device lines, one pair that
// cannot reach its peer one way, and all four bandwidth matrices.
const std::string kTwoGpus =
    "$ ./p2pBandwidthLatencyTest\n"
    "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
    "Device: 0, NVIDIA A100 80GB PCIe, pciBusID: 1, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 1, NVIDIA A100 80GB PCIe, pciBusID: 23, pciDeviceID: 0, pciDomainID:0\n"
    "Device=0 CAN Access Peer Device=1\n"
    "Device=1 CANNOT Access Peer Device=0\n"
    "P2P Connectivity Matrix\n"
    "     D\\D     0     1\n"
    "     0\t     1     1\n"
    "     1\t     0     1\n"
    "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
    "   D\\D     0      1 \n"
    "     0 1528.52  18.91 \n"
    "     1  18.95 1534.83 \n"
    "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
    "   D\\D     0      1 \n"
    "     0 1529.61  24.79 \n"
    "     1  18.93 1532.59 \n"
    "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
    "   D\\D     0      1 \n"
    "     0 1543.06  20.17 \n"
    "     1  20.25 1545.25 \n"
    "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n"
    "   D\\D     0      1 \n"
    "     0 1543.47  43.41 \n"
    "     1  20.23 1545.46 \n"
    "P2P=Disabled Latency Matrix (us)\n"
    "   GPU     0      1 \n"
    "     0   2.56  16.05 \n"
    "     1  14.89   2.58 \n"
    "\n"
    "   CPU     0      1 \n"
    "     0   2.61   7.27 \n"
    "     1   7.03   2.58 \n";

TEST(P2pBandwidthLatencyTest, ReadsDevicesAccessAndMatrices) {
  const auto parsed = parse_p2p_bandwidth_latency_test(kTwoGpus, "a100.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->tool, "p2pBandwidthLatencyTest");
  ASSERT_EQ(parsed->gpu_addresses.size(), 2u);
  EXPECT_EQ(to_string(parsed->gpu_addresses.at(1)), "0000:23:00.0");  // pciBusID is hex

  ASSERT_EQ(parsed->peer_status.size(), 2u);
  EXPECT_EQ(parsed->peer_status[0].status, "ok");
  EXPECT_EQ(parsed->peer_status[0].capability, PeerCapability::kAccess);
  EXPECT_EQ(parsed->peer_status[0].status_from, "p2pBandwidthLatencyTest");
  EXPECT_EQ(parsed->peer_status[1].gpu_index, 1);
  EXPECT_EQ(parsed->peer_status[1].status, "not_supported");
  EXPECT_EQ(parsed->peer_status[1].line, 6u);

  const ToolMeasurement* write = find_measurement(*parsed, "p2p_write_ce", "0000:01:00.0->0000:23:00.0");
  ASSERT_NE(write, nullptr);
  const Measurement& m = write->measurement;
  EXPECT_EQ(m.direction, Direction::kDeviceToDevice);
  EXPECT_EQ(m.method, CopyMethod::kCopyEngine);
  EXPECT_EQ(m.aggregation, Aggregation::kAlone);
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(to_string(m.gpus[0]), "0000:01:00.0");
  EXPECT_EQ(to_string(m.gpus[1]), "0000:23:00.0");
  EXPECT_DOUBLE_EQ(m.stats.median_gbps, 24.79);
  ASSERT_EQ(m.trials_gbps.size(), 1u);
  EXPECT_FALSE(m.verified);
  EXPECT_EQ(m.size_bytes, 160000000u);  // 40000000 ints
  EXPECT_EQ(write->line, 17u);

  // GPU 1 CANNOT reach GPU 0: its P2P=Enabled cells are staged copies, not
  // peer writes, and are not read as such.
  EXPECT_EQ(find_measurement(*parsed, "p2p_write_ce", "0000:23:00.0->0000:01:00.0"), nullptr);
  const ToolMeasurement* staged = find_measurement(*parsed, "p2p_staged_ce", "0000:23:00.0->0000:01:00.0");
  ASSERT_NE(staged, nullptr);
  EXPECT_DOUBLE_EQ(staged->measurement.stats.median_gbps, 18.95);
  bool noted = false;
  for (const auto& note : parsed->notes) noted |= note.find("1->0 CANNOT access") != std::string::npos;
  EXPECT_TRUE(noted);

  // The bidirectional matrices count both copies over their common time.
  std::size_t totals = 0;
  for (const ToolMeasurement& printed : parsed->measurements) {
    if (printed.measurement.aggregation == Aggregation::kTotalOverWallTime) ++totals;
  }
  EXPECT_EQ(totals, 3u);  // staged both ways, enabled 0->1 only
  const ToolMeasurement* bidir = nullptr;
  for (const ToolMeasurement& printed : parsed->measurements) {
    if (printed.measurement.probe == "p2p_write_ce" &&
        printed.measurement.aggregation == Aggregation::kTotalOverWallTime) {
      bidir = &printed;
    }
  }
  ASSERT_NE(bidir, nullptr);
  EXPECT_DOUBLE_EQ(bidir->measurement.stats.median_gbps, 43.41);
  // No diagonal, no latency: 2 staged + 1 write + 2 staged + 1 write.
  EXPECT_EQ(parsed->measurements.size(), 6u);
}

TEST(P2pBandwidthLatencyTest, EnabledSlowerThanDisabledWithoutDeviceLines) {
  const auto parsed = parse_p2p_bandwidth_latency_test(read_capture(kNccl814), "814.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->gpu_addresses.empty());
  EXPECT_EQ(count_probe(*parsed, "p2p_staged_ce"), 30u);
  EXPECT_EQ(count_probe(*parsed, "p2p_write_ce"), 30u);
  EXPECT_EQ(count_probe(*parsed, "p2p_read_ce"), 30u);
  // "# Without --sm_copy" is a comment, not the -sm_copy option.
  for (const ToolMeasurement& printed : parsed->measurements) {
    EXPECT_EQ(printed.measurement.method, CopyMethod::kCopyEngine);
  }
  const ToolMeasurement* write = find_measurement(*parsed, "p2p_write_ce", "GPU 4->GPU 1");
  ASSERT_NE(write, nullptr);
  EXPECT_DOUBLE_EQ(write->measurement.stats.median_gbps, 9.64);
  EXPECT_TRUE(write->measurement.gpus.empty());
  const ToolMeasurement* staged = find_measurement(*parsed, "p2p_staged_ce", "GPU 4->GPU 1");
  ASSERT_NE(staged, nullptr);
  EXPECT_DOUBLE_EQ(staged->measurement.stats.median_gbps, 22.39);
  // A read: GPU 3 read from GPU 2, so the data went 2 -> 3.
  const ToolMeasurement* read = find_measurement(*parsed, "p2p_read_ce", "GPU 2->GPU 3");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->gpu_index, 3);
  EXPECT_EQ(read->peer_index, 2);
  EXPECT_DOUBLE_EQ(read->measurement.stats.median_gbps, 10.45);
  // Every enabled copy is slower than the staged one of the same pair.
  for (const ToolMeasurement& printed : parsed->measurements) {
    if (printed.measurement.probe != "p2p_write_ce") continue;
    const ToolMeasurement* host = find_measurement(*parsed, "p2p_staged_ce", printed.measurement.subject);
    ASSERT_NE(host, nullptr);
    EXPECT_LT(printed.measurement.stats.median_gbps, host->measurement.stats.median_gbps);
  }
}

TEST(P2pBandwidthLatencyTest, EvidenceSaysTheAddressesAreUnknown) {
  Captures captures;
  const std::string text = read_capture(kNccl814);
  auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections) << sections.error().message;
  ASSERT_EQ(sections->size(), 1u);
  EXPECT_EQ(sections->front().format, CaptureFormat::kP2pBandwidthLatencyTest);
  ASSERT_TRUE(add_capture(text, "814.txt", sections.value(), captures));
  const Evidence evidence = evidence_from_captures(std::move(captures));
  EXPECT_EQ(evidence.measurements.size(), 90u);
  EXPECT_EQ(evidence.capture_lines.size(), 90u);
  bool noted = false;
  for (const auto& note : evidence.notes)
    noted |= note.find("90 p2pBandwidthLatencyTest device-to-device") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(P2pBandwidthLatencyTest, AccessLinesBecomePeerStatusesWithAddresses) {
  const std::string text = read_capture("p2pbw_nccl257_4x1080ti_cannot_across_sockets.txt");
  auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections);
  EXPECT_EQ(sections->front().format, CaptureFormat::kP2pBandwidthLatencyTest);
  Captures captures;
  ASSERT_TRUE(add_capture(text, "257.txt", sections.value(), captures));
  ASSERT_EQ(captures.tools.size(), 1u);
  EXPECT_TRUE(captures.tools[0].measurements.empty());  // no bandwidth matrix in it
  const Evidence evidence = evidence_from_captures(std::move(captures));
  ASSERT_EQ(evidence.peer_status.size(), 12u);
  std::size_t ok = 0;
  for (const PeerStatus& status : evidence.peer_status) {
    EXPECT_EQ(status.capability, PeerCapability::kAccess);
    const bool same_socket = (status.gpu.bus < 0x80) == (status.peer.bus < 0x80);
    EXPECT_EQ(status.ok(), same_socket) << to_string(status.gpu) << " " << to_string(status.peer);
    if (!status.ok()) EXPECT_EQ(status.status, "not_supported");
    ok += status.ok();
  }
  EXPECT_EQ(ok, 4u);
  EXPECT_EQ(to_string(evidence.peer_status[2].peer), "0000:83:00.0");
}

TEST(P2pBandwidthLatencyTest, SmCopyAndElementsFromTheCommandLine) {
  const std::string text =
      "$ ./p2pBandwidthLatencyTest -sm_copy -numElems=1000000\n"
      "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
      "   D\\D     0      1\n     0 500.00  20.00\n     1  21.00 500.00\n";
  const auto parsed = parse_p2p_bandwidth_latency_test(text);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->measurements.size(), 2u);
  EXPECT_EQ(parsed->measurements[0].measurement.probe, "p2p_write_sm");
  EXPECT_EQ(parsed->measurements[0].measurement.method, CopyMethod::kSmKernel);
  EXPECT_EQ(parsed->measurements[0].measurement.size_bytes, 4000000u);
  EXPECT_FALSE(parse_p2p_bandwidth_latency_test("nothing here\n"));
}

TEST(P2pBandwidthLatencyTest, CorpusBandwidthTestPastesReadBothTools) {
  const std::string text = read_corpus("bw_puget_wrx90_rtx6000ada_bandwidthTest_p2p.txt");
  if (text.empty()) GTEST_SKIP() << "the shared corpus is not on this machine";
  auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections);
  ASSERT_EQ(sections->size(), 1u);
  EXPECT_EQ(sections->front().format, CaptureFormat::kBandwidthTest);
  Captures captures;
  ASSERT_TRUE(add_capture(text, "puget.txt", sections.value(), captures));
  ASSERT_EQ(captures.tools.size(), 2u);
  EXPECT_EQ(captures.tools[0].tool, "bandwidthTest");
  EXPECT_NE(find_measurement(captures.tools[0], "bandwidthtest_h2d_pinned", "GPU 0"), nullptr);
  const ToolCapture& peer = captures.tools[1];
  EXPECT_EQ(peer.tool, "p2pBandwidthLatencyTest");
  // SOURCES.md section 6: uni 26.32 enabled, 22.2 disabled; bi 52.11 and 31.4.
  const ToolMeasurement* write = find_measurement(peer, "p2p_write_ce", "0000:c1:00.0->0000:c2:00.0");
  ASSERT_NE(write, nullptr);
  EXPECT_DOUBLE_EQ(write->measurement.stats.median_gbps, 26.32);
  const ToolMeasurement* staged = find_measurement(peer, "p2p_staged_ce", "0000:c2:00.0->0000:c1:00.0");
  ASSERT_NE(staged, nullptr);
  EXPECT_DOUBLE_EQ(staged->measurement.stats.median_gbps, 22.32);
  EXPECT_EQ(peer.measurements.size(), 8u);
  EXPECT_EQ(peer.peer_status.size(), 2u);

  const Evidence evidence = evidence_from_captures(std::move(captures));
  ASSERT_EQ(evidence.peer_status.size(), 2u);
  EXPECT_EQ(to_string(evidence.peer_status[0].gpu), "0000:c1:00.0");
  EXPECT_EQ(to_string(evidence.peer_status[0].peer), "0000:c2:00.0");
  EXPECT_TRUE(evidence.peer_status[0].ok());
  EXPECT_EQ(evidence.peer_status[0].source, "p2pBandwidthLatencyTest");
}

const std::string kNvbwPeer =
    "nvbandwidth Version: v0.7\n"
    "Device 0: NVIDIA RTX 6000 Ada Generation (00000000:01:00)\n"
    "Device 1: NVIDIA RTX 6000 Ada Generation (00000000:41:00)\n"
    "\n"
    "Running device_to_device_memcpy_read_ce.\n"
    "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
    "           0         1\n"
    " 0       N/A     25.10\n"
    " 1     25.40       N/A\n"
    "\n"
    "SUM device_to_device_memcpy_read_ce 50.50\n"
    "\n"
    "Running device_to_device_memcpy_write_sm.\n"
    "memcpy SM GPU(row) <- GPU(column) bandwidth (GB/s)\n"
    "           0         1\n"
    " 0      0.00     26.20\n"
    " 1     26.30      0.00\n"
    "\n"
    "SUM device_to_device_memcpy_write_sm 52.50\n"
    "\n"
    "Running device_to_device_bidirectional_memcpy_write_ce.\n"
    "memcpy CE GPU(row) <-> GPU(column) Write1 bandwidth (GB/s)\n"
    "           0         1\n"
    " 0       N/A     24.00\n"
    " 1     24.50       N/A\n"
    "\n"
    "SUM device_to_device_bidirectional_memcpy_write_ce_write1 48.50\n"
    "\n"
    "memcpy CE GPU(row) <-> GPU(column) Write2 bandwidth (GB/s)\n"
    "           0         1\n"
    " 0       N/A     23.00\n"
    " 1     23.50       N/A\n"
    "\n"
    "SUM device_to_device_bidirectional_memcpy_write_ce_write2 46.50\n"
    "\n"
    "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)\n"
    "           0         1\n"
    " 0       N/A     47.00\n"
    " 1     48.00       N/A\n"
    "\n"
    "SUM device_to_device_bidirectional_memcpy_write_ce_total 95.00\n";

TEST(NvbandwidthPeer, DeviceToDeviceTestsAreRead) {
  const auto parsed = parse_nvbandwidth(kNvbwPeer, "nvbw.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->measurements.size(), 6u);  // two per test; the diagonal and Write2/Total skipped
  // A read: row 0 read from column 1, so the data went 41 -> 01.
  const ToolMeasurement* read = find_measurement(*parsed, "p2p_read_ce", "0000:41:00.0->0000:01:00.0");
  ASSERT_NE(read, nullptr);
  ASSERT_EQ(read->measurement.gpus.size(), 2u);
  EXPECT_EQ(to_string(read->measurement.gpus[0]), "0000:01:00.0");
  EXPECT_DOUBLE_EQ(read->measurement.stats.median_gbps, 25.10);
  EXPECT_EQ(read->measurement.size_bytes, 512u << 20);
  EXPECT_EQ(read->line, 8u);
  const ToolMeasurement* sm = find_measurement(*parsed, "p2p_write_sm", "0000:41:00.0->0000:01:00.0");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->measurement.method, CopyMethod::kSmKernel);
  EXPECT_DOUBLE_EQ(sm->measurement.stats.median_gbps, 26.30);
  const ToolMeasurement* bidir = find_measurement(*parsed, "p2p_write_ce", "0000:01:00.0->0000:41:00.0");
  ASSERT_NE(bidir, nullptr);
  EXPECT_EQ(bidir->measurement.aggregation, Aggregation::kWithReverse);
  EXPECT_DOUBLE_EQ(bidir->measurement.stats.median_gbps, 24.00);
  // Nothing from the Total matrix was read.
  for (const ToolMeasurement& printed : parsed->measurements) EXPECT_LT(printed.measurement.stats.median_gbps, 40);
}

TEST(NvbandwidthPeer, JsonDeviceToDevice) {
  const auto parsed = parse_nvbandwidth_json(
      R"json({"nvbandwidth": {"bufferSize": 268435456, "testcases": [
        {"name": "device_to_device_memcpy_write_ce", "status": "Passed",
         "bandwidth_description": "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)",
         "bandwidth_matrix": [["N/A", "25.5", "24.0"], ["26.0", "N/A", "25.0"], ["9.9", "10.1", "N/A"]]}]}})json",
      "nvbw.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->measurements.size(), 6u);
  const ToolMeasurement* slow = find_measurement(*parsed, "p2p_write_ce", "GPU 2->GPU 0");
  ASSERT_NE(slow, nullptr);
  EXPECT_DOUBLE_EQ(slow->measurement.stats.median_gbps, 9.9);
  EXPECT_EQ(slow->measurement.size_bytes, 268435456u);
}

TEST(NvbandwidthPeer, CorpusReadmeReadsTheNvlinkPairs) {
  const std::string text = read_corpus("bw_nvbandwidth_readme_8gpu.txt");
  if (text.empty()) GTEST_SKIP() << "the shared corpus is not on this machine";
  const auto parsed = parse_nvbandwidth(text, "readme.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(count_probe(*parsed, "p2p_write_ce"), 56u);  // 8 x 7 pairs
  const ToolMeasurement* pair = find_measurement(*parsed, "p2p_write_ce", "GPU 6->GPU 0");
  ASSERT_NE(pair, nullptr);
  EXPECT_DOUBLE_EQ(pair->measurement.stats.median_gbps, 274.89);
  EXPECT_NE(find_measurement(*parsed, "nvbandwidth_host_to_device_memcpy_ce", "GPU 4"), nullptr);
}

TEST(NvidiaSmiTopoP2p, AllOkMatrixByIndex) {
  const auto parsed = parse_nvidia_smi_topo_p2p(read_capture(kTopoAllOk), "topo.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->peer_status.size(), 56u);
  for (const ToolPeerStatus& status : parsed->peer_status) {
    EXPECT_EQ(status.status, "ok");
    EXPECT_EQ(status.capability, PeerCapability::kRead);
    EXPECT_EQ(status.status_from, "nvidia-smi topo -p2p r");
    EXPECT_NE(status.gpu_index, status.peer_index);
  }
  // Alone the capture names no address: nothing recorded, and a note says why.
  Captures captures;
  const std::string text = read_capture(kTopoAllOk);
  auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections);
  EXPECT_EQ(sections->front().format, CaptureFormat::kNvidiaSmiTopoP2p);
  ASSERT_TRUE(add_capture(text, "topo.txt", sections.value(), captures));
  const Evidence evidence = evidence_from_captures(std::move(captures));
  EXPECT_TRUE(evidence.peer_status.empty());
  bool noted = false;
  for (const auto& note : evidence.notes)
    noted |= note.find("56 nvidia-smi topo -p2p peer statuses not recorded: they name a GPU by index only") !=
             std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(NvidiaSmiTopoP2p, ReadAndWriteMatricesWithTheirCommands) {
  const auto parsed = parse_nvidia_smi_topo_p2p(read_capture(kTopoCns), "cns.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->peer_status.size(), 4u);
  EXPECT_EQ(parsed->peer_status[0].capability, PeerCapability::kRead);
  EXPECT_EQ(parsed->peer_status[3].capability, PeerCapability::kWrite);
  EXPECT_EQ(parsed->peer_status[3].status_from, "nvidia-smi topo -p2p w");
  for (const ToolPeerStatus& status : parsed->peer_status) EXPECT_EQ(status.status, "chipset_not_supported");
}

TEST(NvidiaSmiTopoP2p, WithoutItsCommandTheCapabilityIsUnknown) {
  const std::string text = "\tGPU0\tGPU1\nGPU0\tX\tTNS\nGPU1\tTNS\tX\n";
  EXPECT_TRUE(looks_like_nvidia_smi_topo_p2p(text));
  const auto parsed = parse_nvidia_smi_topo_p2p(text);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->peer_status.empty());
  ASSERT_EQ(parsed->notes.size(), 1u);
  EXPECT_NE(parsed->notes[0].find("does not say which capability"), std::string::npos);
  // nvidia-smi topo -m is not this format.
  EXPECT_FALSE(looks_like_nvidia_smi_topo_p2p("\tGPU0\tGPU1\tCPU Affinity\nGPU0\tX\tPHB\t0-31\nGPU1\tPHB\tX\t0-31\n"));
}

TEST(NvidiaSmiTopoP2p, AddressesFromTheOtherCapturesInBusOrder) {
  Evidence evidence;
  for (const char* address : {"0000:41:00.0", "0000:01:00.0"}) {
    DeviceRecord device;
    device.function.bdf = testing::bdf(address);
    device.function.kind = DeviceKind::kGpu;
    evidence.devices.push_back(device);
  }
  const auto parsed = parse_nvidia_smi_topo_p2p(read_capture(kTopoCns), "cns.txt");
  ASSERT_TRUE(parsed);
  add_tool_captures(evidence, {parsed.value()});
  ASSERT_EQ(evidence.peer_status.size(), 4u);
  EXPECT_EQ(to_string(evidence.peer_status[0].gpu), "0000:01:00.0");
  EXPECT_EQ(to_string(evidence.peer_status[0].peer), "0000:41:00.0");
  EXPECT_EQ(evidence.peer_status[0].status, "chipset_not_supported");
}

TEST(PeerParsers, SurviveDamage) {
  testing::expect_robust([](std::string_view text) { return parse_p2p_bandwidth_latency_test(text); }, kTwoGpus);
  testing::expect_robust([](std::string_view text) { return parse_nvidia_smi_topo_p2p(text); }, read_capture(kTopoCns));
  testing::expect_robust([](std::string_view text) { return parse_nvbandwidth(text); }, kNvbwPeer);
}

}  // namespace
}  // namespace pcieval
