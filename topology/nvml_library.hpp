// NVML (libnvidia-ml.so.1, part of the NVIDIA driver), loaded at run time so
// that the binary starts on a node without the driver and says why the GPU's
// own view of its link is missing: the loader and the C ABI. No nvml.h: the
// few types used are declared here, with the C ABI NVML has kept since the
// _v2 entry points (PCIE-FACTS 6). What pcieval reads through it is
// nvml.hpp's NvmlReader.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"
#include "support/shared_library.hpp"

namespace pcieval {

// nvmlDevice_t: an opaque pointer owned by NVML, valid until nvmlShutdown.
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;

// nvmlReturn_t: a C enum, passed as int.
using NvmlReturn = int;

inline constexpr NvmlReturn kNvmlSuccess = 0;
inline constexpr NvmlReturn kNvmlErrorUninitialized = 1;
inline constexpr NvmlReturn kNvmlErrorInvalidArgument = 2;
inline constexpr NvmlReturn kNvmlErrorNotSupported = 3;
inline constexpr NvmlReturn kNvmlErrorNoPermission = 4;
inline constexpr NvmlReturn kNvmlErrorNotFound = 6;
inline constexpr NvmlReturn kNvmlErrorInsufficientSize = 7;
inline constexpr NvmlReturn kNvmlErrorInsufficientPower = 8;
inline constexpr NvmlReturn kNvmlErrorDriverNotLoaded = 9;
inline constexpr NvmlReturn kNvmlErrorLibraryNotFound = 12;
inline constexpr NvmlReturn kNvmlErrorFunctionNotFound = 13;
inline constexpr NvmlReturn kNvmlErrorGpuIsLost = 15;
inline constexpr NvmlReturn kNvmlErrorLibRmVersionMismatch = 18;
inline constexpr NvmlReturn kNvmlErrorUnknown = 999;

// nvmlPcieUtilCounter_t (NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1).
// TX is what the GPU sent (device-to-host traffic), RX what it received.
enum class NvmlPcieUtilCounter : int {
  kTxBytes = 0,
  kRxBytes = 1,
};

// nvmlPstates_t: 0 (P0, full power) .. 15, and NVML_PSTATE_UNKNOWN.
inline constexpr int kNvmlPstateUnknown = 32;

// nvmlUtilization_t: percent of the last sample period (1/6 s to 1 s) in which
// a kernel ran (gpu) and device memory was read or written (memory).
struct NvmlUtilization {
  unsigned int gpu = 0;
  unsigned int memory = 0;
};
// NVML_DEVICE_NAME_V2_BUFFER_SIZE: room for any name nvmlDeviceGetName returns.
inline constexpr unsigned int kNvmlDeviceNameBufferSize = 96;

// "NVML_ERROR_DRIVER_NOT_LOADED"; "NVML_SUCCESS"; an unknown code gives
// "NVML_ERROR_<code>" so a newer driver's code is still reported.
[[nodiscard]] std::string nvml_return_name(NvmlReturn code);

// "NVML_ERROR_NOT_SUPPORTED (3)": the name to search for, the number to
// compare with a driver's own logs.
[[nodiscard]] std::string nvml_return_text(NvmlReturn code);

// nvmlConfComputeSystemState_t: the system's confidential-computing state.
// ccFeature is NVML_CC_SYSTEM_FEATURE_ENABLED (1) when CC mode is on.
struct NvmlConfComputeSystemState {
  unsigned int environment = 0;
  unsigned int cc_feature = 0;
  unsigned int dev_tools_mode = 0;
};
inline constexpr unsigned int kNvmlCcSystemFeatureEnabled = 1;

// NVML_DEVICE_MIG_ENABLE: nvmlDeviceGetMigMode's mode when MIG is on.
inline constexpr unsigned int kNvmlDeviceMigEnable = 1;

// nvmlGpuP2PCapsIndex_t: the kind of peer access nvmlDeviceGetP2PStatus is
// asked about (NVML_P2P_CAPS_INDEX_READ = 0, _WRITE = 1; NVLINK, ATOMICS and
// PCI follow and are not asked).
enum class NvmlP2PCapsIndex : int {
  kRead = 0,
  kWrite = 1,
};

// nvmlGpuP2PStatus_t, in NVML's order: OK, CHIPSET_NOT_SUPPORED (sic),
// GPU_NOT_SUPPORTED, IOH_TOPOLOGY_NOT_SUPPORTED, DISABLED_BY_REGKEY,
// NOT_SUPPORTED, UNKNOWN. The same order as model's peer_status_words().
inline constexpr int kNvmlP2PStatusOk = 0;
inline constexpr int kNvmlP2PStatusChipsetNotSupported = 1;
inline constexpr int kNvmlP2PStatusGpuNotSupported = 2;
inline constexpr int kNvmlP2PStatusIohTopologyNotSupported = 3;
inline constexpr int kNvmlP2PStatusDisabledByRegkey = 4;
inline constexpr int kNvmlP2PStatusNotSupported = 5;
inline constexpr int kNvmlP2PStatusUnknown = 6;

// The functions pcieval calls, one pointer per NVML symbol: the seam tests
// replace with static fakes. A null optional entry is a symbol the driver does
// not export (an old driver); the field it reads is then left unread.
struct NvmlApi {
  // Required: without these nothing can be read.
  NvmlReturn (*init_v2)() = nullptr;   // nvmlInit_v2
  NvmlReturn (*shutdown)() = nullptr;  // nvmlShutdown
  // nvmlDeviceGetHandleByPciBusId_v2
  NvmlReturn (*device_get_handle_by_pci_bus_id_v2)(const char*, NvmlDevice*) = nullptr;
  // Optional; each named after its symbol (nvmlDeviceGetCurrPcieLinkGeneration ...).
  const char* (*error_string)(NvmlReturn) = nullptr;  // nvmlErrorString
  NvmlReturn (*device_get_curr_pcie_link_generation)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*device_get_max_pcie_link_generation)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*device_get_gpu_max_pcie_link_generation)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*device_get_curr_pcie_link_width)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*device_get_max_pcie_link_width)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*device_get_pcie_replay_counter)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*device_get_pcie_throughput)(NvmlDevice, NvmlPcieUtilCounter, unsigned int*) = nullptr;
  // nvmlPstates_t* in nvml.h: a C enum whose values (0..15, 32) fit any int type.
  NvmlReturn (*device_get_performance_state)(NvmlDevice, int*) = nullptr;
  NvmlReturn (*device_get_name)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*device_get_utilization_rates)(NvmlDevice, NvmlUtilization*) = nullptr;
  // nvmlDeviceGetMigMode: current and pending mode (NVML_DEVICE_MIG_ENABLE = 1).
  NvmlReturn (*device_get_mig_mode)(NvmlDevice, unsigned int*, unsigned int*) = nullptr;
  // nvmlSystemGetConfComputeState (drivers from R535 on).
  NvmlReturn (*system_get_conf_compute_state)(NvmlConfComputeSystemState*) = nullptr;
  // nvmlDeviceGetP2PStatus(device1, device2, nvmlGpuP2PCapsIndex_t,
  // nvmlGpuP2PStatus_t*): both enums are C enums, int-sized.
  NvmlReturn (*device_get_p2p_status)(NvmlDevice, NvmlDevice, NvmlP2PCapsIndex, int*) = nullptr;
};

