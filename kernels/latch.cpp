#include "kernels/latch.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/launchers.hpp"

namespace pcieval {
namespace {

constexpr int kFlagCount = 2;
constexpr int kReleaseFlag = 0;
constexpr int kTimedOutFlag = 1;

}  // namespace

Result<Latch> Latch::create(int ordinal, double timeout_s) {
  if (!(timeout_s > 0)) return make_error("a latch timeout must be positive, got " + std::to_string(timeout_s) + " s");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  void* flags = nullptr;
  // Mapped: the spin kernel reads the release flag from host memory. Portable:
  // streams of every device can be held by one latch.
  PCIEVAL_CU_TRY("cuMemHostAlloc", detail::cu().mem_host_alloc(&flags, kFlagCount * sizeof(int),
                                                               kCuMemHostAllocDeviceMap | kCuMemHostAllocPortable));
  Latch latch(ordinal, static_cast<int*>(flags), timeout_s);
  latch.arm();
  return Result<Latch>(std::move(latch));
}

Latch::Latch(Latch&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      flags_(std::exchange(other.flags_, nullptr)),
      timeout_s_(std::exchange(other.timeout_s_, 0)) {}

Latch& Latch::operator=(Latch&& other) noexcept {
  if (this != &other) {
    Latch old(std::move(*this));
    ordinal_ = std::exchange(other.ordinal_, -1);
    flags_ = std::exchange(other.flags_, nullptr);
    timeout_s_ = std::exchange(other.timeout_s_, 0);
  }
  return *this;
}

Latch::~Latch() {
  if (flags_ == nullptr) return;
  // A spin kernel still waiting would read freed memory: open the latch
  // first. (Every user synchronizes its streams before this point.)
  release();
  // cuMemFreeHost synchronizes; on a retired device it could block for ever,
  // and a spin kernel there may still read the flags: they are leaked.
  if (detail::current_for_release(ordinal_)) static_cast<void>(detail::cu().mem_free_host(flags_));
}

void Latch::arm() {
  std::atomic_ref<int>(flags_[kReleaseFlag]).store(0, std::memory_order_release);
  std::atomic_ref<int>(flags_[kTimedOutFlag]).store(0, std::memory_order_release);
}

Status Latch::hold(const Stream& stream) {
  PCIEVAL_TRY_STATUS(detail::use_device(stream.ordinal()));
  CuDevicePtr device_flags = 0;
  PCIEVAL_CU_TRY("cuMemHostGetDevicePointer_v2", detail::cu().mem_host_get_device_pointer(&device_flags, flags_, 0));
  auto* flags = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(device_flags));
  const auto timeout_ns = static_cast<unsigned long long>(timeout_s_ * 1e9);
  return detail::launch_latch(stream, flags + kReleaseFlag * sizeof(int), flags + kTimedOutFlag * sizeof(int),
                              timeout_ns);
}

void Latch::release() { std::atomic_ref<int>(flags_[kReleaseFlag]).store(1, std::memory_order_release); }

bool Latch::timed_out() const {
  return std::atomic_ref<int>(flags_[kTimedOutFlag]).load(std::memory_order_acquire) != 0;
}

}  // namespace pcieval
