// The evidence schema 1.7 added for issue 28: each port's settings (payload
// sizes, ASPM, ACS), a device's IOMMU group, the kernel command line and the
// GPU pairs' peer status. Each round-trips to the same text and validates
// against the schema; unread settings keep their reason; documents without
// them read as before; broken values are errors naming their JSON pointer.
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

// A Broadcom PEX88096 downstream port as lspci -vvv shows one on an HGX A100
// whose IOMMU is on: ACSCap SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+
// UpstreamFwd+ EgressCtrl- DirectTrans+, ACSCtl SrcValid+ ReqRedir+
// CmpltRedir+ UpstreamFwd+, MPS 512 supported, 256 programmed.
PortSettings switch_port_settings() {
  PortSettings s;
  s.max_payload_supported_bytes = 512;
  s.max_payload_bytes = 256;
  s.max_read_request_bytes = 512;
  s.relaxed_ordering = true;
  s.aspm = AspmControl::kDisabled;
  s.acs = std::optional<AcsRegisters>(AcsRegisters{0x005f, 0x001d});
  return s;
}

// An A100's own end: no ACS capability, ASPM L1 enabled.
PortSettings gpu_settings() {
  PortSettings s;
  s.max_payload_supported_bytes = 256;
  s.max_payload_bytes = 256;
  s.max_read_request_bytes = 512;
  s.relaxed_ordering = false;
  s.aspm = AspmControl::kL1;
  s.acs = std::optional<AcsRegisters>();
  return s;
}

constexpr std::size_t kGpu = 1;

Results results_with_settings() {
  Results results = testing::hgx_spr_results();
  Evidence& evidence = results.evidence;
  evidence.host.kernel_command_line = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt";
  // GPU 0000:17:00.0 behind a switch: two hops.
  DeviceRecord& gpu = evidence.devices.at(kGpu);
  gpu.function.iommu = IommuReading{17, "DMA-FQ"};
  if (gpu.function.link) gpu.function.link->settings = gpu_settings();
  for (Link& link : gpu.path) {
    link.downstream_end.settings = gpu_settings();
    link.upstream_end.settings = switch_port_settings();
  }
  // One end read without root, one whose extended config space was short.
  gpu.path.back().upstream_end.settings = make_error(std::string(kSettingsNeedRoot));
  PortSettings short_config = switch_port_settings();
  short_config.acs = make_error("extended config space not readable (256 bytes)");
  gpu.path.front().upstream_end.settings = short_config;
  const PciAddress a = gpu.function.bdf;
  const PciAddress b = evidence.devices.back().function.bdf;
  evidence.peer_status.push_back(PeerStatus{a, b, PeerCapability::kRead, "ok", "nvml"});
  evidence.peer_status.push_back(PeerStatus{b, a, PeerCapability::kWrite, "chipset_not_supported", "nvml"});
  return results;
}

TEST(ResultsReaderSettingsTest, SettingsIommuCommandLineAndPeerStatusRoundTripToTheSameText) {
  const std::string text = results_to_json(results_with_settings());
  EXPECT_EQ(rewrite(text), text);
  EXPECT_THAT(testing::schema_errors(text, testing::results_schema_path()), ::testing::IsEmpty());
}

