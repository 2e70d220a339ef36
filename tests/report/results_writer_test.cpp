// The results document's fields, on the hand-built Sapphire Rapids H100 node
// of sample_results.hpp.
#include "report/results_writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/sample_results.hpp"

namespace pcieval {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using Json = nlohmann::json;

Json parse(const std::string& text) { return Json::parse(text); }

const Json& device(const Json& document, const std::string& address) {
  for (const Json& d : document.at("devices")) {
    if (d.at("bdf") == address) return d;
  }
  throw std::runtime_error("no device " + address);
}

class ResultsJsonTest : public ::testing::Test {
 protected:
  Results results_ = testing::hgx_spr_results();
  Json document_ = parse(results_to_json(results_));
};

TEST_F(ResultsJsonTest, TopLevelFieldsInSchemaOrder) {
  std::vector<std::string> keys;
  const auto ordered = nlohmann::ordered_json::parse(results_to_json(results_));
  for (const auto& [key, value] : ordered.items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"schema_version", "tool",        "host",         "sources",         "devices",
                                      "probe_settings", "probes",      "measurements", "link_samples",    "counters",
                                      "thresholds",     "interrupted", "soak",         "captured_events", "stated_link",
                                      "capture_lines",  "verdicts",    "overall",      "summary",         "notes"}));
  EXPECT_EQ(document_["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(document_["tool"], (Json{{"name", "pcieval"}, {"version", "0.1.0"}}));
  EXPECT_EQ(document_["host"], (Json{{"hostname", "hgx-b07"}, {"kernel", "5.15.0-126-generic"}}));
  EXPECT_EQ(document_["sources"],
            (Json{{"sysfs_root", "/sys"}, {"topology", "live hwloc"}, {"gpus_under_load", false}}));
  EXPECT_EQ(document_["overall"], "fail");
  EXPECT_EQ(document_["summary"], results_.summary);
  EXPECT_EQ(document_["notes"], Json::array({"GPU links were read without load"}));
}

TEST_F(ResultsJsonTest, PrettyPrintedWithTwoSpacesAndTrailingNewline) {
  const std::string text = results_to_json(results_);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.substr(0, 22), "{\n  \"schema_version\": ");
}

TEST_F(ResultsJsonTest, IdsAreLowercaseHexAsLspciPrints) {
  const Json& gpu = device(document_, "0000:17:00.0");
  EXPECT_EQ(gpu["kind"], "gpu");
  EXPECT_EQ(gpu["vendor_id"], "10de");
  EXPECT_EQ(gpu["device_id"], "2331");
  EXPECT_EQ(gpu["class_code"], "030200");
  EXPECT_EQ(gpu["virtual_function"], false);
  EXPECT_EQ(device(document_, "0000:02:00.0")["class_code"], "030000");
  EXPECT_EQ(device(document_, "0000:18:00.0")["class_code"], "020700");
}

TEST_F(ResultsJsonTest, LinkStatesAreNumbers) {
  const Json& gpu = device(document_, "0000:17:00.0");
  const Json& current = gpu["link"]["current"];
  ASSERT_TRUE(current["generation"].is_number_integer());
  ASSERT_TRUE(current["speed_gts"].is_number_float());
  ASSERT_TRUE(current["width"].is_number_integer());
  EXPECT_EQ(current["generation"], 1);
  EXPECT_DOUBLE_EQ(current["speed_gts"].get<double>(), 2.5);
  EXPECT_EQ(current["width"], 8);
  EXPECT_EQ(gpu["link"]["max"], (Json{{"generation", 5}, {"speed_gts", 32.0}, {"width", 16}}));
  EXPECT_EQ(gpu["numa_node"], 0);
  EXPECT_EQ(gpu["cpulist"], "0-55,112-167");
}

