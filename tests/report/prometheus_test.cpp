// The Prometheus text exposition: exact text for a small workstation, then
// the Sapphire Rapids H100 node of sample_results.hpp (a shared switch
// uplink, unknown readings, a node-wide verdict) and a results document
// whose text needs escaping, each read back by a strict format parser.
#include "report/prometheus.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "report/exposition_parser.hpp"
#include "report/hostile_results.hpp"
#include "report/sample_results.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::parse_exposition;
using testing::PromExposition;
using ::testing::SizeIs;

// The pass-1gpu-l40s-genoa example of results_schema/: an L40S (Gen4 x16) in
// a Gen5 root port of an EPYC 9004 workstation, and a Gen4 x4 NVMe drive,
// both at their expected state.
Results l40s_genoa_results() {
  using testing::make_device;
  using testing::make_link;
  using testing::port;
  Results results;
  results.tool.version = "0.1.0";
  results.evidence.host = {"gpu-ws-017", "6.8.0-52-generic"};
  results.evidence.gpus_under_load = true;
  DeviceRecord gpu = make_device("0000:01:00.0", DeviceKind::kGpu, 0x10de, 0x26b9, 0x030200, 0, "0-63");
  gpu.path = {make_link("0000:01:00.0", "0000:00:01.1", LinkPosition::kDeviceLink,
                        port(PcieGen::kGen4, 16, PcieGen::kGen4, 16), port(PcieGen::kGen5, 16, PcieGen::kGen4, 16))};
  DeviceRecord nvme = make_device("0000:c1:00.0", DeviceKind::kNvme, 0x144d, 0xa80a, 0x010802, 0, "0-63");
  nvme.path = {make_link("0000:c1:00.0", "0000:c0:01.1", LinkPosition::kDeviceLink,
                         port(PcieGen::kGen4, 4, PcieGen::kGen4, 4), port(PcieGen::kGen5, 4, PcieGen::kGen4, 4))};
  results.evidence.devices = {gpu, nvme};
  results.verdicts = {
      {"0000:01:00.0", VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, std::nullopt, "at Gen4 x16", ""},
      {"0000:c1:00.0", VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, std::nullopt, "at Gen4 x4", ""},
  };
  results.overall = overall_of(results.verdicts);
  return results;
}

