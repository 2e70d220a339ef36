#include "kernels/detail/module.hpp"

#include <map>
#include <mutex>
#include <string>

#include "kernels/cuda_device.hpp"
#include "kernels/detail/cuda_check.hpp"

namespace pcieval::detail {
namespace {

struct LoadedModule {
  CuModule module = nullptr;
  std::array<CuFunction, kKernelCount> functions{};
};

// One module per device, loaded once and kept for the process (as the
// primary context it lives in is).
struct Modules {
  std::mutex mutex;
  std::map<int, LoadedModule> by_ordinal;  // guarded by mutex
};

Modules& modules() {
  static Modules instance;
  return instance;
}

Result<LoadedModule> load_module(int ordinal) {
  const std::string_view ptx = kernels_ptx();
  if (ptx.empty()) return make_error(std::string(kBuiltWithoutCudaMessage));
  const CudaDriverApi& api = cu();
  LoadedModule loaded;
  // The image must end with a NUL: the PTX is a C string to the driver.
  if (const CuResult code = api.module_load_data(&loaded.module, ptx.data()); code != kCudaSuccess) {
    return make_error("cannot load pcieval's GPU kernels (PTX " + std::string(kKernelsPtxVersion) + ")" +
                      where_is(ordinal) + ": " + cuda_error("cuModuleLoadData", code).message);
  }
  for (std::size_t i = 0; i < kKernelCount; ++i) {
    // With lazy loading (CUDA_MODULE_LOADING=LAZY, the default from CUDA
    // 12.2) this is what loads the function.
    const std::string name(kKernelNames[i]);
    if (const CuResult code = api.module_get_function(&loaded.functions[i], loaded.module, name.c_str());
        code != kCudaSuccess) {
      return make_error("kernel " + name + where_is(ordinal) + ": " + cuda_error("cuModuleGetFunction", code).message);
    }
  }
  return loaded;
}

Result<const LoadedModule*> module_of(int ordinal) {
  Modules& all = modules();
  const std::lock_guard lock(all.mutex);
  if (const auto found = all.by_ordinal.find(ordinal); found != all.by_ordinal.end()) return &found->second;
  PCIEVAL_ASSIGN_OR_RETURN(LoadedModule loaded, load_module(ordinal));
  return &all.by_ordinal.emplace(ordinal, loaded).first->second;
}

}  // namespace

Status load_kernels(int ordinal) {
  auto loaded = module_of(ordinal);
  if (!loaded) return loaded.error();
  return ok_status();
}

Result<CuFunction> kernel_function(int ordinal, Kernel kernel) {
  PCIEVAL_ASSIGN_OR_RETURN(const LoadedModule* loaded, module_of(ordinal));
  return loaded->functions[static_cast<std::size_t>(kernel)];
}

Status launch(int ordinal, Kernel kernel, unsigned int grid, unsigned int block, CuStream stream, void** arguments) {
  PCIEVAL_ASSIGN_OR_RETURN(CuFunction function, kernel_function(ordinal, kernel));
  const CuResult code = cu().launch_kernel(function, grid, 1, 1, block, 1, 1, 0, stream, arguments, nullptr);
  if (code == kCudaSuccess) return ok_status();
  const Error error = device_error(ordinal, "cuLaunchKernel", code);
  return make_error(std::string(kernel_name(kernel)) + ": " + error.message);
}

Result<int> saturating_blocks(int ordinal, Kernel kernel) {
  PCIEVAL_ASSIGN_OR_RETURN(CuFunction function, kernel_function(ordinal, kernel));
  const CudaDriverApi& api = cu();
  CuDevice device = 0;
  PCIEVAL_CU_TRY("cuDeviceGet", api.device_get(&device, ordinal));
  int sm_count = 0;
  PCIEVAL_CU_TRY("cuDeviceGetAttribute",
                 api.device_get_attribute(&sm_count, kCuDeviceAttributeMultiprocessorCount, device));
  int per_sm = 0;
  PCIEVAL_CU_TRY(
      "cuOccupancyMaxActiveBlocksPerMultiprocessor",
      api.occupancy_max_active_blocks_per_multiprocessor(&per_sm, function, static_cast<int>(kThreadsPerBlock), 0));
  return sm_count * (per_sm > 0 ? per_sm : 1);
}

unsigned int grid_for(int blocks, std::size_t elements) {
  const std::size_t needed = (elements + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::size_t most = blocks > 0 ? static_cast<std::size_t>(blocks) : 1;
  const std::size_t chosen = needed < most ? needed : most;
  return static_cast<unsigned int>(chosen > 0 ? chosen : 1);
}

}  // namespace pcieval::detail