TEST_F(ResultsJsonTest, PathListsEveryHopWithBothEnds) {
  const Json& path = device(document_, "0000:17:00.0")["path"];
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0]["downstream"], "0000:17:00.0");
  EXPECT_EQ(path[0]["upstream"], "0000:16:10.0");
  EXPECT_EQ(path[0]["position"], "device_link");
  EXPECT_EQ(path[0]["negotiated"]["width"], 8);
  EXPECT_EQ(path[0]["expected"], (Json{{"generation", 5}, {"speed_gts", 32.0}, {"width", 16}}));
  EXPECT_EQ(path[1]["downstream"], "0000:15:00.0");
  EXPECT_EQ(path[1]["upstream"], "0000:14:01.0");
  EXPECT_EQ(path[1]["position"], "uplink");
  EXPECT_EQ(path[1]["upstream_current"]["generation"], 5);
}

TEST_F(ResultsJsonTest, ErrorReadingIsNullAndItsReasonIsListed) {
  const Json& nvme = device(document_, "0000:3b:00.0");
  const Json& hop = nvme["path"][0];
  // Only the failed half is null: the width of the root port is still known.
  EXPECT_TRUE(hop["upstream_max"]["generation"].is_null());
  EXPECT_TRUE(hop["upstream_max"]["speed_gts"].is_null());
  EXPECT_EQ(hop["upstream_max"]["width"], 4);
  EXPECT_TRUE(hop["expected"].is_null());
  EXPECT_EQ(hop["negotiated"]["generation"], 5);
  EXPECT_THAT(nvme["unknown"], Contains("0000:3a:01.0 max_link_speed: kernel reports link speed 'Unknown speed'"));
}

TEST_F(ResultsJsonTest, NumaNodeFallsBackToHwlocAndKeepsTheSysfsReason) {
  const Json& nvme = device(document_, "0000:3b:00.0");
  EXPECT_EQ(nvme["numa_node"], 0);
  EXPECT_THAT(nvme["unknown"], Contains("0000:3b:00.0 numa_node: no NUMA affinity"));
  EXPECT_EQ(nvme["unknown"].size(), 2u);
}

TEST_F(ResultsJsonTest, UnknownNumaWithoutHwlocIsNull) {
  results_.evidence.devices[3].locality.reset();
  const Json document = parse(results_to_json(results_));
  const Json& nvme = device(document, "0000:3b:00.0");
  EXPECT_TRUE(nvme["numa_node"].is_null());
  EXPECT_EQ(nvme["cpulist"], "0-55,112-167");
  EXPECT_TRUE(nvme["locality"].is_null());
}

TEST_F(ResultsJsonTest, SameReadingOfOnePortIsListedOnce) {
  // The device's own link and path[0]'s downstream end are one port's reading.
  DeviceRecord& gpu = results_.evidence.devices[1];
  gpu.function.link->current_width = make_error("cannot read current_link_width: Input/output error");
  gpu.path[0].downstream_end.current_width = gpu.function.link->current_width;
  const Json document = parse(results_to_json(results_));
  const Json& out = device(document, "0000:17:00.0");
  EXPECT_TRUE(out["link"]["current"]["width"].is_null());
  EXPECT_EQ(out["link"]["current"]["generation"], 1);
  EXPECT_TRUE(out["path"][0]["downstream_current"]["width"].is_null());
  // The upstream end's width does not stand in for an end that did not read
  // (issue 29): the link's state is unknown.
  EXPECT_TRUE(out["path"][0]["negotiated"].is_null());
  EXPECT_EQ(out["unknown"], Json::array({"0000:17:00.0 current_link_width: cannot read current_link_width: "
                                         "Input/output error"}));
}

TEST_F(ResultsJsonTest, DeviceWithoutLinkAttributesHasNullLinkAndEmptyPath) {
  const Json& vga = device(document_, "0000:02:00.0");
  EXPECT_EQ(vga["kind"], "other");
  EXPECT_TRUE(vga["link"].is_null());
  EXPECT_EQ(vga["path"], Json::array());
  EXPECT_TRUE(vga["locality"].is_null());
  EXPECT_EQ(vga["unknown"], Json::array());
  EXPECT_EQ(vga["notes"], Json::array());
}

