#include "kernels/retired_devices.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

namespace pcieval {
namespace {

struct Registry {
  std::mutex mutex;
  struct Retirement {
    std::string reason;
    RetireCause cause = RetireCause::kDeviceWork;
  };
  std::map<int, Retirement> retirements;  // guarded by mutex
  // Lets the destructors on the hot path skip the lock while nothing was
  // ever retired (every healthy run).
  std::atomic<bool> any{false};
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void retire_cuda_device(int ordinal, std::string reason, RetireCause cause) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.retirements.emplace(ordinal, Registry::Retirement{std::move(reason), cause});
  r.any.store(true, std::memory_order_release);
}

std::optional<std::string> cuda_device_retired_reason(int ordinal) {
  Registry& r = registry();
  if (!r.any.load(std::memory_order_acquire)) return std::nullopt;
  const std::lock_guard lock(r.mutex);
  const auto it = r.retirements.find(ordinal);
  if (it == r.retirements.end()) return std::nullopt;
  return "CUDA device " + std::to_string(ordinal) + " is not used again in this run: " + it->second.reason;
}

bool cuda_device_retired(int ordinal) {
  Registry& r = registry();
  if (!r.any.load(std::memory_order_acquire)) return false;
  const std::lock_guard lock(r.mutex);
  return r.retirements.count(ordinal) != 0;
}

bool cuda_device_hung(int ordinal) {
  Registry& r = registry();
  if (!r.any.load(std::memory_order_acquire)) return false;
  const std::lock_guard lock(r.mutex);
  const auto it = r.retirements.find(ordinal);
  return it != r.retirements.end() && it->second.cause == RetireCause::kDeviceWork;
}

void forget_retired_cuda_devices_for_testing() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.retirements.clear();
  r.any.store(false, std::memory_order_release);
}

}  // namespace pcieval
