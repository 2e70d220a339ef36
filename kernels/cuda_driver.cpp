#include "kernels/cuda_driver.hpp"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>

#include "kernels/detail/module.hpp"
#include "support/shared_library.hpp"

// The declarations of cuda_driver.hpp, checked against the real header where
// the build has one (kernels/CMakeLists.txt defines PCIEVAL_CHECK_CUDA_H when
// the CUDA toolkit is found and gives this file its include directory). Each
// entry point must take as many arguments as cuda.h's, of the same sizes: a
// 32-bit size where the driver reads 64 bits (the v1 entry points) fails here.
#if defined(PCIEVAL_CHECK_CUDA_H) && __has_include(<cuda.h>)
#include <cuda.h>

namespace {

template <class R1, class... A1, class R2, class... A2>
constexpr bool same_abi(R1 (*)(A1...), R2 (*)(A2...)) {
  if constexpr (sizeof...(A1) != sizeof...(A2)) {
    return false;
  } else {
    return sizeof(R1) == sizeof(R2) && ((sizeof(A1) == sizeof(A2)) && ...);
  }
}

#define PCIEVAL_CHECK_ENTRY(field, symbol) \
  static_assert(same_abi(decltype(pcieval::CudaDriverApi::field){}, &symbol), #symbol " differs from cuda.h")
PCIEVAL_CHECK_ENTRY(init, cuInit);
PCIEVAL_CHECK_ENTRY(driver_get_version, cuDriverGetVersion);
PCIEVAL_CHECK_ENTRY(get_error_name, cuGetErrorName);
PCIEVAL_CHECK_ENTRY(get_error_string, cuGetErrorString);
PCIEVAL_CHECK_ENTRY(device_get_count, cuDeviceGetCount);
PCIEVAL_CHECK_ENTRY(device_get, cuDeviceGet);
PCIEVAL_CHECK_ENTRY(device_get_name, cuDeviceGetName);
PCIEVAL_CHECK_ENTRY(device_get_attribute, cuDeviceGetAttribute);
PCIEVAL_CHECK_ENTRY(device_get_by_pci_bus_id, cuDeviceGetByPCIBusId);
PCIEVAL_CHECK_ENTRY(device_get_pci_bus_id, cuDeviceGetPCIBusId);
PCIEVAL_CHECK_ENTRY(device_primary_ctx_retain, cuDevicePrimaryCtxRetain);
PCIEVAL_CHECK_ENTRY(ctx_set_current, cuCtxSetCurrent);
PCIEVAL_CHECK_ENTRY(stream_create, cuStreamCreate);
PCIEVAL_CHECK_ENTRY(stream_destroy, cuStreamDestroy_v2);
PCIEVAL_CHECK_ENTRY(stream_query, cuStreamQuery);
PCIEVAL_CHECK_ENTRY(event_create, cuEventCreate);
PCIEVAL_CHECK_ENTRY(event_destroy, cuEventDestroy_v2);
PCIEVAL_CHECK_ENTRY(event_record, cuEventRecord);
PCIEVAL_CHECK_ENTRY(event_query, cuEventQuery);
// cuda.h 13 declares only the _v2 (the v1 that pcieval calls has the same
// arguments; it differs in what it allows of events' flags).
PCIEVAL_CHECK_ENTRY(event_elapsed_time, cuEventElapsedTime_v2);
PCIEVAL_CHECK_ENTRY(stream_wait_event, cuStreamWaitEvent);
PCIEVAL_CHECK_ENTRY(mem_alloc, cuMemAlloc_v2);
PCIEVAL_CHECK_ENTRY(mem_free, cuMemFree_v2);
PCIEVAL_CHECK_ENTRY(mem_host_alloc, cuMemHostAlloc);
PCIEVAL_CHECK_ENTRY(mem_free_host, cuMemFreeHost);
PCIEVAL_CHECK_ENTRY(mem_host_register, cuMemHostRegister_v2);
PCIEVAL_CHECK_ENTRY(mem_host_unregister, cuMemHostUnregister);
PCIEVAL_CHECK_ENTRY(mem_host_get_device_pointer, cuMemHostGetDevicePointer_v2);
PCIEVAL_CHECK_ENTRY(memcpy_htod_async, cuMemcpyHtoDAsync_v2);
PCIEVAL_CHECK_ENTRY(memcpy_dtoh_async, cuMemcpyDtoHAsync_v2);
PCIEVAL_CHECK_ENTRY(memset_d32_async, cuMemsetD32Async);
PCIEVAL_CHECK_ENTRY(module_load_data, cuModuleLoadData);
PCIEVAL_CHECK_ENTRY(module_get_function, cuModuleGetFunction);
PCIEVAL_CHECK_ENTRY(launch_kernel, cuLaunchKernel);
PCIEVAL_CHECK_ENTRY(occupancy_max_active_blocks_per_multiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor);
PCIEVAL_CHECK_ENTRY(device_can_access_peer, cuDeviceCanAccessPeer);
PCIEVAL_CHECK_ENTRY(ctx_enable_peer_access, cuCtxEnablePeerAccess);
PCIEVAL_CHECK_ENTRY(ctx_disable_peer_access, cuCtxDisablePeerAccess);
PCIEVAL_CHECK_ENTRY(memcpy_peer_async, cuMemcpyPeerAsync);
#undef PCIEVAL_CHECK_ENTRY

static_assert(sizeof(CUresult) == sizeof(pcieval::CuResult) && sizeof(CUdevice) == sizeof(pcieval::CuDevice) &&
              sizeof(CUdeviceptr) == sizeof(pcieval::CuDevicePtr) && sizeof(CUdevice_attribute) == sizeof(int));
static_assert(CUDA_SUCCESS == pcieval::kCudaSuccess && CUDA_ERROR_NOT_READY == pcieval::kCudaErrorNotReady);
static_assert(CUDA_ERROR_ECC_UNCORRECTABLE == pcieval::kCudaErrorEccUncorrectable &&
              CUDA_ERROR_ILLEGAL_ADDRESS == pcieval::kCudaErrorIllegalAddress &&
              CUDA_ERROR_LAUNCH_TIMEOUT == pcieval::kCudaErrorLaunchTimeout &&
              CUDA_ERROR_HARDWARE_STACK_ERROR == pcieval::kCudaErrorHardwareStackError &&
              CUDA_ERROR_ILLEGAL_INSTRUCTION == pcieval::kCudaErrorIllegalInstruction &&
              CUDA_ERROR_MISALIGNED_ADDRESS == pcieval::kCudaErrorMisalignedAddress &&
              CUDA_ERROR_INVALID_ADDRESS_SPACE == pcieval::kCudaErrorInvalidAddressSpace &&
              CUDA_ERROR_INVALID_PC == pcieval::kCudaErrorInvalidPc &&
              CUDA_ERROR_LAUNCH_FAILED == pcieval::kCudaErrorLaunchFailed);
static_assert(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED == pcieval::kCudaErrorPeerAccessAlreadyEnabled &&
              CUDA_ERROR_PEER_ACCESS_NOT_ENABLED == pcieval::kCudaErrorPeerAccessNotEnabled);
static_assert(CU_STREAM_NON_BLOCKING == pcieval::kCuStreamNonBlocking && CU_EVENT_DEFAULT == pcieval::kCuEventDefault);
static_assert(CU_MEMHOSTALLOC_PORTABLE == pcieval::kCuMemHostAllocPortable &&
              CU_MEMHOSTALLOC_DEVICEMAP == pcieval::kCuMemHostAllocDeviceMap &&
              CU_MEMHOSTREGISTER_PORTABLE == pcieval::kCuMemHostRegisterPortable &&
              CU_MEMHOSTREGISTER_DEVICEMAP == pcieval::kCuMemHostRegisterDeviceMap);
static_assert(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == pcieval::kCuDeviceAttributeMultiprocessorCount &&
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == pcieval::kCuDeviceAttributeComputeCapabilityMajor);

}  // namespace
#endif

namespace pcieval {
namespace {

// Calls `bind(slot, symbol)` for every entry point, in cuda_driver_symbols()'s
// order: the one list of which symbol fills which field.
template <class Bind>
void for_each_entry(CudaDriverApi& api, Bind&& bind) {
  bind(api.init, "cuInit");
  bind(api.driver_get_version, "cuDriverGetVersion");
  bind(api.get_error_name, "cuGetErrorName");
  bind(api.get_error_string, "cuGetErrorString");
  bind(api.device_get_count, "cuDeviceGetCount");
  bind(api.device_get, "cuDeviceGet");
  bind(api.device_get_name, "cuDeviceGetName");
  bind(api.device_get_attribute, "cuDeviceGetAttribute");
  bind(api.device_get_by_pci_bus_id, "cuDeviceGetByPCIBusId");
  bind(api.device_get_pci_bus_id, "cuDeviceGetPCIBusId");
  bind(api.device_primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  bind(api.ctx_set_current, "cuCtxSetCurrent");
  bind(api.stream_create, "cuStreamCreate");
  bind(api.stream_destroy, "cuStreamDestroy_v2");
  bind(api.stream_query, "cuStreamQuery");
  bind(api.event_create, "cuEventCreate");
  bind(api.event_destroy, "cuEventDestroy_v2");
  bind(api.event_record, "cuEventRecord");
  bind(api.event_query, "cuEventQuery");
  bind(api.event_elapsed_time, "cuEventElapsedTime");
  bind(api.stream_wait_event, "cuStreamWaitEvent");
  bind(api.mem_alloc, "cuMemAlloc_v2");
  bind(api.mem_free, "cuMemFree_v2");
  bind(api.mem_host_alloc, "cuMemHostAlloc");
  bind(api.mem_free_host, "cuMemFreeHost");
  bind(api.mem_host_register, "cuMemHostRegister_v2");
  bind(api.mem_host_unregister, "cuMemHostUnregister");
  bind(api.mem_host_get_device_pointer, "cuMemHostGetDevicePointer_v2");
  bind(api.memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
  bind(api.memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
  bind(api.memset_d32_async, "cuMemsetD32Async");
  bind(api.module_load_data, "cuModuleLoadData");
  bind(api.module_get_function, "cuModuleGetFunction");
  bind(api.launch_kernel, "cuLaunchKernel");
  bind(api.occupancy_max_active_blocks_per_multiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  bind(api.device_can_access_peer, "cuDeviceCanAccessPeer");
  bind(api.ctx_enable_peer_access, "cuCtxEnablePeerAccess");
  bind(api.ctx_disable_peer_access, "cuCtxDisablePeerAccess");
  bind(api.memcpy_peer_async, "cuMemcpyPeerAsync");
}

// cuda_error_text with the names `api` gives (none while it is not loaded).
std::string error_text(const CudaDriverApi& api, std::string_view call, CuResult code) {
  const char* name = nullptr;
  const char* description = nullptr;
  if (api.get_error_name == nullptr || api.get_error_name(code, &name) != kCudaSuccess) name = nullptr;
  if (api.get_error_string == nullptr || api.get_error_string(code, &description) != kCudaSuccess)
    description = nullptr;
  std::string text(call);
  text += ": ";
  text += name != nullptr ? std::string(name) : "CUDA error " + std::to_string(code);
  if (description != nullptr) text += " (" + std::string(description) + ")";
  return text;
}

// The process's driver, loaded once (cuda_driver()).
struct LoadedDriver {
  SharedLibrary library;
  CudaDriverApi api;
  CudaDriverInfo info;
  std::optional<Error> error;
  void (*simulator_round)(int) = nullptr;  // pcieval_sim_begin_round: the simulator's only
};

LoadedDriver load_driver() {
  LoadedDriver loaded;
  loaded.info.library = library_from_environment(kCudaLibraryEnvironment, kCudaDriverLibraryName);
  const bool from_environment = loaded.info.library != kCudaDriverLibraryName;
  auto library = SharedLibrary::open(loaded.info.library);
  if (!library) {
    loaded.error = make_error(from_environment ? std::string(kCudaLibraryEnvironment) + "=" + loaded.info.library +
                                                     " cannot be loaded (" + library.error().message + ")"
                                               : "no NVIDIA driver: " + loaded.info.library + " cannot be loaded (" +
                                                     library.error().message + ")");
    return loaded;
  }
  loaded.library = std::move(library).value();
  // Never unloaded: a call that missed its deadline may still be running
  // inside it, and the driver's own threads live as long as the process.
  loaded.library.keep_loaded();
  const SharedLibrary& opened = loaded.library;
  auto api =
      resolve_cuda_driver_api([&opened](const char* symbol) { return opened.symbol(symbol); }, loaded.info.library);
  if (!api) {
    loaded.error = api.error();
    return loaded;
  }
  loaded.api = api.value();
  static_cast<void>(bind_symbol(loaded.simulator_round, "pcieval_sim_begin_round",
                                [&opened](const char* symbol) { return opened.symbol(symbol); }));
  if (const CuResult code = loaded.api.init(0); code != kCudaSuccess) {
    loaded.error = make_error(error_text(loaded.api, "cuInit", code));
    return loaded;
  }
  if (const CuResult code = loaded.api.driver_get_version(&loaded.info.cuda_version); code != kCudaSuccess) {
    loaded.error = make_error(error_text(loaded.api, "cuDriverGetVersion", code));
  }
  return loaded;
}

const LoadedDriver& loaded_driver() {
  // A function-local static: initialised once, thread-safe, and the same
  // outcome for every caller.
  static const LoadedDriver driver = load_driver();
  return driver;
}

}  // namespace

const std::vector<std::string_view>& cuda_driver_symbols() {
  static const std::vector<std::string_view> symbols = [] {
    std::vector<std::string_view> names;
    CudaDriverApi api;
    for_each_entry(api, [&names](auto& /*slot*/, const char* name) { names.emplace_back(name); });
    return names;
  }();
  return symbols;
}

Result<CudaDriverApi> resolve_cuda_driver_api(const std::function<void*(const char* symbol)>& lookup,
                                              std::string_view library_name) {
  CudaDriverApi api;
  std::vector<std::string> missing;
  for_each_entry(api, [&](auto& slot, const char* name) {
    if (!bind_symbol(slot, name, lookup)) missing.emplace_back(name);
  });
  if (missing.empty()) return api;
  std::string names;
  for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
  return make_error(std::string(library_name) + " lacks " + names +
                    ": the NVIDIA driver is older than pcieval supports (R535 or later), or the library is not "
                    "the CUDA driver");
}

Result<const CudaDriverApi*> cuda_driver() {
  const LoadedDriver& driver = loaded_driver();
  if (driver.error) return *driver.error;
  return &driver.api;
}

void tell_simulator_round(int round) {
  const LoadedDriver& driver = loaded_driver();
  if (!driver.error && driver.simulator_round != nullptr) driver.simulator_round(round);
}

Result<CudaDriverInfo> cuda_driver_info() {
  const LoadedDriver& driver = loaded_driver();
  if (driver.error) return *driver.error;
  return driver.info;
}

std::string nvidia_module_version(std::string_view proc_text) {
  static const std::regex kVersion(R"(Kernel Module(?: for \S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?))");
  const std::string text(proc_text.substr(0, proc_text.find('\n')));
  std::smatch match;
  if (!std::regex_search(text, match, kVersion)) return {};
  return match[1].str();
}

std::string gpu_version_lines() {
  std::string lines = "CUDA driver: ";
  if (auto info = cuda_driver_info()) {
    lines += cuda_version_text(info.value().cuda_version) + " driver API (" + info.value().library + ")";
    std::ifstream proc("/proc/driver/nvidia/version");
    std::ostringstream text;
    text << proc.rdbuf();
    if (const std::string module = nvidia_module_version(text.str()); !module.empty()) {
      lines += ", NVIDIA driver " + module;
    }
  } else {
    lines += info.error().message;
  }
  lines += "\nGPU kernels: ";
  lines += detail::kernels_ptx().empty()
               ? "none (built without nvcc)"
               : "PTX " + std::string(detail::kKernelsPtxVersion) + " (drivers from R535 on compile it)";
  return lines;
}

std::string cuda_version_text(int cuda_version) {
  if (cuda_version <= 0) return "CUDA (version unknown)";
  return "CUDA " + std::to_string(cuda_version / 1000) + "." + std::to_string((cuda_version % 1000) / 10);
}

std::string cuda_error_text(std::string_view call, CuResult code) {
  return error_text(loaded_driver().api, call, code);
}

}  // namespace pcieval
