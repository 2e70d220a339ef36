#include "kernels/cuda_device.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <string>

#include "kernels/detail/cuda_check.cuh"
#include "kernels/detail/kernels.cuh"

namespace pcieval {
namespace {

// cudart_static reports a missing driver as "CUDA driver version is
// insufficient", which reads as an old driver. Whether libcuda can be loaded
// at all says which it is.
std::string driver_missing_reason() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver != nullptr) {
    dlclose(driver);
    return {};
  }
  const char* why = dlerror();
  return "no NVIDIA driver: libcuda.so.1 cannot be loaded (" + std::string(why != nullptr ? why : "unknown reason") +
         ")";
}

std::string visible_devices_note() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return {};
  return " (CUDA_VISIBLE_DEVICES=" + std::string(visible) + ")";
}

}  // namespace

bool built_with_cuda() { return true; }

Result<int> cuda_device_count() {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    if (std::string missing = driver_missing_reason(); !missing.empty()) return make_error(missing);
    return make_error(detail::cuda_error("cudaGetDeviceCount", code).message + visible_devices_note());
  }
  if (count == 0) return make_error("CUDA reports no device" + visible_devices_note());
  return count;
}

Result<int> cuda_ordinal_of(const PciAddress& address) {
  if (auto count = cuda_device_count(); !count) return count.error();
  const std::string bus_id = to_string(address);
  int ordinal = -1;
  const cudaError_t code = cudaDeviceGetByPCIBusId(&ordinal, bus_id.c_str());
  if (code != cudaSuccess) {
    // The lookup's error says "invalid device ordinal", which hides the point.
    return make_error("CUDA does not see the GPU at " + bus_id + visible_devices_note() +
                      ": it is hidden by CUDA_VISIBLE_DEVICES, not a CUDA device, or unusable (" +
                      detail::cuda_error("cudaDeviceGetByPCIBusId", code).message + ")");
  }
  return ordinal;
}

Result<PciAddress> cuda_pci_address(int ordinal) {
  std::array<char, 32> bus_id{};
  PCIEVAL_CUDA_TRY(cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), ordinal));
  return parse_pci_address(bus_id.data());
}

Result<std::string> cuda_device_name(int ordinal) {
  cudaDeviceProp properties{};
  PCIEVAL_CUDA_TRY(cudaGetDeviceProperties(&properties, ordinal));
  return std::string(properties.name);
}

Status preload_kernels(int ordinal) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  // Every .cu file with a kernel is its own module, loaded lazily on its
  // own: each one is listed here (tests/kernels/preload_audit_test.py checks
  // that no __global__ function is missing).
  PCIEVAL_TRY_STATUS(detail::load_kernels_on_current_device());
  return detail::load_all_reduce_kernels_on_current_device();
}

}  // namespace pcieval