TEST(PrometheusTest, ExactTextForAPassingWorkstation) {
  const std::string link_gpu =
      R"(bdf="0000:01:00.0",kind="gpu",link_downstream="0000:01:00.0",link_upstream="0000:00:01.1",position="device_link")";
  const std::string link_nvme =
      R"(bdf="0000:c1:00.0",kind="nvme",link_downstream="0000:c1:00.0",link_upstream="0000:c0:01.1",position="device_link")";
  const std::string speed = "pcieval_link_speed_gigatransfers_per_second{";
  const std::string width = "pcieval_link_width_lanes{";
  const std::string expected =
      "# HELP pcieval_overall Overall result of the last pcieval run: 1 for the result it had, 0 for the other two.\n"
      "# TYPE pcieval_overall gauge\n"
      "pcieval_overall{result=\"pass\"} 1\n"
      "pcieval_overall{result=\"fail\"} 0\n"
      "pcieval_overall{result=\"inconclusive\"} 0\n"
      "# HELP pcieval_device_ok 1 when every verdict on the device (bdf \"node\": the node as a whole) is pass, 0 "
      "otherwise.\n"
      "# TYPE pcieval_device_ok gauge\n"
      "pcieval_device_ok{bdf=\"0000:01:00.0\",kind=\"gpu\"} 1\n"
      "pcieval_device_ok{bdf=\"0000:c1:00.0\",kind=\"nvme\"} 1\n"
      "# HELP pcieval_device_verdict Verdict of the last run on a device: always 1, the verdict is in the status and "
      "code labels.\n"
      "# TYPE pcieval_device_verdict gauge\n"
      "pcieval_device_verdict{bdf=\"0000:01:00.0\",code=\"link_at_expected_state\",kind=\"gpu\",status=\"pass\"} 1\n"
      "pcieval_device_verdict{bdf=\"0000:c1:00.0\",code=\"link_at_expected_state\",kind=\"nvme\",status=\"pass\"} 1\n"
      "# HELP pcieval_link_speed_gigatransfers_per_second PCIe link speed per lane in GT/s of every link on a judged "
      "device's path, by state.\n"
      "# TYPE pcieval_link_speed_gigatransfers_per_second gauge\n" +
      speed + link_gpu + ",state=\"expected\"} 16\n" +         //
      speed + link_gpu + ",state=\"negotiated\"} 16\n" +       //
      speed + link_gpu + ",state=\"downstream_max\"} 16\n" +   //
      speed + link_gpu + ",state=\"upstream_max\"} 32\n" +     //
      speed + link_nvme + ",state=\"expected\"} 16\n" +        //
      speed + link_nvme + ",state=\"negotiated\"} 16\n" +      //
      speed + link_nvme + ",state=\"downstream_max\"} 16\n" +  //
      speed + link_nvme + ",state=\"upstream_max\"} 32\n" +    //
      "# HELP pcieval_link_width_lanes PCIe link width in lanes of every link on a judged device's path, by state.\n"
      "# TYPE pcieval_link_width_lanes gauge\n" +
      width + link_gpu + ",state=\"expected\"} 16\n" +        //
      width + link_gpu + ",state=\"negotiated\"} 16\n" +      //
      width + link_gpu + ",state=\"downstream_max\"} 16\n" +  //
      width + link_gpu + ",state=\"upstream_max\"} 16\n" +    //
      width + link_nvme + ",state=\"expected\"} 4\n" +        //
      width + link_nvme + ",state=\"negotiated\"} 4\n" +      //
      width + link_nvme + ",state=\"downstream_max\"} 4\n" +  //
      width + link_nvme + ",state=\"upstream_max\"} 4\n" +    //
      "# HELP pcieval_gpus_found NVIDIA GPUs found on the node (SR-IOV virtual functions not counted).\n"
      "# TYPE pcieval_gpus_found gauge\n"
      "pcieval_gpus_found 1\n"
      "# HELP pcieval_devices_judged PCIe devices that received a verdict in the last run.\n"
      "# TYPE pcieval_devices_judged gauge\n"
      "pcieval_devices_judged 2\n"
      "# HELP pcieval_last_run_timestamp_seconds Unix time at which the last pcieval run started.\n"
      "# TYPE pcieval_last_run_timestamp_seconds gauge\n"
      "pcieval_last_run_timestamp_seconds 1718000000.25\n"
      "# HELP pcieval_last_run_duration_seconds Wall time the last pcieval run took, in seconds.\n"
      "# TYPE pcieval_last_run_duration_seconds gauge\n"
      "pcieval_last_run_duration_seconds 3.5\n";
  EXPECT_EQ(render_prometheus(l40s_genoa_results(), 1718000000.25, 3.5), expected);
}

class PrometheusSampleTest : public ::testing::Test {
 protected:
  std::string text_ = render_prometheus(testing::hgx_spr_results(), 1718000000.0, 12.5);
  PromExposition parsed_ = parse_exposition(text_);
};

TEST_F(PrometheusSampleTest, IsValidExpositionFormat) {
  EXPECT_THAT(parsed_.problems, IsEmpty()) << text_;
  for (const auto& [family, type] : parsed_.type) {
    EXPECT_EQ(type, "gauge") << family;
    EXPECT_EQ(parsed_.help.count(family), 1u) << family;
    EXPECT_EQ(family.rfind("pcieval_", 0), 0u) << family;
  }
}

TEST_F(PrometheusSampleTest, SharedUplinkIsWrittenOnceWithoutDeviceLabels) {
  // The GPU and the NIC both sit behind the switch uplink 0000:15:00.0 <-> 0000:14:01.0.
  for (const char* family : {"pcieval_link_speed_gigatransfers_per_second", "pcieval_link_width_lanes"}) {
    const auto uplink = parsed_.find(family, {{"link_downstream", "0000:15:00.0"}, {"link_upstream", "0000:14:01.0"}});
    ASSERT_THAT(uplink, SizeIs(4)) << family;
    for (const auto& sample : uplink) {
      EXPECT_EQ(sample.labels.count("bdf"), 0u);
      EXPECT_EQ(sample.labels.count("kind"), 0u);
      EXPECT_EQ(sample.labels.at("position"), "uplink");
    }
  }
  // Device links carry the device, and bdf is their downstream end.
  for (const auto& sample : parsed_.find("pcieval_link_width_lanes", {{"position", "device_link"}})) {
    EXPECT_EQ(sample.labels.at("bdf"), sample.labels.at("link_downstream"));
  }
}

