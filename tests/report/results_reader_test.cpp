// Reading the results document back: write -> read -> write gives the same
// text for the hand-built node of sample_results.hpp and for the examples of
// results_schema/, and every broken document is an error naming its source
// and the JSON pointer of the problem, never a crash.
#include "report/results_reader.hpp"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "reader_test_util.hpp"
#include "report/results_writer.hpp"
#include "report/sample_results.hpp"
#include "report/schema_validation.hpp"

namespace pcieval {
namespace {

using ::testing::ContainsRegex;
using testing::error_of;
using ::testing::HasSubstr;
using testing::rewrite;
using ::testing::StartsWith;
using Json = nlohmann::json;

std::string example(const std::string& name) { return testing::read_text_file(testing::results_examples_dir() / name); }

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(testing::results_examples_dir())) {
    if (testing::is_results_example(entry.path())) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string version_1_0_document() {
  return testing::read_text_file(testing::report_test_data_dir() / "pass-1gpu-l40s-genoa-1.0.0.json");
}

// Every document the tests break: the samples written once, every example,
// and a 1.0.0 document.
std::vector<std::pair<std::string, std::string>> documents() {
  std::vector<std::pair<std::string, std::string>> documents = {
      {"sample", results_to_json(testing::hgx_spr_results())},
      {"probed sample", results_to_json(testing::hgx_spr_results_probed())},
      {"1.0.0", version_1_0_document()}};
  for (const std::string& name : example_names()) documents.emplace_back(name, example(name));
  return documents;
}

Json sample() { return Json::parse(results_to_json(testing::hgx_spr_results())); }

TEST(ResultsReaderTest, SampleRoundTripsToTheSameText) {
  const std::string text = results_to_json(testing::hgx_spr_results());
  EXPECT_EQ(rewrite(text), text);
}

TEST(ResultsReaderTest, EmptyResultsRoundTrip) {
  const std::string text = results_to_json(Results{});
  EXPECT_EQ(rewrite(text), text);
}

TEST(ResultsReaderTest, EveryReadingUnknownRoundTrips) {
  Results results = testing::hgx_spr_results();
  for (DeviceRecord& record : results.evidence.devices) {
    record.function.numa_node = make_error("not read");
    record.function.local_cpulist = make_error("numa_node: wrong attribute named");
    if (record.function.link) record.function.link = PortLinkReading::unknown(make_error("Input/output error"));
    for (Link& link : record.path) link.upstream_end = PortLinkReading::unknown(make_error("not read"));
  }
  const std::string text = results_to_json(results);
  EXPECT_EQ(rewrite(text), text);
}

TEST(ResultsReaderTest, ProbedSampleRoundTripsToTheSameText) {
  const std::string text = results_to_json(testing::hgx_spr_results_probed());
  EXPECT_EQ(rewrite(text), text);
}

// Schema 1.3: what diagnose reads from captured text (a journal of the
// Ice Lake PLX A100 node and an H100 PCIe in a Gen4 Dell PowerEdge R750, as
// in tests/fixtures/captures) survives write -> read -> write.
TEST(ResultsReaderTest, ExamplesRoundTripAndKeepEveryValue) {
  ASSERT_GE(example_names().size(), 3u);
  for (const std::string& name : example_names()) {
    const std::string original = example(name);
    const std::string once = rewrite(original);
    EXPECT_EQ(rewrite(once), once) << name;
    // Hand-written layout aside, the writer gives back the same document.
    EXPECT_EQ(Json::parse(once), Json::parse(original)) << name;
    EXPECT_THAT(testing::schema_errors(once), ::testing::IsEmpty()) << name;
  }
}

TEST(ResultsReaderTest, RebuildsEvidenceVerdictsAndSummary) {
  const Results want = testing::hgx_spr_results();
  const auto read = results_from_json(results_to_json(want), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  const Results& got = read.value();
  EXPECT_EQ(got.tool.version, "0.1.0");
  EXPECT_EQ(got.evidence.host.hostname, "hgx-b07");
  EXPECT_EQ(got.evidence.topology, std::optional<std::string>("live hwloc"));
  EXPECT_FALSE(got.evidence.gpus_under_load);
  ASSERT_EQ(got.evidence.devices.size(), 5U);
  EXPECT_FALSE(got.evidence.devices[0].function.link.has_value());

  const DeviceRecord& gpu = got.evidence.devices[1];
  EXPECT_EQ(gpu.function.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.function.vendor_id, 0x10de);
  EXPECT_EQ(gpu.function.class_code, 0x030200U);
  ASSERT_EQ(gpu.path.size(), 2U);
  EXPECT_EQ(gpu.path[0].negotiated().value(), (LinkState{PcieGen::kGen1, 8}));
  EXPECT_EQ(gpu.path[1].position, LinkPosition::kUplink);
  EXPECT_EQ(gpu.path[1].upstream, testing::bdf("0000:14:01.0"));
  EXPECT_EQ(gpu.function.aer.correctable->counts.at("BadDLLP"), 41U);
  EXPECT_EQ(gpu.function.aer.correctable->total, 56U);
  EXPECT_FALSE(gpu.function.aer.nonfatal.has_value());
  ASSERT_TRUE(gpu.locality.has_value());
  EXPECT_EQ(gpu.locality->ancestor_bridges.size(), 3U);

  EXPECT_EQ(got.verdicts, want.verdicts);
  EXPECT_EQ(got.overall, Overall::kFail);
  EXPECT_EQ(got.summary, want.summary);
  EXPECT_EQ(got.evidence.notes, want.evidence.notes);
}

// Every field of the probe evidence, doubles compared exactly: a verdict
// judged again must rest on the very numbers the run measured.
TEST(ResultsReaderTest, RebuildsProbeEvidenceExactly) {
  const Results want = testing::hgx_spr_results_probed();
  const auto read = results_from_json(results_to_json(want), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  const Evidence& got = read->evidence;
  const Evidence& expected = want.evidence;

  // Whole values (the model's defaulted operator==): a field added to one of
  // these types is compared without this test naming it.
  ASSERT_TRUE(got.probe_settings.has_value());
  EXPECT_EQ(got.probe_settings, expected.probe_settings);
  EXPECT_EQ(got.probe_settings->mode, "full");

  EXPECT_EQ(got.probes, expected.probes);
  ASSERT_FALSE(got.probes.empty());
  EXPECT_FALSE(got.probes[0].gpu_faults.empty());
  EXPECT_EQ(got.measurements, expected.measurements);  // doubles exact, not near
  EXPECT_EQ(got.link_samples, expected.link_samples);
  EXPECT_EQ(got.counters, expected.counters);

  ASSERT_EQ(got.devices.size(), expected.devices.size());
  for (std::size_t i = 0; i < got.devices.size(); ++i) EXPECT_EQ(got.devices[i].nvml, expected.devices[i].nvml) << i;
}

TEST(ResultsReaderTest, DoublesThatNeedEveryDigitRoundTripExactly) {
  Results results = testing::hgx_spr_results_probed();
  Measurement& m = results.evidence.measurements[0];
  m.trials_gbps = {0.1 + 0.2, 1.0 / 3.0, 27.610000000000003, 5e-324, 1e150};
  m.stats = summarize_trials(m.trials_gbps);
  results.evidence.link_samples[0].t_s = 2.0 / 3.0;
  results.evidence.probes[0].duration_s = 123456.789012345678;
  const std::string text = results_to_json(results);
  const auto read = results_from_json(text, "results.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->evidence.measurements[0].trials_gbps, m.trials_gbps);
  EXPECT_EQ(read->evidence.measurements[0].stats.cv, m.stats.cv);
  EXPECT_EQ(read->evidence.link_samples[0].t_s, 2.0 / 3.0);
  EXPECT_EQ(read->evidence.probes[0].duration_s, 123456.789012345678);
  EXPECT_EQ(results_to_json(read.value()), text);
}

TEST(ResultsReaderTest, Version10DocumentIsReadAsNoProbesRan) {
  const auto read = results_from_json(version_1_0_document(), "old.json");
  ASSERT_TRUE(read) << read.error().message;
  const Evidence& evidence = read->evidence;
  EXPECT_FALSE(evidence.probe_settings.has_value());
  EXPECT_TRUE(evidence.probes.empty());
  EXPECT_TRUE(evidence.measurements.empty());
  EXPECT_TRUE(evidence.link_samples.empty());
  EXPECT_TRUE(evidence.counters.empty());
  ASSERT_EQ(evidence.devices.size(), 2u);
  for (const DeviceRecord& device : evidence.devices) EXPECT_FALSE(device.nvml.has_value());

  // Written again, it is a current document with the same evidence, and the
  // engine's fields null and empty.
  const Json again = Json::parse(results_to_json(read.value()));
  Json old = Json::parse(version_1_0_document());
  EXPECT_EQ(again["schema_version"], kResultsSchemaVersion);
  EXPECT_TRUE(again["probe_settings"].is_null());
  EXPECT_EQ(again["measurements"], Json::array());
  for (std::size_t i = 0; i < old["devices"].size(); ++i) old["devices"][i]["nvml"] = nullptr;
  EXPECT_EQ(again["devices"], old["devices"]);
  EXPECT_EQ(again["verdicts"], old["verdicts"]);
  EXPECT_THAT(testing::schema_errors(again.dump()), ::testing::IsEmpty());
}

TEST(ResultsReaderTest, Version10DocumentMayCarryTheNewFields) {
  Json document = Json::parse(results_to_json(testing::hgx_spr_results_probed()));
  document["schema_version"] = "1.0.3";
  const auto read = results_from_json(document.dump(), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->evidence.measurements.size(), 4u);
}

TEST(ResultsReaderTest, Version11DocumentMustCarryTheNewFields) {
  const auto without = [](const Json::json_pointer& parent, const std::string& key) {
    Json document = Json::parse(results_to_json(testing::hgx_spr_results_probed()));
    document[parent].erase(key);
    return error_of(document);
  };
  EXPECT_EQ(without(""_json_pointer, "measurements"), "results.json: /measurements: missing");
  EXPECT_EQ(without(""_json_pointer, "probe_settings"), "results.json: /probe_settings: missing");
  EXPECT_EQ(without(""_json_pointer, "counters"), "results.json: /counters: missing");
  EXPECT_EQ(without("/devices/2"_json_pointer, "nvml"), "results.json: /devices/2/nvml: missing");
  EXPECT_EQ(without("/measurements/1"_json_pointer, "verified"), "results.json: /measurements/1/verified: missing");
  EXPECT_EQ(without("/link_samples/0"_json_pointer, "speed_gts"), "results.json: /link_samples/0/speed_gts: missing");
}

// Schema 1.4: the probe's GPU faults, as the engine records a GPU of the
// sample node that hung in h2d_ce and was refused by sweep_ce afterwards.
TEST(ResultsReaderTest, ProbeEvidenceProblemsAreNamedByPointer) {
  const auto with = [](const Json::json_pointer& where, const Json& value) {
    Json document = Json::parse(results_to_json(testing::hgx_spr_results_probed()));
    document[where] = value;
    return error_of(document);
  };
  // Unknown enum values, through the model's parsers.
  EXPECT_EQ(
      with("/measurements/0/direction"_json_pointer, "sideways"),
      "results.json: /measurements/0/direction: unknown value 'sideways'; expected one of h2d, d2h, h2h, all_reduce, d2d");
  EXPECT_EQ(with("/measurements/0/method"_json_pointer, "dma"),
            "results.json: /measurements/0/method: unknown value 'dma'; expected one of ce, sm, cpu, nccl");
  EXPECT_EQ(with("/measurements/0/host_memory"_json_pointer, "Pinned"),
            "results.json: /measurements/0/host_memory: unknown value 'Pinned'; expected one of pinned, pageable");
  EXPECT_EQ(with("/measurements/3/aggregation"_json_pointer, "sum"),
            "results.json: /measurements/3/aggregation: unknown value 'sum'; expected one of alone, with_reverse, "
            "with_peers, total_over_wall_time, bus_bandwidth");
  EXPECT_EQ(with("/probes/1/status"_json_pointer, "ok"),
            "results.json: /probes/1/status: unknown value 'ok'; expected one of ran, skipped, failed");
  EXPECT_EQ(with("/link_samples/2/source"_json_pointer, "lspci"),
            "results.json: /link_samples/2/source: unknown value 'lspci'; expected one of sysfs, nvml");
  EXPECT_EQ(with("/probe_settings/mode"_json_pointer, "fast"),
            "results.json: /probe_settings/mode: unknown value 'fast'; expected one of quick, full");
  // A measurement no writer of pcieval produces.
  EXPECT_EQ(with("/measurements/0/trials_gbps"_json_pointer, Json::array()),
            "results.json: /measurements/0/trials_gbps: expected at least one trial, got none");
  EXPECT_EQ(with("/measurements/0/median_gbps"_json_pointer, 30),
            "results.json: /measurements/0/median_gbps: 30 is outside [min_gbps, max_gbps] = [27.58, 27.63]");
  EXPECT_EQ(with("/measurements/0/max_gbps"_json_pointer, 27.6),
            "results.json: /measurements/0/median_gbps: 27.61 is outside [min_gbps, max_gbps] = [27.58, 27.6]");
  EXPECT_EQ(with("/measurements/0/size_bytes"_json_pointer, 0),
            "results.json: /measurements/0/size_bytes: expected a count above 0");
  // Wrong types.
  EXPECT_EQ(with("/measurements/0/trials_gbps/2"_json_pointer, "27.6"),
            "results.json: /measurements/0/trials_gbps/2: expected a number");
  EXPECT_EQ(with("/measurements/0/cv"_json_pointer, -0.5),
            "results.json: /measurements/0/cv: expected a number >= 0, got -0.5");
  EXPECT_EQ(with("/measurements/0/host_numa_local"_json_pointer, "yes"),
            "results.json: /measurements/0/host_numa_local: expected true, false or null");
  EXPECT_EQ(with("/measurements/0/host_numa_node"_json_pointer, -1),
            "results.json: /measurements/0/host_numa_node: -1 is out of range (0 to 2147483647)");
  EXPECT_EQ(with("/measurements/0/gpus/0"_json_pointer, "gpu0"),
            "results.json: /measurements/0/gpus/0: 'gpu0' is not a PCI address (domain:bus:device.function, such as "
            "0000:17:00.0)");
  EXPECT_EQ(with("/measurements/0/verified"_json_pointer, 1),
            "results.json: /measurements/0/verified: expected true or false");
  EXPECT_EQ(with("/measurements/0/subject"_json_pointer, ""),
            "results.json: /measurements/0/subject: expected a subject, got an empty string");
  EXPECT_EQ(with("/measurements"_json_pointer, Json::object()), "results.json: /measurements: expected an array");
  EXPECT_EQ(with("/probes/0/warnings"_json_pointer, "none"), "results.json: /probes/0/warnings: expected an array");
  EXPECT_EQ(with("/probes/0/duration_s"_json_pointer, nullptr),
            "results.json: /probes/0/duration_s: expected a number");
  EXPECT_EQ(with("/probe_settings/trials"_json_pointer, 0),
            "results.json: /probe_settings/trials: 0 is out of range (1 to 2147483647)");
  EXPECT_EQ(with("/probe_settings/warmup_trials"_json_pointer, nullptr),
            "results.json: /probe_settings/warmup_trials: expected an integer");
  EXPECT_EQ(with("/probe_settings"_json_pointer, "full"), "results.json: /probe_settings: expected an object or null");
  EXPECT_EQ(with("/link_samples/0/generation"_json_pointer, 9),
            "results.json: /link_samples/0/generation: 9 is out of range (1 to 7)");
  EXPECT_EQ(with("/link_samples/0/speed_gts"_json_pointer, 16.0),
            "results.json: /link_samples/0/speed_gts: 16 GT/s is not the rate of Gen5 (32 GT/s)");
  EXPECT_EQ(with("/link_samples/0/port"_json_pointer, "17:00"),
            "results.json: /link_samples/0/port: '17:00' is not a PCI address (domain:bus:device.function, such as "
            "0000:17:00.0)");
  EXPECT_EQ(with("/counters/0/before"_json_pointer, -1),
            "results.json: /counters/0/before: expected a count (an integer >= 0)");
  EXPECT_EQ(with("/devices/1/nvml/pstate"_json_pointer, 16),
            "results.json: /devices/1/nvml/pstate: 16 is out of range (0 to 15)");
  EXPECT_EQ(with("/devices/1/nvml/current_width"_json_pointer, "8x"),
            "results.json: /devices/1/nvml/current_width: expected an integer or null");
  EXPECT_EQ(with("/devices/1/nvml"_json_pointer, Json::array()),
            "results.json: /devices/1/nvml: expected an object or null");
}

TEST(ResultsReaderTest, EveryEnumValueTheModelNamesIsRead) {
  for (const Direction direction : {Direction::kHostToDevice, Direction::kDeviceToHost, Direction::kHostToHost}) {
    for (const Aggregation aggregation :
         {Aggregation::kAlone, Aggregation::kWithReverse, Aggregation::kWithPeers, Aggregation::kTotalOverWallTime}) {
      Json document = Json::parse(results_to_json(testing::hgx_spr_results_probed()));
      document["measurements"][0]["direction"] = to_string(direction);
      document["measurements"][0]["aggregation"] = to_string(aggregation);
      const auto read = results_from_json(document.dump(), "results.json");
      ASSERT_TRUE(read) << read.error().message;
      EXPECT_EQ(read->evidence.measurements[0].direction, direction);
      EXPECT_EQ(read->evidence.measurements[0].aggregation, aggregation);
    }
  }
  for (const CopyMethod method : {CopyMethod::kCopyEngine, CopyMethod::kSmKernel, CopyMethod::kCpuThreads}) {
    Json document = Json::parse(results_to_json(testing::hgx_spr_results_probed()));
    document["measurements"][0]["method"] = to_string(method);
    document["measurements"][0]["host_memory"] = "pageable";
    const auto read = results_from_json(document.dump(), "results.json");
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(read->evidence.measurements[0].method, method);
    EXPECT_EQ(read->evidence.measurements[0].host_memory, HostMemory::kPageable);
  }
}

TEST(ResultsReaderTest, NullReadingsTakeTheirReasonFromTheUnknownList) {
  const auto read = results_from_json(results_to_json(testing::hgx_spr_results()), "results.json");
  ASSERT_TRUE(read);
  const DeviceRecord& nvme = read->evidence.devices[3];
  EXPECT_EQ(nvme.path[0].upstream_end.max_speed.error().message,
            "max_link_speed: kernel reports link speed 'Unknown speed'");
  EXPECT_EQ(nvme.path[0].upstream_end.max_width.value(), 4);
  // numa_node shows hwloc's 0, but sysfs had none: the reading stays failed.
  EXPECT_EQ(nvme.function.numa_node.error().message, "numa_node: no NUMA affinity");
  EXPECT_EQ(nvme.locality->numa_node, 0);
  EXPECT_FALSE(nvme.path[0].expected());
}

TEST(ResultsReaderTest, NullReadingWithoutAnEntryIsNotInTheDocument) {
  Json document = sample();
  document["devices"][1]["path"][1]["upstream_current"]["width"] = nullptr;
  // An entry for a longer attribute name does not explain it.
  document["devices"][1]["unknown"] = {"0000:14:01.0 current_link_widths: other"};
  const auto read = results_from_json(document.dump(), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->evidence.devices[1].path[1].upstream_end.current_width.error().message,
            "not in the results document");
}

// to_string() of an enumerator the model does not name falls back on a
// default; every other value must be one the reader knows.
TEST(ResultsReaderTest, EveryStatusAndCodeTheModelNamesIsRead) {
  for (int i = 0; i < 64; ++i) {
    const auto code = static_cast<ReasonCode>(i);
    const auto status = static_cast<VerdictStatus>(i);
    Json document = sample();
    if (!to_string(code).empty()) {
      document["verdicts"][0]["code"] = to_string(code);
      const auto read = results_from_json(document.dump(), "results.json");
      ASSERT_TRUE(read) << read.error().message;
      EXPECT_EQ(read->verdicts[0].code, code);
    }
    if (status == VerdictStatus::kInconclusive || to_string(status) != to_string(VerdictStatus::kInconclusive)) {
      document["verdicts"][0]["status"] = to_string(status);
      const auto read = results_from_json(document.dump(), "results.json");
      ASSERT_TRUE(read) << read.error().message;
      EXPECT_EQ(read->verdicts[0].status, status);
    }
  }
}

TEST(ResultsReaderTest, EveryCodeIsListedOnceAndTheListHasNoGap) {
  const std::vector<ReasonCode> codes = all_reason_codes();
  ASSERT_GE(codes.size(), 18U);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(codes[i]), i);
    EXPECT_FALSE(to_string(codes[i]).empty());
  }
  EXPECT_TRUE(to_string(static_cast<ReasonCode>(codes.size())).empty());
  Json document = sample();
  document["verdicts"][0]["code"] = "a_code_from_the_future";
  EXPECT_THAT(error_of(document), HasSubstr("unknown reason code 'a_code_from_the_future'"));
}

TEST(ResultsReaderTest, LaterMinorVersionWithNewFieldsIsRead) {
  Json document = sample();
  document["schema_version"] = "1.7.2";
  document["devices"][1]["bandwidth"] = {{"h2d_gbps", 25.1}};
  document["tool"]["build"] = "abc";
  EXPECT_EQ(error_of(document), "read");
}

TEST(ResultsReaderTest, OtherMajorVersionIsRefusedNamingIt) {
  Json document = sample();
  document["schema_version"] = "2.0.0";
  EXPECT_EQ(error_of(document),
            "results.json: /schema_version: schema version 2.0.0 is not supported: this pcieval reads 1.x (it writes " +
                std::string(kResultsSchemaVersion) + ")");
  document["schema_version"] = "0.9.1";
  EXPECT_THAT(error_of(document), HasSubstr("schema version 0.9.1 is not supported"));
  document["schema_version"] = "1.0";
  EXPECT_EQ(error_of(document), "results.json: /schema_version: '1.0' is not a schema version MAJOR.MINOR.PATCH");
  document["schema_version"] = 1;
  EXPECT_EQ(error_of(document), "results.json: /schema_version: expected a string");
}

TEST(ResultsReaderTest, WrongTypesAreNamedByPointer) {
  const auto with = [](const Json::json_pointer& where, const Json& value) {
    Json document = sample();
    document[where] = value;
    return error_of(document);
  };
  EXPECT_EQ(with("/devices/1/path/0/expected/width"_json_pointer, "16"),
            "results.json: /devices/1/path/0/expected/width: expected an integer or null");
  EXPECT_EQ(with("/devices/1/link/max/generation"_json_pointer, 9),
            "results.json: /devices/1/link/max/generation: 9 is out of range (1 to 7)");
  EXPECT_EQ(with("/devices/1/link/max/speed_gts"_json_pointer, 8.0),
            "results.json: /devices/1/link/max/speed_gts: 8 GT/s is not the rate of Gen5 (32 GT/s)");
  EXPECT_EQ(with("/devices/1/path/0/downstream_current/width"_json_pointer, 16.5),
            "results.json: /devices/1/path/0/downstream_current/width: expected an integer or null");
  EXPECT_EQ(with("/devices/1/aer/correctable/counts/RxErr"_json_pointer, -1),
            "results.json: /devices/1/aer/correctable/counts/RxErr: expected a count (an integer >= 0)");
  EXPECT_EQ(with("/devices/2/bdf"_json_pointer, "18:00"),
            "results.json: /devices/2/bdf: '18:00' is not a PCI address (domain:bus:device.function, such as "
            "0000:17:00.0)");
  EXPECT_EQ(with("/devices/2/vendor_id"_json_pointer, "15B3"),
            "results.json: /devices/2/vendor_id: expected 4 lowercase hex digits, got '15B3'");
  EXPECT_EQ(with("/devices/0/kind"_json_pointer, "fpga"),
            "results.json: /devices/0/kind: unknown value 'fpga'; expected one of gpu, nic, nvme, other");
  EXPECT_EQ(with("/verdicts/0/status"_json_pointer, "fine"),
            "results.json: /verdicts/0/status: unknown value 'fine'; expected one of pass, link_downgraded, "
            "bandwidth_low, link_errors, missing, inconclusive, misconfigured");
  EXPECT_EQ(with("/devices/4/locality"_json_pointer, "numa 1"),
            "results.json: /devices/4/locality: expected an object or null");
  EXPECT_EQ(with("/devices"_json_pointer, Json::object()), "results.json: /devices: expected an array");
  EXPECT_EQ(with("/sources/gpus_under_load"_json_pointer, "no"),
            "results.json: /sources/gpus_under_load: expected true or false");
  EXPECT_EQ(with("/notes/0"_json_pointer, 3), "results.json: /notes/0: expected a string");
  EXPECT_EQ(with("/overall"_json_pointer, "ok"),
            "results.json: /overall: unknown value 'ok'; expected one of pass, fail, inconclusive");
  EXPECT_EQ(with("/host"_json_pointer, Json::array()), "results.json: /host: expected an object");
}

TEST(ResultsReaderTest, MissingFieldsAreNamedByPointer) {
  const auto without = [](const Json::json_pointer& parent, const std::string& key) {
    Json document = sample();
    document[parent].erase(key);
    return error_of(document);
  };
  EXPECT_EQ(without(""_json_pointer, "host"), "results.json: /host: missing");
  EXPECT_EQ(without(""_json_pointer, "schema_version"), "results.json: /schema_version: missing");
  EXPECT_EQ(without("/verdicts/1"_json_pointer, "code"), "results.json: /verdicts/1/code: missing");
  EXPECT_EQ(without("/devices/3/path/0"_json_pointer, "negotiated"),
            "results.json: /devices/3/path/0/negotiated: missing");
  EXPECT_EQ(without("/devices/1/aer"_json_pointer, "fatal"), "results.json: /devices/1/aer/fatal: missing");
  EXPECT_EQ(without("/devices/4"_json_pointer, "unknown"), "results.json: /devices/4/unknown: missing");
}

TEST(ResultsReaderTest, FirstProblemInDocumentOrderIsTheOneNamed) {
  Json document = sample();
  document["devices"][1]["unknown"] = "none";
  document["devices"][1]["numa_node"] = "0";
  document["verdicts"][0]["status"] = 3;
  EXPECT_EQ(error_of(document), "results.json: /devices/1/numa_node: expected an integer or null");
}

TEST(ResultsReaderTest, NotAResultsDocument) {
  const auto error = [](std::string_view text) {
    const auto read = results_from_json(text, "in.json");
    return read ? std::string("read") : read.error().message;
  };
  EXPECT_EQ(error("[]"), "in.json: expected a JSON object (a pcieval results document)");
  EXPECT_EQ(error("null"), "in.json: expected a JSON object (a pcieval results document)");
  EXPECT_EQ(error("{}"), "in.json: /schema_version: missing");
  EXPECT_THAT(error(""), StartsWith("in.json: not valid JSON (truncated or malformed): "));
  EXPECT_THAT(error("hello"), StartsWith("in.json: not valid JSON"));
  EXPECT_THAT(error("{\"schema_version\": \"1.0.0\"} trailing"), StartsWith("in.json: not valid JSON"));
  EXPECT_THAT(error(std::string(100000, '[')), HasSubstr("nested deeper than 64 levels"));
  EXPECT_THAT(error("{\"schema_version\": \"1.0.0\", \"tool\": {}"),
              StartsWith("in.json: after /tool: not valid JSON (truncated or malformed): "));
  EXPECT_THAT(error("{\"devices\": [{\"path\": [{\"a/b~\": [1, "),
              StartsWith("in.json: /devices/0/path/0/a~1b~0/1: not valid JSON (truncated or malformed): "));
}

TEST(ResultsReaderTest, TruncatedDocumentsAreErrorsNamingWhereTheyBreakOff) {
  for (const auto& [name, text] : documents()) {
    // Up to the last byte but one: only the final newline may go unnoticed.
    for (std::size_t size = 0; size + 1 < text.size(); size += 97) {
      const auto read = results_from_json(std::string_view(text).substr(0, size), "cut.json");
      ASSERT_FALSE(read) << name << " cut at " << size;
      const std::string& message = read.error().message;
      EXPECT_THAT(message, StartsWith("cut.json: ")) << name << " cut at " << size;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      if (size > 1) EXPECT_THAT(message, ContainsRegex("^cut.json: (after )?/")) << name << " cut at " << size;
    }
  }
}

TEST(ResultsReaderTest, EveryCutOfTheSmallExampleFails) {
  const std::string text = example("pass-1gpu-l40s-genoa.json");
  for (std::size_t size = 0; size + 1 < text.size(); ++size) {
    EXPECT_FALSE(results_from_json(std::string_view(text).substr(0, size), "cut.json")) << size;
  }
}

TEST(ResultsReaderTest, MutatedDocumentsNeverCrash) {
  std::mt19937 random(20240611);
  const std::string chars = "{}[]\":,0-9.enull \x01\xff";
  for (const auto& [name, text] : documents()) {
    for (int round = 0; round < 400; ++round) {
      std::string mutated = text;
      const int edits = 1 + static_cast<int>(random() % 4);
      for (int i = 0; i < edits; ++i) {
        mutated[random() % mutated.size()] = chars[random() % chars.size()];
      }
      const auto read = results_from_json(mutated, "mutated.json");
      if (!read) EXPECT_EQ(read.error().message.find('\n'), std::string::npos) << read.error().message;
    }
  }
}

TEST(ReadResultsFileTest, ReadsAFileAndNamesItInErrors) {
  const auto dir = std::filesystem::temp_directory_path() / ("pcieval-reader-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.json").string();
  const std::string text = results_to_json(testing::hgx_spr_results());
  std::ofstream(good) << text;
  const auto read = read_results_file(good);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(results_to_json(read.value()), text);

  const std::string cut = (dir / "cut.json").string();
  std::ofstream(cut) << text.substr(0, 1000);
  const auto truncated = read_results_file(cut);
  ASSERT_FALSE(truncated);
  EXPECT_THAT(truncated.error().message, StartsWith(cut + ": /devices/"));

  const std::string missing = (dir / "missing.json").string();
  EXPECT_EQ(read_results_file(missing).error().message, "cannot open " + missing + ": No such file or directory");
  EXPECT_EQ(read_results_file(dir.string()).error().message, "cannot read " + dir.string() + ": Is a directory");

  // "-" reads standard input.
  const int saved = ::dup(STDIN_FILENO);
  const int file = ::open(good.c_str(), O_RDONLY);
  ASSERT_GE(file, 0);
  ::dup2(file, STDIN_FILENO);
  const auto from_stdin = read_results_file("-");
  ::dup2(saved, STDIN_FILENO);
  ::close(file);
  ::close(saved);
  ASSERT_TRUE(from_stdin) << from_stdin.error().message;
  EXPECT_EQ(results_to_json(from_stdin.value()), text);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pcieval
