// The evidence the reader learned in 1.3 and 1.4: what diagnose captured
// (kernel-log events, the stated link, each capture's lines) and the GPUs a
// probe could not measure (gpu_faults). Each round-trips, and each broken
// field is an error naming its JSON pointer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reader_test_util.hpp"
#include "report/results_reader.hpp"
#include "report/results_writer.hpp"
#include "report/sample_results.hpp"
#include "report/schema_validation.hpp"

namespace pcieval {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using testing::rewrite;
using Json = nlohmann::json;

Results captured_results() {
  Results results = testing::hgx_spr_results_probed();
  Evidence& evidence = results.evidence;
  CapturedEvent limited;
  limited.kind = CapturedEvent::Kind::kLinkLimited;
  limited.device = *parse_pci_address("0000:4b:00.0");
  limited.limiting_port = *parse_pci_address("0000:4a:01.0");
  limited.limited_to = LinkState{PcieGen::kGen3, 16};
  limited.capable = LinkState{PcieGen::kGen4, 16};
  limited.source = "journal.txt";
  limited.line = 12;
  limited.text = "\"pci 0000:4b:00.0: 126.016 Gb/s available PCIe bandwidth, limited by ...\"";
  CapturedEvent xid;
  xid.kind = CapturedEvent::Kind::kFellOffBus;
  xid.device = *parse_pci_address("0000:4c:00.0");
  xid.source = "stdin";
  xid.line = 40;
  evidence.captured_events = {limited, xid};
  evidence.stated_link = StatedLink{LinkState{PcieGen::kGen4, 16}, "--link gen4x16"};
  evidence.capture_lines = {CaptureLine{*parse_pci_address("0000:4b:00.0"), std::nullopt, "lspci.txt", 61}};
  for (DeviceRecord& device : evidence.devices) {
    if (device.nvml) device.nvml->host_max_gen = 4;
  }
  return results;
}

TEST(ResultsReaderTest, CapturedEvidenceRoundTrips) {
  const Results results = captured_results();
  const std::string text = results_to_json(results);
  EXPECT_THAT(testing::schema_errors(text), ::testing::IsEmpty());
  EXPECT_EQ(rewrite(text), text);
  const auto read = results_from_json(text, "results.json");
  ASSERT_TRUE(read) << read.error().message;
  const Evidence& evidence = read.value().evidence;
  ASSERT_EQ(evidence.captured_events.size(), 2u);
  EXPECT_EQ(evidence.captured_events[0].kind, CapturedEvent::Kind::kLinkLimited);
  EXPECT_EQ(evidence.captured_events[0].limited_to, (LinkState{PcieGen::kGen3, 16}));
  EXPECT_EQ(origin_of(evidence.captured_events[1]), "stdin:40");
  EXPECT_FALSE(evidence.captured_events[1].limiting_port);
  ASSERT_TRUE(evidence.stated_link);
  EXPECT_EQ(evidence.stated_link->source, "--link gen4x16");
  ASSERT_EQ(evidence.capture_lines.size(), 1u);
  EXPECT_EQ(origin_of(evidence.capture_lines[0]), "lspci.txt:61");
  const bool any_host_max = std::any_of(evidence.devices.begin(), evidence.devices.end(),
                                        [](const DeviceRecord& d) { return d.nvml && d.nvml->host_max_gen == 4; });
  EXPECT_TRUE(any_host_max);
}

TEST(ResultsReaderTest, CapturedEvidenceProblemsAreNamedByPointer) {
  Json document = Json::parse(results_to_json(captured_results()));
  Json bad_kind = document;
  bad_kind["captured_events"][0]["kind"] = "rumour";
  EXPECT_THAT(error_of(bad_kind), HasSubstr("/captured_events/0/kind"));
  Json half_state = document;
  half_state["stated_link"]["link"]["width"] = nullptr;
  EXPECT_THAT(error_of(half_state), HasSubstr("/stated_link/link"));
  Json both = document;
  both["capture_lines"][0]["measurement"] = 0;
  EXPECT_THAT(error_of(both), HasSubstr("/capture_lines/0"));
  // A 1.3 document written before these fields still reads.
  Json older = document;
  older.erase("captured_events");
  older.erase("stated_link");
  older.erase("capture_lines");
  EXPECT_EQ(error_of(older), "read");
}

Results hung_gpu_results() {
  Results results = testing::hgx_spr_results_probed();
  ProbeRun& h2d = results.evidence.probes[0];
  h2d.gpu_faults.push_back(
      {testing::bdf("0000:17:00.0"), "cudaMemcpyAsync h2d did not complete within 30 s on 0000:17:00.0", true});
  ProbeRun& sweep = results.evidence.probes[1];
  sweep.status = ProbeStatus::kFailed;
  sweep.reason = "GPU 0000:17:00.0: CUDA device 0 is not used again in this run: ...; all GPUs h2d: stuck";
  sweep.gpu_faults = {{testing::bdf("0000:17:00.0"), "CUDA device 0 is not used again in this run: ...", true}};
  sweep.only_gpu_faults = false;
  return results;
}

TEST(ResultsReaderTest, GpuFaultsRoundTrip) {
  const Results want = hung_gpu_results();
  const std::string text = results_to_json(want);
  EXPECT_EQ(rewrite(text), text);
  const auto read = results_from_json(text, "results.json");
  ASSERT_TRUE(read) << read.error().message;
  const std::vector<ProbeRun>& probes = read->evidence.probes;
  ASSERT_EQ(probes[0].gpu_faults.size(), 2u);
  EXPECT_EQ(to_string(probes[0].gpu_faults[1].gpu), "0000:17:00.0");
  EXPECT_EQ(probes[0].gpu_faults[1].error, "cudaMemcpyAsync h2d did not complete within 30 s on 0000:17:00.0");
  EXPECT_TRUE(probes[0].gpu_faults[1].retired);
  EXPECT_FALSE(probes[0].gpu_faults[0].retired);
  EXPECT_TRUE(probes[0].only_gpu_faults);
  ASSERT_EQ(probes[1].gpu_faults.size(), 1u);
  EXPECT_TRUE(probes[1].gpu_faults[0].retired);
  EXPECT_FALSE(probes[1].only_gpu_faults);
  EXPECT_TRUE(probes[2].gpu_faults.empty());
  EXPECT_FALSE(probes[2].only_gpu_faults);
}

TEST(ResultsReaderTest, GpuFaultProblemsAreNamedByPointer) {
  const auto with = [](const Json::json_pointer& where, const Json& value) {
    Json document = Json::parse(results_to_json(hung_gpu_results()));
    document[where] = value;
    return error_of(document);
  };
  EXPECT_EQ(with("/probes/0/gpu_faults/1/gpu"_json_pointer, "gpu0"),
            "results.json: /probes/0/gpu_faults/1/gpu: 'gpu0' is not a PCI address (domain:bus:device.function, such "
            "as 0000:17:00.0)");
  EXPECT_EQ(with("/probes/0/gpu_faults/1/retired"_json_pointer, "yes"),
            "results.json: /probes/0/gpu_faults/1/retired: expected true or false");
  EXPECT_EQ(with("/probes/0/gpu_faults/0/error"_json_pointer, ""),
            "results.json: /probes/0/gpu_faults/0/error: expected the error, got an empty string");
  EXPECT_EQ(with("/probes/0/gpu_faults"_json_pointer, Json::object()),
            "results.json: /probes/0/gpu_faults: expected an array");
  EXPECT_EQ(with("/probes/0/only_gpu_faults"_json_pointer, 1),
            "results.json: /probes/0/only_gpu_faults: expected true or false");
  // What no writer of pcieval produces: a verdict would rest on it.
  EXPECT_EQ(with("/probes/1/status"_json_pointer, "ran"),
            "results.json: /probes/1/gpu_faults: GPU faults on a probe whose status is ran, not failed");
  EXPECT_EQ(with("/probes/0/gpu_faults"_json_pointer, Json::array()),
            "results.json: /probes/0/only_gpu_faults: true, but gpu_faults is empty");
}

TEST(ResultsReaderTest, GpuFaultsAreReadFromVersion14On) {
  Json document = Json::parse(results_to_json(hung_gpu_results()));
  // A 1.3 document knew no GPU fault: such fields are ignored, its failed
  // probes judged as a whole, as they were then.
  document["schema_version"] = "1.3.0";
  auto read = results_from_json(document.dump(), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_TRUE(read->evidence.probes[0].gpu_faults.empty());
  EXPECT_FALSE(read->evidence.probes[0].only_gpu_faults);
  // A 1.4 document without them (written by other tools) reads as none.
  document["schema_version"] = kResultsSchemaVersion;
  for (Json& probe : document["probes"]) {
    probe.erase("gpu_faults");
    probe.erase("only_gpu_faults");
  }
  read = results_from_json(document.dump(), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_TRUE(read->evidence.probes[0].gpu_faults.empty());
  EXPECT_FALSE(read->evidence.probes[0].only_gpu_faults);
}

// The optional reference_copies (issue 17): pcieval's h2d_ce/d2h_ce beside
// the plain reference benchmark of the same run. Absent when empty, so a
// document without a reference is unchanged; present, it conforms to the
// schema and round-trips.
Results referenced_results() {
  Results results = testing::hgx_spr_results_probed();
  ReferenceCopy h2d;
  h2d.tool = "pcieval-copy-reference";
  h2d.gpu = *parse_pci_address("0000:17:00.0");
  h2d.direction = Direction::kHostToDevice;
  h2d.size_bytes = std::uint64_t{256} << 20;
  h2d.reference_median_gbps = 55.2;
  h2d.pcieval_median_gbps = 54.9;
  h2d.ratio = 54.9 / 55.2;
  ReferenceCopy d2h = h2d;
  d2h.direction = Direction::kDeviceToHost;
  d2h.reference_median_gbps = 56.1;
  d2h.pcieval_median_gbps.reset();
  d2h.ratio.reset();
  results.evidence.reference_copies = {h2d, d2h};
  return results;
}

TEST(ResultsReaderTest, ReferenceCopiesAreOptionalAndRoundTrip) {
  EXPECT_FALSE(Json::parse(results_to_json(testing::hgx_spr_results_probed())).contains("reference_copies"));
  const std::string text = results_to_json(referenced_results());
  EXPECT_THAT(testing::schema_errors(text), ::testing::IsEmpty());
  EXPECT_EQ(rewrite(text), text);
  const auto read = results_from_json(text, "results.json");
  ASSERT_TRUE(read) << read.error().message;
  const auto& copies = read.value().evidence.reference_copies;
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].direction, Direction::kHostToDevice);
  EXPECT_EQ(to_string(copies[0].gpu), "0000:17:00.0");
  EXPECT_DOUBLE_EQ(copies[0].reference_median_gbps, 55.2);
  EXPECT_DOUBLE_EQ(copies[0].ratio.value(), 54.9 / 55.2);
  EXPECT_EQ(copies[1].direction, Direction::kDeviceToHost);
  EXPECT_FALSE(copies[1].pcieval_median_gbps.has_value());
  EXPECT_FALSE(copies[1].ratio.has_value());
}

TEST(ResultsReaderTest, AReferenceCopyWithARatioButNoRateIsRejected) {
  Json document = Json::parse(results_to_json(referenced_results()));
  document["reference_copies"][1]["ratio"] = 0.98;
  EXPECT_THAT(error_of(document), HasSubstr("/reference_copies/1/ratio"));
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

// Schema 1.5: what the verdicts need to tell an emulated port from a physical
// one survives the document, so `validate` judges a guest's run the same way.
TEST(ResultsReaderEvidence, HypervisorFlagAndUpstreamIdRoundTrip) {
  Results results;
  results.evidence.host.hostname = "gpu-vm-7";
  results.evidence.host.hypervisor = true;
  DeviceRecord gpu;
  gpu.function.bdf = *parse_pci_address("0000:01:00.0");
  gpu.function.kind = DeviceKind::kGpu;
  Link link;
  link.downstream = gpu.function.bdf;
  link.upstream = *parse_pci_address("0000:00:02.0");
  link.upstream_id = PciId{0x1b36, 0x000c};
  gpu.path = {link};
  results.evidence.devices = {gpu};
  results.thresholds.defaults.assume_full_link_behind_virtual_port = false;
  const std::string text = results_to_json(results);
  EXPECT_NE(text.find("\"upstream_id\": \"1b36:000c\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"hypervisor\": true"), std::string::npos) << text;
  const auto read = results_from_json(text, "vm.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->evidence.host.hypervisor, true);
  ASSERT_EQ(read->evidence.devices.size(), 1U);
  EXPECT_EQ(read->evidence.devices[0].path[0].upstream_id, (PciId{0x1b36, 0x000c}));
  EXPECT_FALSE(read->thresholds.defaults.assume_full_link_behind_virtual_port);
  EXPECT_EQ(results_to_json(read.value()), text);
  // A malformed ID names its pointer.
  std::string broken = text;
  broken.replace(broken.find("1b36:000c"), 9, "qemu-port");
  const auto bad = results_from_json(broken, "vm.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("/devices/0/path/0/upstream_id"), std::string::npos) << bad.error().message;
}

TEST(ResultsReaderEvidence, PciIdTextIsStrict) {
  EXPECT_EQ(to_string(PciId{0x10de, 0x2335}), "10de:2335");
  EXPECT_EQ(parse_pci_id("1B36:000C").value(), (PciId{0x1b36, 0x000c}));
  for (const char* bad : {"", "1b36", "1b36:c", "1b36:000c:0", "zzzz:000c", "1b36 000c"}) {
    EXPECT_FALSE(parse_pci_id(bad)) << bad;
  }
}

}  // namespace
}  // namespace pcieval