TEST_F(ResultsJsonTest, LocalityListsAncestorBridges) {
  const Json& locality = device(document_, "0000:17:00.0")["locality"];
  EXPECT_EQ(locality, (Json{{"numa_node", 0},
                            {"cpulist", "0-55,112-167"},
                            {"ancestor_bridges", {"0000:16:10.0", "0000:15:00.0", "0000:14:01.0"}}}));
}

TEST_F(ResultsJsonTest, AerCountersAreNumbersAndAbsentFilesAreNull) {
  const Json& aer = device(document_, "0000:17:00.0")["aer"];
  EXPECT_EQ(aer["correctable"]["counts"]["BadDLLP"], 41);
  EXPECT_EQ(aer["correctable"]["total"], 56);
  EXPECT_EQ(aer["fatal"]["counts"]["DLP"], 0);
  EXPECT_TRUE(aer["fatal"]["total"].is_null());
  EXPECT_TRUE(aer["nonfatal"].is_null());
}

TEST_F(ResultsJsonTest, VerdictsCarryStatusCodeLinkAndRemediation) {
  const Json& verdicts = document_["verdicts"];
  ASSERT_EQ(verdicts.size(), 5u);
  EXPECT_EQ(verdicts[0]["subject"], "0000:17:00.0");
  EXPECT_EQ(verdicts[0]["status"], "link_downgraded");
  EXPECT_EQ(verdicts[0]["code"], "link_width_below_expected");
  EXPECT_EQ(verdicts[0]["link"], (Json{{"downstream", "0000:17:00.0"}, {"upstream", "0000:16:10.0"}}));
  EXPECT_THAT(verdicts[0]["remediation"].get<std::string>(), HasSubstr("reseat"));
  EXPECT_TRUE(verdicts[1]["link"].is_null());
  EXPECT_EQ(verdicts[1]["remediation"], "");
  EXPECT_EQ(verdicts[4]["subject"], "node");
  EXPECT_EQ(verdicts[4]["status"], "missing");
}

TEST_F(ResultsJsonTest, TopologyNullWhenHwlocFailed) {
  results_.evidence.topology.reset();
  EXPECT_TRUE(parse(results_to_json(results_))["sources"]["topology"].is_null());
}

TEST_F(ResultsJsonTest, WiderPciDomainPrintsAllDigits) {
  results_.evidence.devices[0].function.bdf = testing::bdf("10000:01:00.0");
  EXPECT_EQ(parse(results_to_json(results_))["devices"][0]["bdf"], "10000:01:00.0");
}

TEST_F(ResultsJsonTest, InvalidUtf8IsReplacedNotThrown) {
  results_.evidence.host.hostname = "node\xff";
  std::string text;
  EXPECT_NO_THROW(text = results_to_json(results_));
  EXPECT_EQ(parse(text)["host"]["hostname"], "node\xEF\xBF\xBD");
}

TEST_F(ResultsJsonTest, WithoutProbesTheEngineFieldsAreNullAndEmpty) {
  EXPECT_TRUE(document_["probe_settings"].is_null());
  for (const char* key : {"probes", "measurements", "link_samples", "counters"}) {
    EXPECT_EQ(document_[key], Json::array()) << key;
  }
  for (const Json& d : document_["devices"]) EXPECT_TRUE(d.at("nvml").is_null()) << d["bdf"];
}

class ProbeEvidenceJsonTest : public ::testing::Test {
 protected:
  Results results_ = testing::hgx_spr_results_probed();
  Json document_ = parse(results_to_json(results_));
};

