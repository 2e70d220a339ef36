#include "topology/nvml.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "topology/fake_nvml.hpp"
#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using ::testing::AnyOf;
using testing::bdf;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The fake NVML (fake_nvml.hpp): canned GPUs keyed by the bus id NVML is
// asked for, behind the C function table.
using FakeGpu = testing::FakeNvmlGpu;
using testing::busy_h100;
using testing::fake_nvml_table;
namespace fake_api = testing::fake_nvml_api;
using NvmlTest = testing::FakeNvmlTest;

// --- names and bus ids ---

TEST(NvmlReturnName, NamesKnownCodesAndNumbersUnknownOnes) {
  EXPECT_EQ(nvml_return_name(0), "NVML_SUCCESS");
  EXPECT_EQ(nvml_return_name(3), "NVML_ERROR_NOT_SUPPORTED");
  EXPECT_EQ(nvml_return_name(6), "NVML_ERROR_NOT_FOUND");
  EXPECT_EQ(nvml_return_name(9), "NVML_ERROR_DRIVER_NOT_LOADED");
  EXPECT_EQ(nvml_return_name(13), "NVML_ERROR_FUNCTION_NOT_FOUND");
  EXPECT_EQ(nvml_return_name(15), "NVML_ERROR_GPU_IS_LOST");
  EXPECT_EQ(nvml_return_name(25), "NVML_ERROR_ARGUMENT_VERSION_MISMATCH");
  EXPECT_EQ(nvml_return_name(999), "NVML_ERROR_UNKNOWN");
  EXPECT_EQ(nvml_return_name(4242), "NVML_ERROR_4242");
}

TEST(NvmlBusId, FormatsAsNvmlPrintsIt) {
  EXPECT_EQ(format_nvml_bus_id(bdf("0000:17:00.0")), "00000000:17:00.0");
  EXPECT_EQ(format_nvml_bus_id(bdf("0000:af:1f.7")), "00000000:AF:1F.7");
  EXPECT_EQ(format_nvml_bus_id(bdf("10000:01:00.0")), "00010000:01:00.0");
}

TEST(NvmlBusId, ParsesNvmlAndLegacyFormsIntoTheSysfsAddress) {
  EXPECT_EQ(to_string(parse_nvml_bus_id("00000000:AF:00.0").value()), "0000:af:00.0");
  EXPECT_EQ(to_string(parse_nvml_bus_id("0000:AF:00.0").value()), "0000:af:00.0");
  EXPECT_EQ(parse_nvml_bus_id(format_nvml_bus_id(bdf("0001:c1:00.1"))).value(), bdf("0001:c1:00.1"));
  const auto bad = parse_nvml_bus_id("GPU-0");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("NVML bus id"));
}

// --- symbol resolution ---

void* lookup_all(const char* symbol) {
  static const std::map<std::string, void*> kTable = {
      {"nvmlInit_v2", reinterpret_cast<void*>(&fake_api::init)},
      {"nvmlShutdown", reinterpret_cast<void*>(&fake_api::shutdown)},
      {"nvmlErrorString", reinterpret_cast<void*>(&fake_api::error_string)},
      {"nvmlDeviceGetHandleByPciBusId_v2", reinterpret_cast<void*>(&fake_api::handle)},
      {"nvmlDeviceGetCurrPcieLinkGeneration", reinterpret_cast<void*>(&fake_api::curr_gen)},
      {"nvmlDeviceGetMaxPcieLinkGeneration", reinterpret_cast<void*>(&fake_api::max_gen)},
      {"nvmlDeviceGetGpuMaxPcieLinkGeneration", reinterpret_cast<void*>(&fake_api::gpu_max_gen)},
      {"nvmlDeviceGetCurrPcieLinkWidth", reinterpret_cast<void*>(&fake_api::curr_width)},
      {"nvmlDeviceGetMaxPcieLinkWidth", reinterpret_cast<void*>(&fake_api::max_width)},
      {"nvmlDeviceGetPcieReplayCounter", reinterpret_cast<void*>(&fake_api::replay)},
      {"nvmlDeviceGetPcieThroughput", reinterpret_cast<void*>(&fake_api::throughput)},
      {"nvmlDeviceGetPerformanceState", reinterpret_cast<void*>(&fake_api::pstate)},
      {"nvmlDeviceGetName", reinterpret_cast<void*>(&fake_api::name)},
      {"nvmlDeviceGetUtilizationRates", reinterpret_cast<void*>(&fake_api::utilization)},
      {"nvmlDeviceGetMigMode", reinterpret_cast<void*>(&fake_api::mig_mode)},
      {"nvmlSystemGetConfComputeState", reinterpret_cast<void*>(&fake_api::conf_compute)},
      {"nvmlDeviceGetP2PStatus", reinterpret_cast<void*>(&fake_api::p2p_status)},
  };
  const auto it = kTable.find(symbol);
  return it == kTable.end() ? nullptr : it->second;
}