TEST_F(PrometheusSampleTest, DowngradedLinkShowsExpectedAndNegotiated) {
  const std::map<std::string, std::string> gpu_link = {{"bdf", "0000:17:00.0"}, {"kind", "gpu"}};
  auto value = [&](const char* family, const char* state) {
    auto labels = gpu_link;
    labels["state"] = state;
    const auto found = parsed_.find(family, labels);
    return found.size() == 1 ? found[0].value : -1.0;
  };
  EXPECT_EQ(value("pcieval_link_width_lanes", "expected"), 16);
  EXPECT_EQ(value("pcieval_link_width_lanes", "negotiated"), 8);
  EXPECT_EQ(value("pcieval_link_speed_gigatransfers_per_second", "expected"), 32);
  EXPECT_EQ(value("pcieval_link_speed_gigatransfers_per_second", "negotiated"), 2.5);
}

TEST_F(PrometheusSampleTest, UnknownReadingsAreOmittedNeverNaNOrZero) {
  EXPECT_THAT(text_, Not(HasSubstr("NaN")));
  EXPECT_THAT(text_, Not(HasSubstr("Inf")));
  for (const auto& sample : parsed_.samples) {
    EXPECT_TRUE(std::isfinite(sample.value)) << sample.name;
  }
  // The NVMe drive's root port cannot decode its max speed: no expected or
  // upstream_max speed, but the speeds that were read and every width are there.
  const auto nvme_speeds = parsed_.find("pcieval_link_speed_gigatransfers_per_second", {{"bdf", "0000:3b:00.0"}});
  std::set<std::string> states;
  for (const auto& sample : nvme_speeds) states.insert(sample.labels.at("state"));
  EXPECT_EQ(states, (std::set<std::string>{"negotiated", "downstream_max"}));
  EXPECT_THAT(parsed_.find("pcieval_link_width_lanes", {{"bdf", "0000:3b:00.0"}}), SizeIs(4));
  for (const auto& sample : parsed_.find("pcieval_link_width_lanes")) EXPECT_GT(sample.value, 0) << sample.name;
}

TEST_F(PrometheusSampleTest, UnjudgedDevicesHaveNoSeries) {
  // The BMC's VGA (no link, no verdict).
  EXPECT_THAT(text_, Not(HasSubstr("0000:02:00.0")));
}

TEST_F(PrometheusSampleTest, OneVerdictSeriesAndOneOkSeriesPerSubject) {
  const auto verdicts = parsed_.find("pcieval_device_verdict");
  ASSERT_THAT(verdicts, SizeIs(5));
  for (const auto& sample : verdicts) EXPECT_EQ(sample.value, 1);
  const auto node = parsed_.find("pcieval_device_verdict", {{"bdf", "node"}});
  ASSERT_THAT(node, SizeIs(1));
  EXPECT_EQ(node[0].labels, (std::map<std::string, std::string>{
                                {"bdf", "node"}, {"kind", "node"}, {"status", "missing"}, {"code", "gpus_missing"}}));

  std::map<std::string, double> ok;
  for (const auto& sample : parsed_.find("pcieval_device_ok")) ok[sample.labels.at("bdf")] = sample.value;
  EXPECT_EQ(ok, (std::map<std::string, double>{
                    {"0000:17:00.0", 0}, {"0000:18:00.0", 1}, {"0000:3b:00.0", 0}, {"0000:ca:00.0", 0}, {"node", 0}}));
}

TEST_F(PrometheusSampleTest, CountsAndRunTimes) {
  EXPECT_THAT(text_, HasSubstr("\npcieval_gpus_found 2\n"));
  EXPECT_THAT(text_, HasSubstr("\npcieval_devices_judged 4\n"));
  EXPECT_THAT(text_, HasSubstr("\npcieval_last_run_timestamp_seconds 1718000000\n"));
  EXPECT_THAT(text_, HasSubstr("\npcieval_last_run_duration_seconds 12.5\n"));
}

class PrometheusProbesTest : public ::testing::Test {
 protected:
  Results results_ = testing::hgx_spr_results_probed();
  std::string text_ = render_prometheus(results_, 1718000000.0, 12.5);
  PromExposition parsed_ = parse_exposition(text_);
};