inline constexpr std::string_view kNvmlLibraryName = "libnvidia-ml.so.1";
// Names another library to load instead (support/shared_library.hpp).
inline constexpr std::string_view kNvmlLibraryEnvironment = "PCIEVAL_NVML_LIBRARY";

// Fills an NvmlApi from a symbol lookup (dlsym on the real library; a table in
// tests). A missing required symbol is an error naming it; a missing optional
// one is left null and its name appended to `missing_optional`.
[[nodiscard]] Result<NvmlApi> resolve_nvml_api(const std::function<void*(const char* symbol)>& lookup,
                                               std::string_view library_name,
                                               std::vector<std::string>* missing_optional = nullptr);

// An initialised NVML session: the dlopen handle (when loaded from a file) and
// the nvmlInit_v2 it made. The destructor calls nvmlShutdown, then dlclose,
// unless a reader's call into NVML missed its deadline and has not returned:
// then it does neither (shutdown would wait on the stuck call, and unloading
// would pull the code from under it) and the session is left to the process's
// exit. Move-only; a moved-from session owns nothing.
class NvmlLibrary {
 public:
  // dlopens `library_name` (RTLD_NOW: a missing symbol is found here, not
  // mid-run), resolves the symbols and calls nvmlInit_v2. Errors:
  // "libnvidia-ml.so.1 not found: NVIDIA driver not installed", a missing
  // required symbol, or the init failure with the NVML code
  // ("... NVML_ERROR_DRIVER_NOT_LOADED (9) ...").
  [[nodiscard]] static Result<NvmlLibrary> load(std::string_view library_name = kNvmlLibraryName);

  // Takes an already resolved table (a fake in tests) and calls its init_v2.
  // `api` must have the required entries.
  [[nodiscard]] static Result<NvmlLibrary> from_api(const NvmlApi& api, std::vector<std::string> missing_optional = {});

  NvmlLibrary(NvmlLibrary&& other) noexcept;
  NvmlLibrary& operator=(NvmlLibrary&& other) noexcept;
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary();

  [[nodiscard]] const NvmlApi& api() const { return api_; }
  // Optional symbols the driver lacks ("nvmlDeviceGetGpuMaxPcieLinkGeneration"),
  // for a note in the evidence: the fields they read stay unknown.
  [[nodiscard]] const std::vector<std::string>& missing_symbols() const { return missing_optional_; }

  // How many calls into this session missed their deadline and are still
  // running (NvmlReader counts them here). Shared with the threads that run
  // them, which may outlive the session.
  [[nodiscard]] std::shared_ptr<std::atomic<int>> stuck_calls() const { return stuck_calls_; }

 private:
  NvmlLibrary(SharedLibrary library, const NvmlApi& api, std::vector<std::string> missing_optional);
  // Calls nvmlInit_v2; on success the destructor owes nvmlShutdown.
  [[nodiscard]] Status init();
  void release() noexcept;

  SharedLibrary library_;  // owns nothing for a table given by from_api
  NvmlApi api_;
  std::vector<std::string> missing_optional_;
  bool initialised_ = false;  // nvmlInit_v2 succeeded: nvmlShutdown is owed
  std::shared_ptr<std::atomic<int>> stuck_calls_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace pcieval