TEST(ResolveNvmlApi, BindsEverySymbol) {
  std::vector<std::string> missing = {"stale"};
  const auto api = resolve_nvml_api(lookup_all, "libnvidia-ml.so.1", &missing);
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_THAT(missing, IsEmpty());
  EXPECT_EQ(api->init_v2, &fake_api::init);
  EXPECT_EQ(api->device_get_gpu_max_pcie_link_generation, &fake_api::gpu_max_gen);
  EXPECT_EQ(api->device_get_pcie_throughput, &fake_api::throughput);
  EXPECT_EQ(api->device_get_performance_state, &fake_api::pstate);
}

TEST(ResolveNvmlApi, MissingOptionalSymbolIsListedNotFatal) {
  // A driver from before nvmlDeviceGetGpuMaxPcieLinkGeneration existed.
  const auto old_driver = [](const char* symbol) -> void* {
    if (std::string(symbol) == "nvmlDeviceGetGpuMaxPcieLinkGeneration") return nullptr;
    return lookup_all(symbol);
  };
  std::vector<std::string> missing;
  const auto api = resolve_nvml_api(old_driver, "libnvidia-ml.so.1", &missing);
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_THAT(missing, ElementsAre("nvmlDeviceGetGpuMaxPcieLinkGeneration"));
  EXPECT_EQ(api->device_get_gpu_max_pcie_link_generation, nullptr);
  EXPECT_EQ(api->device_get_max_pcie_link_generation, &fake_api::max_gen);
}

TEST(ResolveNvmlApi, MissingRequiredSymbolIsAnErrorNamingIt) {
  const auto no_init = [](const char* symbol) -> void* {
    if (std::string(symbol) == "nvmlInit_v2") return nullptr;
    return lookup_all(symbol);
  };
  const auto api = resolve_nvml_api(no_init, "libnvidia-ml.so.1", nullptr);
  ASSERT_FALSE(api.ok());
  EXPECT_THAT(api.error().message, HasSubstr("libnvidia-ml.so.1 lacks nvmlInit_v2"));
}

// --- loading the real library (absent on a machine without the driver) ---

// A library other than the driver's (PCIEVAL_NVML_LIBRARY) that is absent is
// named as such: "NVIDIA driver not installed" is said of libnvidia-ml.so.1
// alone (DefaultLibraryLoadsOrSaysWhy below).
TEST(NvmlLibraryLoad, AbsentLibraryIsAClearError) {
  const auto library = NvmlLibrary::load("libpcieval-no-such-nvml.so.1");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.error().message,
            "libpcieval-no-such-nvml.so.1 could not be loaded: libpcieval-no-such-nvml.so.1: cannot open shared "
            "object file: No such file or directory");
}

TEST(NvmlLibraryLoad, ALibraryWithoutNvmlSymbolsIsRefused) {
  // libc is always loadable and certainly not NVML: this runs the dlsym path.
  const auto library = NvmlLibrary::load("libc.so.6");
  ASSERT_FALSE(library.ok());
  EXPECT_THAT(library.error().message,
              HasSubstr("libc.so.6 lacks nvmlInit_v2, nvmlShutdown, nvmlDeviceGetHandleByPciBusId_v2"));
}

TEST(NvmlLibraryLoad, DefaultLibraryLoadsOrSaysWhy) {
  // Without the driver (CI) this is the not-found message; on a GPU node it
  // loads, or names the init failure.
  const auto library = NvmlLibrary::load();
  if (library.ok()) return;
  EXPECT_THAT(library.error().message, AnyOf(Eq("libnvidia-ml.so.1 not found: NVIDIA driver not installed"),
                                             HasSubstr("nvmlInit_v2"), HasSubstr("could not be loaded")));
}

// --- the session: init and shutdown ---

TEST_F(NvmlTest, InitOnceAndShutdownOnceAcrossMoves) {
  {
    NvmlLibrary library = open_session();
    EXPECT_EQ(fake().init_calls, 1);
    NvmlLibrary moved = std::move(library);
    NvmlLibrary assigned = open_session();
    EXPECT_EQ(fake().init_calls, 2);
    assigned = std::move(moved);  // releases the second session
    EXPECT_EQ(fake().shutdown_calls, 1);
  }
  EXPECT_EQ(fake().shutdown_calls, 2);
}