TEST_F(ProbeEvidenceJsonTest, SettingsAndProbes) {
  EXPECT_EQ(document_["probe_settings"],
            (Json{{"mode", "full"}, {"size_bytes", 268435456}, {"warmup_trials", 1}, {"trials", 5}}));
  const Json& probes = document_["probes"];
  ASSERT_EQ(probes.size(), 4u);
  EXPECT_EQ(probes[0],
            (Json{{"key", "h2d_ce"},
                  {"status", "failed"},
                  {"reason", "GPU 0000:ca:00.0: cudaSetDevice: all CUDA-capable devices are busy or unavailable"},
                  {"warnings", Json::array()},
                  {"duration_s", 1.75},
                  {"gpu_faults",
                   Json::array({Json{{"gpu", "0000:ca:00.0"},
                                     {"error", "cudaSetDevice: all CUDA-capable devices are busy or unavailable"},
                                     {"retired", false}}})},
                  {"only_gpu_faults", true}}));
  EXPECT_EQ(probes[1]["status"], "ran");
  EXPECT_EQ(probes[1]["reason"], "");
  EXPECT_EQ(probes[1]["gpu_faults"], Json::array());
  EXPECT_EQ(probes[1]["only_gpu_faults"], false);
  EXPECT_EQ(probes[2]["status"], "skipped");
  EXPECT_TRUE(probes[2]["duration_s"].is_number());
}

TEST_F(ProbeEvidenceJsonTest, MeasurementKeepsEveryTrialBesideItsStatistics) {
  std::vector<std::string> keys;
  const auto ordered = nlohmann::ordered_json::parse(results_to_json(results_));
  for (const auto& [key, value] : ordered["measurements"][0].items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"probe", "subject", "gpus", "direction", "method", "host_memory", "aggregation",
                                      "size_bytes", "bytes_per_trial", "trials_gbps", "median_gbps", "min_gbps",
                                      "max_gbps", "cv", "host_numa_node", "host_numa_local", "verified"}));
  const Json& h2d = document_["measurements"][0];
  EXPECT_EQ(h2d["probe"], "h2d_ce");
  EXPECT_EQ(h2d["subject"], "0000:17:00.0");
  EXPECT_EQ(h2d["gpus"], Json::array({"0000:17:00.0"}));
  EXPECT_EQ(h2d["direction"], "h2d");
  EXPECT_EQ(h2d["method"], "ce");
  EXPECT_EQ(h2d["host_memory"], "pinned");
  EXPECT_EQ(h2d["aggregation"], "alone");
  EXPECT_EQ(h2d["size_bytes"], 268435456);
  EXPECT_EQ(h2d["trials_gbps"], Json::array({27.58, 27.61, 27.63, 27.6, 27.62}));
  EXPECT_EQ(h2d["median_gbps"], 27.61);
  EXPECT_EQ(h2d["min_gbps"], 27.58);
  EXPECT_EQ(h2d["max_gbps"], 27.63);
  EXPECT_EQ(h2d["cv"].get<double>(), results_.evidence.measurements[0].stats.cv);
  EXPECT_EQ(h2d["host_numa_node"], 0);
  EXPECT_EQ(h2d["host_numa_local"], true);
  EXPECT_EQ(h2d["verified"], true);

  const Json& host = document_["measurements"][3];
  EXPECT_EQ(host["subject"], "numa0");
  EXPECT_EQ(host["gpus"], Json::array());
  EXPECT_EQ(host["direction"], "h2h");
  EXPECT_EQ(host["method"], "cpu");
  EXPECT_EQ(host["aggregation"], "total_over_wall_time");
  EXPECT_EQ(host["bytes_per_trial"], 268435456);
  EXPECT_TRUE(host["host_numa_local"].is_null());
}

TEST_F(ProbeEvidenceJsonTest, LinkSamplesAreLinkStatesWithNullsForFailedReadings) {
  const Json& samples = document_["link_samples"];
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_EQ(samples[0], (Json{{"port", "0000:17:00.0"},
                              {"source", "sysfs"},
                              {"t_s", 0.25},
                              {"under_load", true},
                              {"generation", 5},
                              {"speed_gts", 32.0},
                              {"width", 8}}));
  EXPECT_EQ(samples[2]["source"], "nvml");
  EXPECT_TRUE(samples[4]["generation"].is_null());
  EXPECT_TRUE(samples[4]["speed_gts"].is_null());
  EXPECT_EQ(samples[4]["width"], 16);
}