TEST_F(PrometheusProbesTest, NewFamiliesAreValidGauges) {
  EXPECT_THAT(parsed_.problems, IsEmpty()) << text_;
  for (const char* family :
       {"pcieval_bandwidth_gigabytes_per_second", "pcieval_bandwidth_cv_ratio", "pcieval_probe_status"}) {
    EXPECT_EQ(parsed_.type.count(family), 1u) << family;
    EXPECT_EQ(parsed_.type.at(family), "gauge") << family;
    EXPECT_EQ(parsed_.help.count(family), 1u) << family;
  }
  // The families sit before the run times, each in one block.
  EXPECT_LT(text_.find("# TYPE pcieval_bandwidth_gigabytes_per_second"),
            text_.find("# TYPE pcieval_bandwidth_cv_ratio"));
  EXPECT_LT(text_.find("# TYPE pcieval_probe_status"), text_.find("# TYPE pcieval_last_run_timestamp_seconds"));
}

TEST_F(PrometheusProbesTest, BandwidthIsTheMedianOfEachMeasurementButTheSweep) {
  const auto bandwidth = parsed_.find("pcieval_bandwidth_gigabytes_per_second");
  ASSERT_THAT(bandwidth, SizeIs(2));
  EXPECT_EQ(bandwidth[0].labels, (std::map<std::string, std::string>{{"aggregation", "alone"},
                                                                     {"bdf", "0000:17:00.0"},
                                                                     {"direction", "h2d"},
                                                                     {"host_memory", "pinned"},
                                                                     {"probe", "h2d_ce"},
                                                                     {"subject", "0000:17:00.0"}}));
  EXPECT_EQ(bandwidth[0].value, 27.61);
  EXPECT_EQ(bandwidth[1].labels.at("subject"), "numa0");
  EXPECT_EQ(bandwidth[1].labels.count("bdf"), 0u);  // the host ceiling copies with no GPU
  EXPECT_EQ(bandwidth[1].labels.at("aggregation"), "total_over_wall_time");
  EXPECT_EQ(bandwidth[1].value, 118.42);
  EXPECT_THAT(parsed_.find("pcieval_bandwidth_gigabytes_per_second", {{"probe", "sweep_ce"}}), IsEmpty());

  const auto cv = parsed_.find("pcieval_bandwidth_cv_ratio");
  ASSERT_THAT(cv, SizeIs(2));
  EXPECT_EQ(cv[0].labels, bandwidth[0].labels);
  EXPECT_NEAR(cv[0].value, results_.evidence.measurements[0].stats.cv, 1e-15);
  EXPECT_GT(cv[0].value, 0);
}

TEST_F(PrometheusProbesTest, UnitsAreInTheFamilyNames) {
  // The issue's naming: GB/s as _gigabytes_per_second, GT/s as
  // _gigatransfers_per_second; no family is left with a bare "gbps".
  EXPECT_THAT(text_, Not(HasSubstr("_gbps")));
  EXPECT_THAT(parsed_.find("pcieval_bandwidth_gigabytes_per_second"), SizeIs(2));
  EXPECT_THAT(parsed_.find("pcieval_link_speed_gigatransfers_per_second"), Not(IsEmpty()));
}

TEST_F(PrometheusProbesTest, BudgetsGiveOneSeriesEachAndNoneWhenNotGiven) {
  EXPECT_THAT(parsed_.find("pcieval_bandwidth_budget_gigabytes_per_second"), IsEmpty());
  EXPECT_THAT(text_, Not(HasSubstr("pcieval_bandwidth_budget")));
  const std::vector<BandwidthBudget> budgets = {
      {"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", 58.4},
      {"0000:17:00.0", Direction::kDeviceToHost, "Gen5 x16", 57.6},
      {"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", 58.4},          // repeated: written once
      {"0000:ca:00.0", Direction::kHostToDevice, "Gen5 x16", std::nan("")},  // unknown: left out
  };
  const std::string text = render_prometheus(results_, std::nullopt, std::nullopt, budgets);
  const PromExposition parsed = parse_exposition(text);
  EXPECT_THAT(parsed.problems, IsEmpty()) << text;
  const auto series = parsed.find("pcieval_bandwidth_budget_gigabytes_per_second");
  ASSERT_THAT(series, SizeIs(2));
  EXPECT_EQ(series[0].labels, (std::map<std::string, std::string>{
                                  {"bdf", "0000:17:00.0"}, {"direction", "h2d"}, {"expected_link", "Gen5 x16"}}));
  EXPECT_EQ(series[0].value, 58.4);
  EXPECT_EQ(series[1].labels.at("direction"), "d2h");
  EXPECT_EQ(series[1].value, 57.6);
  // The measured series joins the budget on bdf and direction.
  const auto measured =
      parsed.find("pcieval_bandwidth_gigabytes_per_second", {{"bdf", "0000:17:00.0"}, {"direction", "h2d"}});
  ASSERT_THAT(measured, SizeIs(1));
  EXPECT_LT(measured[0].value, series[0].value);
}

