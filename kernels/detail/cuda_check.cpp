#include "kernels/detail/cuda_check.hpp"

#include <map>
#include <mutex>

namespace pcieval::detail {
namespace {

// The primary context of each device this process used, retained once and
// never released: releasing the last reference destroys the context, and
// with it every allocation NCCL or a late copy may still use.
struct PrimaryContexts {
  std::mutex mutex;
  std::map<int, CuContext> by_ordinal;  // guarded by mutex
};

PrimaryContexts& primary_contexts() {
  static PrimaryContexts contexts;
  return contexts;
}

Result<CuContext> primary_context(const CudaDriverApi& api, int ordinal) {
  PrimaryContexts& contexts = primary_contexts();
  const std::lock_guard lock(contexts.mutex);
  if (const auto found = contexts.by_ordinal.find(ordinal); found != contexts.by_ordinal.end()) return found->second;
  CuDevice device = 0;
  PCIEVAL_CU_TRY("cuDeviceGet", api.device_get(&device, ordinal));
  CuContext context = nullptr;
  PCIEVAL_CU_TRY("cuDevicePrimaryCtxRetain", api.device_primary_ctx_retain(&context, device));
  contexts.by_ordinal.emplace(ordinal, context);
  return context;
}

}  // namespace

const CudaDriverApi& cu() {
  static const CudaDriverApi kNotLoaded;
  const auto driver = cuda_driver();
  return driver ? *driver.value() : kNotLoaded;
}

Status use_device(int ordinal) {
  if (auto reason = cuda_device_retired_reason(ordinal)) return make_error(*reason);
  PCIEVAL_ASSIGN_OR_RETURN(const CudaDriverApi* api, cuda_driver());
  PCIEVAL_ASSIGN_OR_RETURN(CuContext context, primary_context(*api, ordinal));
  return cuda_status("cuCtxSetCurrent", api->ctx_set_current(context));
}

Result<CuContext> context_of(int ordinal) {
  PCIEVAL_ASSIGN_OR_RETURN(const CudaDriverApi* api, cuda_driver());
  return primary_context(*api, ordinal);
}

bool current_for_release(int ordinal) noexcept {
  if (cuda_device_retired(ordinal)) return false;
  const auto driver = cuda_driver();
  if (!driver) return false;
  PrimaryContexts& contexts = primary_contexts();
  CuContext context = nullptr;
  {
    const std::lock_guard lock(contexts.mutex);
    const auto found = contexts.by_ordinal.find(ordinal);
    if (found == contexts.by_ordinal.end()) return false;
    context = found->second;
  }
  return driver.value()->ctx_set_current(context) == kCudaSuccess;
}

Error device_error(int ordinal, const char* call, CuResult code) {
  Error error = cuda_error(call, code);
  if (cuda_error_is_sticky(code)) {
    retire_cuda_device(ordinal, error.message + where_is(ordinal) + ", which leaves the device's context unusable",
                       RetireCause::kContextError);
  }
  return error;
}

}  // namespace pcieval::detail
