#include "sim/memory_sim.hpp"

#include <sys/mman.h>

namespace pcieval::sim {

void* MemoryMap::allocate(Range::Kind kind, int ordinal, std::size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  const auto begin = reinterpret_cast<std::uintptr_t>(memory);
  const std::lock_guard lock(mutex_);
  ranges_[begin] = Range{begin, bytes, kind, ordinal};
  return memory;
}

bool MemoryMap::free(std::uintptr_t begin, Range::Kind kind) {
  const std::lock_guard lock(mutex_);
  const auto found = ranges_.find(begin);
  if (found == ranges_.end() || found->second.kind != kind) return false;
  munmap(reinterpret_cast<void*>(found->second.begin), found->second.bytes);
  ranges_.erase(found);
  return true;
}

bool MemoryMap::add_registration(std::uintptr_t begin, std::size_t bytes, int ordinal) {
  const std::lock_guard lock(mutex_);
  auto after = ranges_.lower_bound(begin + bytes);
  if (after != ranges_.begin()) {
    const Range& before = std::prev(after)->second;
    if (before.begin + before.bytes > begin) return false;
  }
  ranges_[begin] = Range{begin, bytes, Range::Kind::kRegistered, ordinal};
  return true;
}

bool MemoryMap::remove_registration(std::uintptr_t begin) {
  const std::lock_guard lock(mutex_);
  const auto found = ranges_.find(begin);
  if (found == ranges_.end() || found->second.kind != Range::Kind::kRegistered) return false;
  ranges_.erase(found);
  return true;
}

std::optional<Range> MemoryMap::holding_locked(std::uintptr_t begin, std::size_t bytes) const {
  auto it = ranges_.upper_bound(begin);
  if (it == ranges_.begin()) return std::nullopt;
  const Range& range = std::prev(it)->second;
  if (begin < range.begin || begin + bytes > range.begin + range.bytes) return std::nullopt;
  return range;
}

Side MemoryMap::side_of(int ordinal, std::uintptr_t pointer, std::size_t bytes) const {
  const std::lock_guard lock(mutex_);
  const auto range = holding_locked(pointer, bytes);
  if (!range) return Side::kPageableHost;
  if (range->kind == Range::Kind::kDevice) return range->ordinal == ordinal ? Side::kDevice : Side::kOtherDevice;
  return Side::kPinnedHost;
}

int MemoryMap::device_of(std::uintptr_t pointer, std::size_t bytes) const {
  const std::lock_guard lock(mutex_);
  const auto range = holding_locked(pointer, bytes);
  return range && range->kind == Range::Kind::kDevice ? range->ordinal : -1;
}

}  // namespace pcieval::sim