TEST_F(PrometheusProbesTest, ProbeStatusHasAllThreeStatusesWithOneSet) {
  const auto status = parsed_.find("pcieval_probe_status");
  ASSERT_THAT(status, SizeIs(3 * results_.evidence.probes.size()));
  for (const ProbeRun& probe : results_.evidence.probes) {
    for (const char* name : {"ran", "skipped", "failed"}) {
      const auto series = parsed_.find("pcieval_probe_status", {{"probe", probe.key}, {"status", name}});
      ASSERT_THAT(series, SizeIs(1)) << probe.key << " " << name;
      EXPECT_EQ(series[0].value, to_string(probe.status) == name ? 1 : 0) << probe.key << " " << name;
      EXPECT_EQ(series[0].labels.size(), 2u);
    }
  }
  EXPECT_THAT(text_, HasSubstr("\npcieval_probe_status{probe=\"h2d_ce\",status=\"failed\"} 1\n"));
  EXPECT_THAT(text_, HasSubstr("\npcieval_probe_status{probe=\"group_ce\",status=\"skipped\"} 1\n"));
}

TEST_F(PrometheusProbesTest, WithoutProbesTheTextIsAsBefore) {
  Results plain = results_;
  plain.evidence.probes.clear();
  plain.evidence.measurements.clear();
  EXPECT_EQ(render_prometheus(plain, 1718000000.0, 12.5),
            render_prometheus(testing::hgx_spr_results(), 1718000000.0, 12.5));
}

TEST_F(PrometheusProbesTest, RepeatedMeasurementGivesNoDuplicateSeries) {
  results_.evidence.measurements.push_back(results_.evidence.measurements[0]);
  results_.evidence.probes.push_back(results_.evidence.probes[0]);
  const PromExposition parsed = parse_exposition(render_prometheus(results_, std::nullopt, std::nullopt));
  EXPECT_THAT(parsed.problems, IsEmpty());
  EXPECT_THAT(parsed.find("pcieval_bandwidth_gigabytes_per_second", {{"probe", "h2d_ce"}}), SizeIs(1));
  EXPECT_THAT(parsed.find("pcieval_probe_status", {{"probe", "h2d_ce"}}), SizeIs(3));
}

TEST_F(PrometheusProbesTest, ProbeKeysAndSubjectsAreEscaped) {
  results_.evidence.probes[0].key = testing::kHostileSubject;
  results_.evidence.measurements[0].subject = testing::kHostileSubject;
  const std::string text = render_prometheus(results_, std::nullopt, std::nullopt);
  const PromExposition parsed = parse_exposition(text);
  EXPECT_THAT(parsed.problems, IsEmpty()) << text;
  const std::string repaired = "dev \"q\" back\\slash\nline \x1b \xef\xbf\xbd caf\xc3\xa9";
  EXPECT_THAT(parsed.find("pcieval_probe_status", {{"probe", repaired}, {"status", "failed"}}), SizeIs(1));
  EXPECT_THAT(parsed.find("pcieval_bandwidth_gigabytes_per_second", {{"subject", repaired}}), SizeIs(1));
}

TEST(PrometheusTest, OverallHasAllThreeResultsWithOneSet) {
  for (const Overall overall : {Overall::kPass, Overall::kFail, Overall::kInconclusive}) {
    Results results;
    results.overall = overall;
    const PromExposition parsed = parse_exposition(render_prometheus(results, std::nullopt, std::nullopt));
    const auto series = parsed.find("pcieval_overall");
    ASSERT_THAT(series, SizeIs(3));
    for (const auto& sample : series) {
      EXPECT_EQ(sample.value, sample.labels.at("result") == to_string(overall) ? 1 : 0);
    }
  }
}

