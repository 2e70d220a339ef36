#include "topology/nvml_library.hpp"

#include <utility>

#include "model/enum_names.hpp"

namespace pcieval {
namespace {

// Names from nvml.h's nvmlReturn_t; numbers that are not here print as
// NVML_ERROR_<n>.
constexpr EnumNames<NvmlReturn, 31> kReturnNames{{
    {0, "NVML_SUCCESS"},
    {1, "NVML_ERROR_UNINITIALIZED"},
    {2, "NVML_ERROR_INVALID_ARGUMENT"},
    {3, "NVML_ERROR_NOT_SUPPORTED"},
    {4, "NVML_ERROR_NO_PERMISSION"},
    {5, "NVML_ERROR_ALREADY_INITIALIZED"},
    {6, "NVML_ERROR_NOT_FOUND"},
    {7, "NVML_ERROR_INSUFFICIENT_SIZE"},
    {8, "NVML_ERROR_INSUFFICIENT_POWER"},
    {9, "NVML_ERROR_DRIVER_NOT_LOADED"},
    {10, "NVML_ERROR_TIMEOUT"},
    {11, "NVML_ERROR_IRQ_ISSUE"},
    {12, "NVML_ERROR_LIBRARY_NOT_FOUND"},
    {13, "NVML_ERROR_FUNCTION_NOT_FOUND"},
    {14, "NVML_ERROR_CORRUPTED_INFOROM"},
    {15, "NVML_ERROR_GPU_IS_LOST"},
    {16, "NVML_ERROR_RESET_REQUIRED"},
    {17, "NVML_ERROR_OPERATING_SYSTEM"},
    {18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH"},
    {19, "NVML_ERROR_IN_USE"},
    {20, "NVML_ERROR_MEMORY"},
    {21, "NVML_ERROR_NO_DATA"},
    {22, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED"},
    {23, "NVML_ERROR_INSUFFICIENT_RESOURCES"},
    {24, "NVML_ERROR_FREQ_NOT_SUPPORTED"},
    {25, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH"},
    {26, "NVML_ERROR_DEPRECATED"},
    {27, "NVML_ERROR_NOT_READY"},
    {28, "NVML_ERROR_GPU_NOT_FOUND"},
    {29, "NVML_ERROR_INVALID_STATE"},
    {999, "NVML_ERROR_UNKNOWN"},
}};

// What an operator can do about an init failure; none where NVML's own text
// is as good as anything said here.
constexpr EnumNames<NvmlReturn, 4> kInitHints{{
    {kNvmlErrorDriverNotLoaded, "the NVIDIA kernel driver is not loaded (check `lsmod | grep nvidia` and dmesg)"},
    {kNvmlErrorNoPermission, "no permission to open the /dev/nvidia* device files"},
    {kNvmlErrorLibRmVersionMismatch,
     "libnvidia-ml.so.1 and the loaded kernel driver are different versions (reload the driver or reboot)"},
    {kNvmlErrorLibraryNotFound, "NVML could not find its own libraries"},
}};

}  // namespace

std::string nvml_return_name(NvmlReturn code) {
  const std::string_view name = name_of(kReturnNames, code, "");
  if (!name.empty()) return std::string(name);
  return "NVML_ERROR_" + std::to_string(code);
}

std::string nvml_return_text(NvmlReturn code) { return nvml_return_name(code) + " (" + std::to_string(code) + ")"; }

Result<NvmlApi> resolve_nvml_api(const std::function<void*(const char* symbol)>& lookup, std::string_view library_name,
                                 std::vector<std::string>* missing_optional) {
  NvmlApi api;
  std::vector<std::string> missing_required;
  std::vector<std::string> missing;
  const auto want = [&](auto& slot, const char* name, bool required) {
    if (bind_symbol(slot, name, lookup)) return;
    (required ? missing_required : missing).emplace_back(name);
  };
  want(api.init_v2, "nvmlInit_v2", true);
  want(api.shutdown, "nvmlShutdown", true);
  want(api.device_get_handle_by_pci_bus_id_v2, "nvmlDeviceGetHandleByPciBusId_v2", true);
  want(api.error_string, "nvmlErrorString", false);
  want(api.device_get_curr_pcie_link_generation, "nvmlDeviceGetCurrPcieLinkGeneration", false);
  want(api.device_get_max_pcie_link_generation, "nvmlDeviceGetMaxPcieLinkGeneration", false);
  // Newer than the others (drivers from about 2021): often absent on old nodes.
  want(api.device_get_gpu_max_pcie_link_generation, "nvmlDeviceGetGpuMaxPcieLinkGeneration", false);
  want(api.device_get_curr_pcie_link_width, "nvmlDeviceGetCurrPcieLinkWidth", false);
  want(api.device_get_max_pcie_link_width, "nvmlDeviceGetMaxPcieLinkWidth", false);
  want(api.device_get_pcie_replay_counter, "nvmlDeviceGetPcieReplayCounter", false);
  want(api.device_get_pcie_throughput, "nvmlDeviceGetPcieThroughput", false);
  want(api.device_get_performance_state, "nvmlDeviceGetPerformanceState", false);
  want(api.device_get_name, "nvmlDeviceGetName", false);
  want(api.device_get_utilization_rates, "nvmlDeviceGetUtilizationRates", false);
  want(api.device_get_mig_mode, "nvmlDeviceGetMigMode", false);
  want(api.system_get_conf_compute_state, "nvmlSystemGetConfComputeState", false);
  want(api.device_get_p2p_status, "nvmlDeviceGetP2PStatus", false);
  if (!missing_required.empty()) {
    std::string names;
    for (const auto& name : missing_required) names += (names.empty() ? "" : ", ") + name;
    return make_error(std::string(library_name) + " lacks " + names +
                      ": not an NVML library, or a driver too old for pcieval");
  }
  if (missing_optional != nullptr) *missing_optional = std::move(missing);
  return api;
}

Result<NvmlLibrary> NvmlLibrary::load(std::string_view library_name) {
  const std::string name(library_name);
  auto opened = SharedLibrary::open(name);
  if (!opened) {
    const std::string& why = opened.error().message;
    if (library_name == kNvmlLibraryName && why.find("No such file or directory") != std::string::npos) {
      return make_error(name + " not found: NVIDIA driver not installed");
    }
    return make_error(name + " could not be loaded: " + why);
  }
  std::vector<std::string> missing;
  auto api = resolve_nvml_api([&opened](const char* symbol) { return opened.value().symbol(symbol); }, name, &missing);
  if (!api) return api.error();
  NvmlLibrary library(std::move(opened).value(), api.value(), std::move(missing));
  auto status = library.init();
  if (!status) return status.error();
  return library;
}

Result<NvmlLibrary> NvmlLibrary::from_api(const NvmlApi& api, std::vector<std::string> missing_optional) {
  if (api.init_v2 == nullptr || api.shutdown == nullptr || api.device_get_handle_by_pci_bus_id_v2 == nullptr) {
    return make_error("NVML function table lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2");
  }
  NvmlLibrary library(SharedLibrary{}, api, std::move(missing_optional));
  auto status = library.init();
  if (!status) return status.error();
  return library;
}

Status NvmlLibrary::init() {
  const NvmlReturn code = api_.init_v2();
  if (code == kNvmlSuccess) {
    initialised_ = true;
    return ok_status();
  }
  std::string message = "NVML initialisation (nvmlInit_v2) failed: " + nvml_return_text(code);
  const std::string_view hint = name_of(kInitHints, code, "");
  if (!hint.empty()) {
    message += ": " + std::string(hint);
  } else if (api_.error_string != nullptr) {
    message += ": " + std::string(api_.error_string(code));
  }
  return make_error(std::move(message));
}

NvmlLibrary::NvmlLibrary(SharedLibrary library, const NvmlApi& api, std::vector<std::string> missing_optional)
    : library_(std::move(library)), api_(api), missing_optional_(std::move(missing_optional)) {}

NvmlLibrary::NvmlLibrary(NvmlLibrary&& other) noexcept
    : library_(std::move(other.library_)),
      api_(std::exchange(other.api_, NvmlApi{})),
      missing_optional_(std::move(other.missing_optional_)),
      initialised_(std::exchange(other.initialised_, false)),
      stuck_calls_(std::move(other.stuck_calls_)) {}

NvmlLibrary& NvmlLibrary::operator=(NvmlLibrary&& other) noexcept {
  if (this != &other) {
    release();
    library_ = std::move(other.library_);
    api_ = std::exchange(other.api_, NvmlApi{});
    missing_optional_ = std::move(other.missing_optional_);
    initialised_ = std::exchange(other.initialised_, false);
    stuck_calls_ = std::move(other.stuck_calls_);
  }
  return *this;
}

NvmlLibrary::~NvmlLibrary() { release(); }

void NvmlLibrary::release() noexcept {
  if (stuck_calls_ != nullptr && stuck_calls_->load() > 0) {
    // A call is still inside NVML: nvmlShutdown would wait for it (for ever,
    // if it never returns) and dlclose would unmap the code it runs. Both are
    // left to the process's exit.
    initialised_ = false;
    library_.keep_loaded();
    library_ = SharedLibrary{};
    return;
  }
  // A failed shutdown leaves nothing to undo: the process is letting go of
  // NVML either way, so its code is deliberately not checked.
  if (initialised_ && api_.shutdown != nullptr) static_cast<void>(api_.shutdown());
  initialised_ = false;
  // Shutdown first: its code lives in the library being closed.
  library_ = SharedLibrary{};
}

}  // namespace pcieval