TEST(ResultsReaderSettingsTest, ReadsBackEveryField) {
  const auto read = results_from_json(results_to_json(results_with_settings()), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  const Evidence& evidence = read->evidence;
  EXPECT_EQ(evidence.host.kernel_command_line, "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt");
  const DeviceRecord& gpu = evidence.devices.at(kGpu);
  ASSERT_EQ(gpu.path.size(), 2U);
  ASSERT_TRUE(gpu.function.iommu.has_value());
  EXPECT_EQ(gpu.function.iommu->group, 17);
  EXPECT_TRUE(gpu.function.iommu->translated());
  const Reading<PortSettings>& own = gpu.path.front().downstream_end.settings;
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_EQ(own->aspm, AspmControl::kL1);
  ASSERT_TRUE(own->acs);
  EXPECT_FALSE(own->acs.value().has_value());
  const Reading<PortSettings>& short_config = gpu.path.front().upstream_end.settings;
  ASSERT_TRUE(short_config);
  ASSERT_FALSE(short_config->acs);
  EXPECT_EQ(short_config->acs.error().message, "extended config space not readable (256 bytes)");
  const Reading<PortSettings>& unprivileged = gpu.path.back().upstream_end.settings;
  ASSERT_FALSE(unprivileged);
  EXPECT_EQ(unprivileged.error().message, kSettingsNeedRoot);
  EXPECT_EQ(short_config->max_payload_supported_bytes, 512);
  EXPECT_EQ(gpu.path.back().downstream_end.settings->aspm, AspmControl::kL1);
  ASSERT_EQ(evidence.peer_status.size(), 2U);
  EXPECT_EQ(evidence.peer_status[1].capability, PeerCapability::kWrite);
  EXPECT_EQ(evidence.peer_status[1].status, "chipset_not_supported");
}

TEST(ResultsReaderSettingsTest, TheBitsAreWrittenInLspcisWordsBesideTheRegister) {
  const Json document = Json::parse(results_to_json(results_with_settings()));
  const Json& hop = document["devices"][kGpu]["path"][0];
  EXPECT_EQ(hop["downstream_settings"]["acs"], Json({{"present", false}}));
  EXPECT_EQ(hop["downstream_settings"]["aspm"], "l1");
  EXPECT_EQ(hop["upstream_settings"]["acs"], nullptr);
  EXPECT_EQ(hop["upstream_settings"]["acs_unread"], "extended config space not readable (256 bytes)");
  const Json& uplink = document["devices"][kGpu]["path"][1];
  EXPECT_EQ(uplink["upstream_settings"], nullptr);
  EXPECT_EQ(uplink["upstream_settings_unread"], std::string(kSettingsNeedRoot));
  EXPECT_EQ(uplink["downstream_settings"]["acs"]["present"], false);
  const Json& own = document["devices"][kGpu]["link"];
  EXPECT_EQ(own["settings"]["max_read_request_bytes"], 512);
}

TEST(ResultsReaderSettingsTest, SettingsNoReaderTriedAreNotWritten) {
  // The model's default reading is "not read": captured text without the
  // registers and every document before 1.7 write nothing new.
  const Json document = Json::parse(results_to_json(testing::hgx_spr_results()));
  for (const Json& device : document["devices"]) {
    for (const Json& hop : device["path"]) {
      EXPECT_FALSE(hop.contains("downstream_settings"));
      EXPECT_FALSE(hop.contains("upstream_settings_unread"));
    }
    EXPECT_FALSE(device.contains("iommu"));
  }
  EXPECT_FALSE(document.contains("peer_status"));
  EXPECT_FALSE(document["host"].contains("kernel_command_line"));
}

TEST(ResultsReaderSettingsTest, BrokenValuesAreErrorsNamingTheirPointer) {
  Json document = Json::parse(results_to_json(results_with_settings()));
  Json broken = document;
  broken["devices"][kGpu]["path"][0]["downstream_settings"]["max_payload_bytes"] = 384;
  EXPECT_THAT(error_of(broken), HasSubstr("/devices/1/path/0/downstream_settings/max_payload_bytes"));
  broken = document;
  broken["devices"][kGpu]["path"][0]["downstream_settings"]["aspm"] = "l2";
  EXPECT_THAT(error_of(broken), HasSubstr("ASPM"));
  broken = document;
  broken["peer_status"][0]["status"] = "fine";
  EXPECT_THAT(error_of(broken), HasSubstr("/peer_status/0/status"));
  broken = document;
  broken["peer_status"][0]["capability"] = "atomics";
  EXPECT_THAT(error_of(broken), HasSubstr("peer capability"));
}

}  // namespace
}  // namespace pcieval