TEST_F(NvmlTest, InitFailureNamesTheNvmlCodeAndOwesNoShutdown) {
  fake().init_code = kNvmlErrorDriverNotLoaded;
  const auto library = NvmlLibrary::from_api(fake_nvml_table());
  ASSERT_FALSE(library.ok());
  EXPECT_THAT(library.error().message, HasSubstr("nvmlInit_v2"));
  EXPECT_THAT(library.error().message, HasSubstr("NVML_ERROR_DRIVER_NOT_LOADED (9)"));
  EXPECT_THAT(library.error().message, HasSubstr("driver is not loaded"));
  EXPECT_EQ(fake().shutdown_calls, 0);
}

TEST_F(NvmlTest, InitFailureWithoutAHintQuotesNvmlsOwnText) {
  fake().init_code = 999;
  const auto library = NvmlLibrary::from_api(fake_nvml_table());
  ASSERT_FALSE(library.ok());
  EXPECT_THAT(library.error().message, HasSubstr("NVML_ERROR_UNKNOWN (999): Fake Error Text"));
}

TEST_F(NvmlTest, TableWithoutRequiredEntriesIsRefused) {
  NvmlApi api = fake_nvml_table();
  api.device_get_handle_by_pci_bus_id_v2 = nullptr;
  EXPECT_FALSE(NvmlLibrary::from_api(api).ok());
  EXPECT_EQ(fake().init_calls, 0);
}

// --- the reader ---

TEST_F(NvmlTest, ReadsEveryField) {
  FakeGpu gpu = busy_h100();
  gpu.values["curr_gen"] = 4;
  gpu.values["curr_width"] = 8;
  gpu.pstate = 2;
  fake().gpus["00000000:17:00.0"] = gpu;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);

  std::vector<std::string> notes;
  const auto link = reader.read(bdf("0000:17:00.0"), &notes);
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_EQ(link->current_gen, 4);
  EXPECT_EQ(link->max_gen, 5);
  EXPECT_EQ(link->gpu_max_gen, 5);
  EXPECT_EQ(link->current_width, 8);
  EXPECT_EQ(link->max_width, 16);
  EXPECT_EQ(link->replay_counter, 3U);
  EXPECT_EQ(link->tx_kbps, 12000000U);
  EXPECT_EQ(link->rx_kbps, 25000000U);
  EXPECT_EQ(link->pstate, 2);
  EXPECT_EQ(link->name, "NVIDIA H100 PCIe");
  EXPECT_FALSE(link->under_load);
  EXPECT_THAT(notes, IsEmpty());
}

TEST_F(NvmlTest, ReadsUtilisationBeforeTheRun) {
  FakeGpu gpu = busy_h100();
  gpu.values["utilization"] = 37;
  fake().gpus["00000000:17:00.0"] = gpu;
  FakeGpu idle = busy_h100();  // no "utilization" value: NOT_SUPPORTED, as on a vGPU guest
  fake().gpus["00000000:65:00.0"] = idle;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  const auto busy = reader.read_utilization_gpu_percent(bdf("0000:17:00.0"));
  ASSERT_TRUE(busy.ok()) << busy.error().message;
  EXPECT_EQ(busy.value(), 37);
  const auto unknown = reader.read_utilization_gpu_percent(bdf("0000:65:00.0"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("nvmlDeviceGetUtilizationRates"));
}

TEST_F(NvmlTest, UtilisationOverAHundredIsRefused) {
  FakeGpu gpu = busy_h100();
  gpu.values["utilization"] = 4000000000U;  // a broken driver's garbage, not a percentage
  fake().gpus["00000000:17:00.0"] = gpu;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  EXPECT_FALSE(reader.read_utilization_gpu_percent(bdf("0000:17:00.0")).ok());
}

TEST_F(NvmlTest, LooksTheGpuUpByNvmlsBusIdForm) {
  fake().gpus["00000000:AF:00.0"] = busy_h100();
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  EXPECT_TRUE(reader.read(bdf("0000:af:00.0")).ok());
  EXPECT_THAT(fake().looked_up(), ElementsAre("00000000:AF:00.0"));
}

TEST_F(NvmlTest, NotSupportedFieldStaysUnknownAndIsNoted) {
  FakeGpu gpu = busy_h100();
  // vGPU guests have no throughput counters; some boards no replay counter.
  gpu.failures["tx"] = kNvmlErrorNotSupported;
  gpu.failures["rx"] = kNvmlErrorNotSupported;
  gpu.failures["replay"] = kNvmlErrorNotSupported;
  fake().gpus["00000000:17:00.0"] = gpu;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);

  std::vector<std::string> notes;
  const auto link = reader.read(bdf("0000:17:00.0"), &notes);
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_EQ(link->tx_kbps, std::nullopt);
  EXPECT_EQ(link->rx_kbps, std::nullopt);
  EXPECT_EQ(link->replay_counter, std::nullopt);
  EXPECT_EQ(link->current_gen, 5);
  EXPECT_EQ(link->max_width, 16);
  EXPECT_THAT(notes, ElementsAre("nvmlDeviceGetPcieReplayCounter: NVML_ERROR_NOT_SUPPORTED (3)",
                                 "nvmlDeviceGetPcieThroughput(TX_BYTES): NVML_ERROR_NOT_SUPPORTED (3)",
                                 "nvmlDeviceGetPcieThroughput(RX_BYTES): NVML_ERROR_NOT_SUPPORTED (3)"));
}