TEST(PrometheusTest, RunTimesLeftOutWhenNotGivenOrNotFinite) {
  const Results results = testing::hgx_spr_results();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [timestamp, duration] : std::vector<std::pair<std::optional<double>, std::optional<double>>>{
           {std::nullopt, std::nullopt}, {nan, nan}, {inf, -inf}, {std::nullopt, -1.0}}) {
    const std::string text = render_prometheus(results, timestamp, duration);
    EXPECT_THAT(text, Not(HasSubstr("pcieval_last_run")));
    EXPECT_THAT(parse_exposition(text).problems, IsEmpty());
  }
}

TEST(PrometheusTest, EmptyResultsAreValidAndSayNothingWasJudged) {
  const std::string text = render_prometheus(Results{}, std::nullopt, std::nullopt);
  const PromExposition parsed = parse_exposition(text);
  EXPECT_THAT(parsed.problems, IsEmpty()) << text;
  EXPECT_EQ(parsed.type.size(), 3u) << text;  // overall, gpus_found, devices_judged
  EXPECT_THAT(text, HasSubstr("\npcieval_devices_judged 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("pcieval_link_")));
}

TEST(PrometheusTest, LabelValuesAreEscapedAndValidUtf8) {
  const std::string text = render_prometheus(testing::hostile_results(), std::nullopt, std::nullopt);
  const PromExposition parsed = parse_exposition(text);
  EXPECT_THAT(parsed.problems, IsEmpty()) << text;
  // Backslash, quote and newline escaped; ESC kept (valid in a label value);
  // the invalid byte replaced by U+FFFD; é kept.
  EXPECT_THAT(text, HasSubstr(R"(pcieval_device_ok{bdf="dev \"q\" back\\slash\nline )"
                              "\x1b \xef\xbf\xbd caf\xc3\xa9\",kind=\"unknown\"} 0\n"));
  const auto weird = parsed.find("pcieval_device_verdict", {{"kind", "unknown"}});
  ASSERT_THAT(weird, SizeIs(1));
  EXPECT_EQ(weird[0].labels.at("bdf"), "dev \"q\" back\\slash\nline \x1b \xef\xbf\xbd caf\xc3\xa9");
}

TEST(PrometheusTest, RepeatedVerdictsAndLinksGiveNoDuplicateSeries) {
  Results results = testing::hostile_results();  // 0000:18:00.0 judged pass twice
  results.verdicts.push_back(results.verdicts.front());
  // The same device listed twice in the evidence.
  results.evidence.devices.push_back(results.evidence.devices[1]);
  const PromExposition parsed = parse_exposition(render_prometheus(results, std::nullopt, std::nullopt));
  EXPECT_THAT(parsed.problems, IsEmpty());
  EXPECT_THAT(parsed.find("pcieval_device_verdict", {{"bdf", "0000:18:00.0"}}), SizeIs(1));
  EXPECT_THAT(parsed.find("pcieval_device_ok", {{"bdf", "0000:17:00.0"}}), SizeIs(1));
  EXPECT_THAT(parsed.find("pcieval_link_width_lanes", {{"bdf", "0000:17:00.0"}}), SizeIs(4));
}

TEST(PrometheusTest, ParserCatchesWhatNodeExporterRefuses) {
  // The checks above are only as good as the parser: it must reject these.
  for (const char* bad : {
           "pcieval_x 1",                                                    // no trailing newline
           "pcieval_x{a=\"b\\x\"} 1\n",                                      // bad escape
           "# TYPE pcieval_x gauge\npcieval_x 1\npcieval_x 2\n",             // duplicate series
           "# TYPE pcieval_x gauge\npcieval_x 1 1700000000\n",               // timestamp
           "# TYPE pcieval_x gauge\n# TYPE pcieval_x gauge\npcieval_x 1\n",  // TYPE twice
           "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 1\n",       // not contiguous
           "# TYPE pcieval_x gauge\npcieval_x{a=\"\xff\"} 1\n",              // not UTF-8
           "# TYPE pcieval_x gauge\npcieval_x one\n",                        // not a number
       }) {
    EXPECT_THAT(parse_exposition(bad).problems, Not(IsEmpty())) << bad;
  }
}

}  // namespace
}  // namespace pcieval