TEST_F(ProbeEvidenceJsonTest, CountersAndNvml) {
  EXPECT_EQ(document_["counters"][0],
            (Json{{"device", "0000:17:00.0"}, {"counter", "aer_correctable"}, {"before", 56}, {"after", 58}}));
  EXPECT_EQ(device(document_, "0000:17:00.0")["nvml"], (Json{{"current_generation", 5},
                                                             {"max_generation", 5},
                                                             {"gpu_max_generation", 5},
                                                             {"current_width", 8},
                                                             {"max_width", 16},
                                                             {"replay_counter", 7},
                                                             {"tx_kbps", 310},
                                                             {"rx_kbps", 27105000},
                                                             {"pstate", 0},
                                                             {"under_load", true},
                                                             {"name", nullptr},
                                                             {"utilization_gpu_percent", nullptr},
                                                             {"host_max_generation", nullptr}}));
  const Json& idle = device(document_, "0000:ca:00.0")["nvml"];
  EXPECT_TRUE(idle["tx_kbps"].is_null());
  EXPECT_EQ(idle["pstate"], 8);
  EXPECT_EQ(idle["under_load"], false);
  EXPECT_TRUE(device(document_, "0000:18:00.0")["nvml"].is_null());
}

TEST_F(ResultsJsonTest, ThresholdsAreWrittenInFull) {
  results_.thresholds.name = "burn-in";
  results_.thresholds.source = "/etc/pcieval/burn-in.json";
  results_.thresholds.defaults.bandwidth.floor_fraction = 0.8;
  ThresholdOverride a100;
  a100.match.device_id = 0x20b5;
  a100.floor_fraction = 0.7;
  a100.per_probe.push_back(ProbeThresholds{"group_ce", Direction::kDeviceToHost, 0.6, std::nullopt});
  results_.thresholds.overrides.push_back(a100);
  const Json thresholds = parse(results_to_json(results_))["thresholds"];
  EXPECT_EQ(thresholds["name"], "burn-in");
  EXPECT_EQ(thresholds["source"], "/etc/pcieval/burn-in.json");
  EXPECT_EQ(thresholds["defaults"]["floor_fraction"], 0.8);
  EXPECT_EQ(thresholds["defaults"]["warn_fraction"], 0.80);
  EXPECT_EQ(thresholds["defaults"]["max_gpu_utilization_percent"], 5);
  ASSERT_EQ(thresholds["overrides"].size(), 1U);
  EXPECT_EQ(thresholds["overrides"][0]["match"]["device_id"], "20b5");
  EXPECT_TRUE(thresholds["overrides"][0]["match"]["name_contains"].is_null());
  EXPECT_EQ(thresholds["overrides"][0]["floor_fraction"], 0.7);
  EXPECT_TRUE(thresholds["overrides"][0]["max_cv"].is_null());
  EXPECT_EQ(thresholds["overrides"][0]["per_probe"][0]["direction"], "d2h");
}

TEST(DevicesJsonTest, SameDeviceObjectsAsTheResultsDocument) {
  const Results results = testing::hgx_spr_results();
  const Json topo = Json::parse(devices_to_json(results.evidence));
  EXPECT_EQ(topo.size(), 3u);
  EXPECT_EQ(topo["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(topo["host"]["hostname"], "hgx-b07");
  EXPECT_EQ(topo["devices"], Json::parse(results_to_json(results))["devices"]);
  EXPECT_EQ(devices_to_json(results.evidence).back(), '\n');
}

TEST(DevicesJsonTest, EmptyEvidenceGivesEmptyArrays) {
  const Json document = Json::parse(results_to_json(Results{}));
  EXPECT_EQ(document["devices"], Json::array());
  EXPECT_EQ(document["verdicts"], Json::array());
  EXPECT_EQ(document["notes"], Json::array());
  EXPECT_EQ(document["overall"], "pass");
}

}  // namespace
}  // namespace pcieval
