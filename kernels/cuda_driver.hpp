// The CUDA driver API (libcuda.so.1, which the NVIDIA driver itself
// installs), loaded at run time as NVML and NCCL are: the binary starts on a
// node without a driver and says why the GPU probes cannot run, and one
// binary measures on every driver from R535 on, because the driver API is
// backward compatible and pcieval links no CUDA runtime (a CUDA 13 runtime
// refuses drivers older than R580).
//
// No cuda.h: the few types, constants and entry points used are declared
// here with the C ABI the driver has kept since the _v2 entry points of
// CUDA 4.0; cuda_driver.cpp checks every declaration against cuda.h where the
// toolkit is installed. Each entry point is looked up by its exported,
// versioned name (cuMemAlloc_v2, not the cuMemAlloc macro), so a newer
// toolkit's header can never make pcieval ask an older driver for a symbol it
// lacks.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

// The handle types cuda.h declares (CUstream is CUstream_st*, the same type
// as the runtime's cudaStream_t, which is how NCCL is handed pcieval's
// streams).
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;

namespace pcieval {

using CuResult = int;                    // CUresult: a C enum
using CuDevice = int;                    // CUdevice
using CuDevicePtr = unsigned long long;  // CUdeviceptr (CUdeviceptr_v2)
using CuContext = CUctx_st*;
using CuStream = CUstream_st*;
using CuEvent = CUevent_st*;
using CuModule = CUmod_st*;
using CuFunction = CUfunc_st*;

inline constexpr CuResult kCudaSuccess = 0;
inline constexpr CuResult kCudaErrorNotReady = 600;
// The errors after which a context is unusable until the process exits
// (CUDA's "sticky" errors): every later call on that device fails the same.
inline constexpr CuResult kCudaErrorEccUncorrectable = 214;
inline constexpr CuResult kCudaErrorIllegalAddress = 700;
inline constexpr CuResult kCudaErrorLaunchTimeout = 702;
inline constexpr CuResult kCudaErrorHardwareStackError = 714;
inline constexpr CuResult kCudaErrorIllegalInstruction = 715;
inline constexpr CuResult kCudaErrorMisalignedAddress = 716;
inline constexpr CuResult kCudaErrorInvalidAddressSpace = 717;
inline constexpr CuResult kCudaErrorInvalidPc = 718;
inline constexpr CuResult kCudaErrorLaunchFailed = 719;
// cuCtxEnablePeerAccess of a peer already enabled, cuCtxDisablePeerAccess of
// one that is not: the state asked for holds already.
inline constexpr CuResult kCudaErrorPeerAccessAlreadyEnabled = 704;
inline constexpr CuResult kCudaErrorPeerAccessNotEnabled = 705;

inline constexpr unsigned int kCuStreamNonBlocking = 0x1;            // CU_STREAM_NON_BLOCKING
inline constexpr unsigned int kCuEventDefault = 0x0;                 // CU_EVENT_DEFAULT
inline constexpr unsigned int kCuMemHostAllocPortable = 0x01;        // CU_MEMHOSTALLOC_PORTABLE
inline constexpr unsigned int kCuMemHostAllocDeviceMap = 0x02;       // CU_MEMHOSTALLOC_DEVICEMAP
inline constexpr unsigned int kCuMemHostRegisterPortable = 0x01;     // CU_MEMHOSTREGISTER_PORTABLE
inline constexpr unsigned int kCuMemHostRegisterDeviceMap = 0x02;    // CU_MEMHOSTREGISTER_DEVICEMAP
inline constexpr int kCuDeviceAttributeMultiprocessorCount = 16;     // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
inline constexpr int kCuDeviceAttributeComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR

// Whether `code` leaves the device's context unusable (see above).
[[nodiscard]] constexpr bool cuda_error_is_sticky(CuResult code) {
  switch (code) {
    case kCudaErrorEccUncorrectable:
    case kCudaErrorIllegalAddress:
    case kCudaErrorLaunchTimeout:
    case kCudaErrorHardwareStackError:
    case kCudaErrorIllegalInstruction:
    case kCudaErrorMisalignedAddress:
    case kCudaErrorInvalidAddressSpace:
    case kCudaErrorInvalidPc:
    case kCudaErrorLaunchFailed:
      return true;
    default:
      return false;
  }
}

// The entry points pcieval calls, one pointer per exported symbol (named in
// the comment where the field's name does not say it): the seam tests fill
// with fakes. Every one exists in the driver of CUDA 11.0 and later.
struct CudaDriverApi {
  CuResult (*init)(unsigned int) = nullptr;                        // cuInit
  CuResult (*driver_get_version)(int*) = nullptr;                  // cuDriverGetVersion
  CuResult (*get_error_name)(CuResult, const char**) = nullptr;    // cuGetErrorName
  CuResult (*get_error_string)(CuResult, const char**) = nullptr;  // cuGetErrorString
  CuResult (*device_get_count)(int*) = nullptr;
  CuResult (*device_get)(CuDevice*, int) = nullptr;
  CuResult (*device_get_name)(char*, int, CuDevice) = nullptr;
  CuResult (*device_get_attribute)(int*, int, CuDevice) = nullptr;
  CuResult (*device_get_by_pci_bus_id)(CuDevice*, const char*) = nullptr;
  CuResult (*device_get_pci_bus_id)(char*, int, CuDevice) = nullptr;
  CuResult (*device_primary_ctx_retain)(CuContext*, CuDevice) = nullptr;
  CuResult (*ctx_set_current)(CuContext) = nullptr;
  CuResult (*stream_create)(CuStream*, unsigned int) = nullptr;
  CuResult (*stream_destroy)(CuStream) = nullptr;  // cuStreamDestroy_v2
  CuResult (*stream_query)(CuStream) = nullptr;
  CuResult (*event_create)(CuEvent*, unsigned int) = nullptr;
  CuResult (*event_destroy)(CuEvent) = nullptr;  // cuEventDestroy_v2
  CuResult (*event_record)(CuEvent, CuStream) = nullptr;
  CuResult (*event_query)(CuEvent) = nullptr;
  CuResult (*event_elapsed_time)(float*, CuEvent, CuEvent) = nullptr;  // cuEventElapsedTime (v1: R535 has no _v2)
  CuResult (*stream_wait_event)(CuStream, CuEvent, unsigned int) = nullptr;
  CuResult (*mem_alloc)(CuDevicePtr*, std::size_t) = nullptr;  // cuMemAlloc_v2
  CuResult (*mem_free)(CuDevicePtr) = nullptr;                 // cuMemFree_v2
  CuResult (*mem_host_alloc)(void**, std::size_t, unsigned int) = nullptr;
  CuResult (*mem_free_host)(void*) = nullptr;
  CuResult (*mem_host_register)(void*, std::size_t, unsigned int) = nullptr;  // cuMemHostRegister_v2
  CuResult (*mem_host_unregister)(void*) = nullptr;
  CuResult (*mem_host_get_device_pointer)(CuDevicePtr*, void*, unsigned int) = nullptr;  // cuMemHostGetDevicePointer_v2
  CuResult (*memcpy_htod_async)(CuDevicePtr, const void*, std::size_t, CuStream) = nullptr;  // cuMemcpyHtoDAsync_v2
  CuResult (*memcpy_dtoh_async)(void*, CuDevicePtr, std::size_t, CuStream) = nullptr;        // cuMemcpyDtoHAsync_v2
  CuResult (*memset_d32_async)(CuDevicePtr, unsigned int, std::size_t, CuStream) = nullptr;
  CuResult (*module_load_data)(CuModule*, const void*) = nullptr;
  CuResult (*module_get_function)(CuFunction*, CuModule, const char*) = nullptr;
  CuResult (*launch_kernel)(CuFunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                            unsigned int, unsigned int, CuStream, void**, void**) = nullptr;
  // cuOccupancyMaxActiveBlocksPerMultiprocessor
  CuResult (*occupancy_max_active_blocks_per_multiprocessor)(int*, CuFunction, int, std::size_t) = nullptr;
  // Peer-to-peer (the p2p probes), all in the driver since CUDA 4.0.
  CuResult (*device_can_access_peer)(int*, CuDevice, CuDevice) = nullptr;  // cuDeviceCanAccessPeer
  CuResult (*ctx_enable_peer_access)(CuContext, unsigned int) = nullptr;   // cuCtxEnablePeerAccess
  CuResult (*ctx_disable_peer_access)(CuContext) = nullptr;                // cuCtxDisablePeerAccess
  // cuMemcpyPeerAsync: copies between two contexts' memory whether or not
  // peer access is enabled (staged through host memory when it is not).
  CuResult (*memcpy_peer_async)(CuDevicePtr, CuContext, CuDevicePtr, CuContext, std::size_t, CuStream) = nullptr;
};

inline constexpr std::string_view kCudaDriverLibraryName = "libcuda.so.1";
// Names another library to load instead of libcuda.so.1 (the simulated
// node's, a driver installed elsewhere).
inline constexpr std::string_view kCudaLibraryEnvironment = "PCIEVAL_CUDA_LIBRARY";

// Fills a CudaDriverApi from a symbol lookup (dlsym on the real library; a
// table in tests). Every entry point is required: a missing one is an error
// naming it and the library ("libcuda.so.1 lacks cuMemHostRegister_v2: the
// NVIDIA driver is older than pcieval supports (R535 or later)").
[[nodiscard]] Result<CudaDriverApi> resolve_cuda_driver_api(const std::function<void*(const char* symbol)>& lookup,
                                                            std::string_view library_name);

// The exported symbol names resolve_cuda_driver_api looks up, in its order.
[[nodiscard]] const std::vector<std::string_view>& cuda_driver_symbols();

// What the driver is, for --version and the evidence.
struct CudaDriverInfo {
  std::string library;   // the file loaded: "libcuda.so.1" or $PCIEVAL_CUDA_LIBRARY
  int cuda_version = 0;  // cuDriverGetVersion: 12020 for CUDA 12.2 (R535)
};

// The process's driver: loaded on first use (from $PCIEVAL_CUDA_LIBRARY when
// set and not empty, else libcuda.so.1), its symbols resolved, cuInit(0)
// called; then never unloaded (threads left inside it by a missed deadline
// would lose their code). The outcome, success or error, is the same for the
// rest of the process. Errors say why in one line: "no NVIDIA driver:
// libcuda.so.1 cannot be loaded (...)", a missing entry point, or cuInit's
// code ("cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)").
// Thread-safe.
[[nodiscard]] Result<const CudaDriverApi*> cuda_driver();
// Tells the simulated node (sim/) that soak round `round` begins: a scenario
// can set a fault for a round. The real driver exports no such entry, so on
// a real node, or with no driver, this does nothing.
void tell_simulator_round(int round);
[[nodiscard]] Result<CudaDriverInfo> cuda_driver_info();

// The NVIDIA kernel module's version ("535.129.03") from the text of
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
// 535.129.03  Tue Oct 10 ..."; "Open Kernel Module" for the open modules);
// empty when the text has none.
[[nodiscard]] std::string nvidia_module_version(std::string_view proc_text);

// The lines `pcieval --version` adds about the GPU side: the driver API's
// CUDA version and library, the NVIDIA driver's version where
// /proc/driver/nvidia/version says it, or why there is no driver; and
// whether this build holds its GPU kernels. Loads the driver.
[[nodiscard]] std::string gpu_version_lines();

// "CUDA 12.2" for 12020.
[[nodiscard]] std::string cuda_version_text(int cuda_version);

// "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", with the names
// the loaded driver gives (a code it cannot name: "CUDA error 123").
[[nodiscard]] std::string cuda_error_text(std::string_view call, CuResult code);

}  // namespace pcieval
