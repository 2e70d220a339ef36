#include "kernels/cuda_device.hpp"

#include <array>
#include <cstdlib>
#include <string>

#include "kernels/cuda_driver.hpp"
#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/module.hpp"

namespace pcieval {
namespace {

std::string visible_devices_note() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return {};
  return " (CUDA_VISIBLE_DEVICES=" + std::string(visible) + ")";
}

}  // namespace

bool built_with_cuda() { return !detail::kernels_ptx().empty(); }

Result<int> cuda_device_count() {
  if (!built_with_cuda()) return make_error(std::string(kBuiltWithoutCudaMessage));
  auto driver = cuda_driver();
  if (!driver) return make_error(driver.error().message + visible_devices_note());
  int count = 0;
  if (const CuResult code = driver.value()->device_get_count(&count); code != kCudaSuccess) {
    return make_error(detail::cuda_error("cuDeviceGetCount", code).message + visible_devices_note());
  }
  if (count == 0) return make_error("CUDA reports no device" + visible_devices_note());
  return count;
}

Result<int> cuda_ordinal_of(const PciAddress& address) {
  if (auto count = cuda_device_count(); !count) return count.error();
  const std::string bus_id = to_string(address);
  CuDevice device = 0;
  if (const CuResult code = detail::cu().device_get_by_pci_bus_id(&device, bus_id.c_str()); code != kCudaSuccess) {
    // The lookup's error says "invalid device", which hides the point.
    return make_error("CUDA does not see the GPU at " + bus_id + visible_devices_note() +
                      ": it is hidden by CUDA_VISIBLE_DEVICES, not a CUDA device, or unusable (" +
                      detail::cuda_error("cuDeviceGetByPCIBusId", code).message + ")");
  }
  // A CUdevice is its ordinal (cuDeviceGet(&device, ordinal) gives back the
  // ordinal on every driver); the rest of kernels/ speaks ordinals.
  return static_cast<int>(device);
}

Result<PciAddress> cuda_pci_address(int ordinal) {
  PCIEVAL_ASSIGN_OR_RETURN(const CudaDriverApi* api, cuda_driver());
  CuDevice device = 0;
  PCIEVAL_CU_TRY("cuDeviceGet", api->device_get(&device, ordinal));
  std::array<char, 32> bus_id{};
  PCIEVAL_CU_TRY("cuDeviceGetPCIBusId",
                 api->device_get_pci_bus_id(bus_id.data(), static_cast<int>(bus_id.size()), device));
  return parse_pci_address(bus_id.data());
}

Result<std::string> cuda_device_name(int ordinal) {
  PCIEVAL_ASSIGN_OR_RETURN(const CudaDriverApi* api, cuda_driver());
  CuDevice device = 0;
  PCIEVAL_CU_TRY("cuDeviceGet", api->device_get(&device, ordinal));
  std::array<char, 256> name{};
  PCIEVAL_CU_TRY("cuDeviceGetName", api->device_get_name(name.data(), static_cast<int>(name.size()), device));
  name.back() = '\0';
  return std::string(name.data());
}

Status preload_kernels(int ordinal) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  // The one module holds every kernel (kernels/device/kernels.cu), and
  // load_kernels looks each one up, which is what loads it.
  return detail::load_kernels(ordinal);
}

}  // namespace pcieval