TEST_F(NvmlTest, FailingGettersOfAnyKindLeaveTheirFieldUnread) {
  FakeGpu gpu = busy_h100();
  gpu.failures["curr_gen"] = kNvmlErrorGpuIsLost;
  gpu.failures["max_width"] = kNvmlErrorUnknown;
  gpu.failures["pstate"] = kNvmlErrorNotSupported;
  fake().gpus["00000000:17:00.0"] = gpu;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);

  std::vector<std::string> notes;
  const auto link = reader.read(bdf("0000:17:00.0"), &notes);
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(link->current_gen, std::nullopt);
  EXPECT_EQ(link->max_width, std::nullopt);
  EXPECT_EQ(link->pstate, std::nullopt);
  EXPECT_EQ(link->current_width, 16);
  EXPECT_THAT(notes, ::testing::Contains(HasSubstr("NVML_ERROR_GPU_IS_LOST (15)")));
}

TEST_F(NvmlTest, OldDriverWithoutASymbolLeavesThatFieldUnread) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  NvmlApi api = fake_nvml_table();
  api.device_get_gpu_max_pcie_link_generation = nullptr;
  api.device_get_performance_state = nullptr;
  const NvmlLibrary library = open_session(api);
  const NvmlReader reader(library);

  std::vector<std::string> notes;
  const auto link = reader.read(bdf("0000:17:00.0"), &notes);
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(link->gpu_max_gen, std::nullopt);
  EXPECT_EQ(link->pstate, std::nullopt);
  EXPECT_EQ(link->max_gen, 5);
  EXPECT_THAT(notes, ElementsAre("nvmlDeviceGetGpuMaxPcieLinkGeneration: not exported by this driver",
                                 "nvmlDeviceGetPerformanceState: not exported by this driver"));
}

TEST_F(NvmlTest, UnknownPstateIsNotAPstate) {
  FakeGpu gpu = busy_h100();
  gpu.pstate = kNvmlPstateUnknown;
  fake().gpus["00000000:17:00.0"] = gpu;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  const auto link = reader.read(bdf("0000:17:00.0"));
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(link->pstate, std::nullopt);
}

TEST_F(NvmlTest, DeviceNotFoundNamesTheAddress) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  const auto link = reader.read(bdf("0000:65:00.0"));
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().message,
            "no GPU at 0000:65:00.0 known to NVML (looked up as 00000000:65:00.0): NVML_ERROR_NOT_FOUND (6)");
}

TEST_F(NvmlTest, OtherLookupFailuresNameTheAddressAndTheCode) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  fake().lookup_code = kNvmlErrorInsufficientPower;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  const auto link = reader.read(bdf("0000:17:00.0"));
  ASSERT_FALSE(link.ok());
  EXPECT_THAT(link.error().message, HasSubstr("0000:17:00.0"));
  EXPECT_THAT(link.error().message, HasSubstr("NVML_ERROR_INSUFFICIENT_POWER (8)"));
}

