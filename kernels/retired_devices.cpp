#include "kernels/retired_devices.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

namespace pcieval {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<int, std::string> reasons;  // guarded by mutex
  // Lets the destructors on the hot path skip the lock while nothing was
  // ever retired (every healthy run).
  std::atomic<bool> any{false};
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void retire_cuda_device(int ordinal, std::string reason) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.reasons.emplace(ordinal, std::move(reason));
  r.any.store(true, std::memory_order_release);
}

std::optional<std::string> cuda_device_retired_reason(int ordinal) {
  Registry& r = registry();
  if (!r.any.load(std::memory_order_acquire)) return std::nullopt;
  const std::lock_guard lock(r.mutex);
  const auto it = r.reasons.find(ordinal);
  if (it == r.reasons.end()) return std::nullopt;
  return "CUDA device " + std::to_string(ordinal) + " is not used again in this run: " + it->second;
}

bool cuda_device_retired(int ordinal) {
  Registry& r = registry();
  if (!r.any.load(std::memory_order_acquire)) return false;
  const std::lock_guard lock(r.mutex);
  return r.reasons.count(ordinal) != 0;
}

void forget_retired_cuda_devices_for_testing() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.reasons.clear();
  r.any.store(false, std::memory_order_release);
}

}  // namespace pcieval