TEST_F(NvmlTest, CurrentLinkOnlyForTheSampler) {
  FakeGpu gpu = busy_h100();
  gpu.values["curr_gen"] = 1;  // idle downshift
  gpu.failures["curr_width"] = kNvmlErrorNotSupported;
  fake().gpus["00000000:17:00.0"] = gpu;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  const auto device = reader.find_gpu(bdf("0000:17:00.0"));
  ASSERT_TRUE(device.ok());
  const NvmlCurrentLink link = reader.read_current_link(device.value());
  EXPECT_EQ(link.gen, 1);
  EXPECT_EQ(link.width, std::nullopt);
}

TEST_F(NvmlTest, ReplayCounterOnItsOwn) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  EXPECT_EQ(reader.read_replay_counter(bdf("0000:17:00.0")).value(), 3U);
  const auto missing = reader.read_replay_counter(bdf("0000:18:00.0"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("0000:18:00.0"));
}

// Issue 17, item 10: confidential-computing mode is read before the probes,
// so the pinned ones are skipped with the reason instead of failing each one.
TEST_F(NvmlTest, ConfidentialComputingStateIsRead) {
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  fake().cc_feature = 0;
  EXPECT_EQ(reader.read_confidential_computing().value(), false);
  fake().cc_feature = kNvmlCcSystemFeatureEnabled;
  EXPECT_EQ(reader.read_confidential_computing().value(), true);
  fake().conf_compute_code = kNvmlErrorNotSupported;
  const auto refused = reader.read_confidential_computing();
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("NVML_ERROR_NOT_SUPPORTED"));
}

// Issue 26 item 9: the traffic read before the probes, both directions.
TEST_F(NvmlTest, PcieTrafficIsTxPlusRxAndAFailedDirectionIsAnError) {
  FakeGpu copying = busy_h100();
  copying.values["tx"] = 310;
  copying.values["rx"] = 12'500'000;
  FakeGpu half = busy_h100();
  half.values["tx"] = 310;
  half.failures["rx"] = kNvmlErrorUnknown;
  fake().gpus["00000000:17:00.0"] = copying;
  fake().gpus["00000000:2A:00.0"] = half;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  EXPECT_EQ(reader.read_pcie_traffic_kbps(bdf("0000:17:00.0")).value(), 12'500'310U);
  const auto unknown = reader.read_pcie_traffic_kbps(bdf("0000:2a:00.0"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("nvmlDeviceGetPcieThroughput: NVML_ERROR_UNKNOWN"));
}

// Issue 26 item 6: a GPU in MIG mode is seen by CUDA as one of its slices.
TEST_F(NvmlTest, MigModeIsReadPerGpuAndAGpuWithoutMigHasItOff) {
  FakeGpu mig = busy_h100();
  mig.values["mig_mode"] = kNvmlDeviceMigEnable;
  FakeGpu whole = busy_h100();
  whole.values["mig_mode"] = 0;
  FakeGpu no_mig = busy_h100();  // no "mig_mode": NOT_SUPPORTED, as on a GPU without MIG
  FakeGpu broken = busy_h100();
  broken.failures["mig_mode"] = kNvmlErrorUnknown;
  fake().gpus["00000000:17:00.0"] = mig;
  fake().gpus["00000000:2A:00.0"] = whole;
  fake().gpus["00000000:3D:00.0"] = no_mig;
  fake().gpus["00000000:63:00.0"] = broken;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  EXPECT_EQ(reader.read_mig_enabled(bdf("0000:17:00.0")).value(), true);
  EXPECT_EQ(reader.read_mig_enabled(bdf("0000:2a:00.0")).value(), false);
  EXPECT_EQ(reader.read_mig_enabled(bdf("0000:3d:00.0")).value(), false);
  const auto unknown = reader.read_mig_enabled(bdf("0000:63:00.0"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("nvmlDeviceGetMigMode: NVML_ERROR_UNKNOWN"));
}

TEST_F(NvmlTest, MigModeOfAnOldDriverIsUnknown) {
  NvmlApi api = fake_nvml_table();
  api.device_get_mig_mode = nullptr;
  fake().gpus["00000000:17:00.0"] = busy_h100();
  const NvmlLibrary library = open_session(api);
  const NvmlReader reader(library);
  EXPECT_FALSE(reader.read_mig_enabled(bdf("0000:17:00.0")).ok());
}

TEST_F(NvmlTest, ConfidentialComputingStateOfAnOldDriverIsUnknown) {
  NvmlApi api = fake_nvml_table();
  api.system_get_conf_compute_state = nullptr;
  const NvmlLibrary library = open_session(api);
  const NvmlReader reader(library);
  const auto unknown = reader.read_confidential_computing();
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("not exported"));
}

}  // namespace
}  // namespace pcieval
