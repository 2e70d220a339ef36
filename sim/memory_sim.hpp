// The simulated node's memory map: which ranges of this process are a
// device's memory (cuMemAlloc), pinned host memory from CUDA
// (cuMemHostAlloc) or registered host memory (cuMemHostRegister). Under
// unified addressing a range's device address is its host address. What a
// copy or a kernel may touch is decided here. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace pcieval::sim {

struct Range {
  enum class Kind { kDevice, kHostAlloc, kRegistered };
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
  Kind kind = Kind::kDevice;
  int ordinal = 0;  // the device (kDevice) or the context that pinned it
};

// Where [pointer, pointer + bytes) lies, seen from one device.
enum class Side { kDevice, kPinnedHost, kPageableHost, kOtherDevice };

class MemoryMap {
 public:
  // Zeroed memory of `bytes` for a device or pinned host range; null when
  // the host has none.
  [[nodiscard]] void* allocate(Range::Kind kind, int ordinal, std::size_t bytes);
  // Frees what allocate() of `kind` returned at `begin`; false for any other
  // address (never allocated, of another kind, freed already).
  [[nodiscard]] bool free(std::uintptr_t begin, Range::Kind kind);
  // Records a registered host range; false when it overlaps any range.
  [[nodiscard]] bool add_registration(std::uintptr_t begin, std::size_t bytes, int ordinal);
  // Forgets the registration that starts at `begin`; false when none does.
  [[nodiscard]] bool remove_registration(std::uintptr_t begin);

  [[nodiscard]] Side side_of(int ordinal, std::uintptr_t pointer, std::size_t bytes) const;
  // The device whose memory holds all of [pointer, pointer + bytes); -1 when
  // no device's does.
  [[nodiscard]] int device_of(std::uintptr_t pointer, std::size_t bytes) const;
  // What a kernel of `ordinal` may touch: its own memory or pinned host memory.
  [[nodiscard]] bool reaches(int ordinal, std::uintptr_t pointer, std::size_t bytes) const {
    const Side side = side_of(ordinal, pointer, bytes);
    return side == Side::kDevice || side == Side::kPinnedHost;
  }

 private:
  [[nodiscard]] std::optional<Range> holding_locked(std::uintptr_t begin, std::size_t bytes) const;

  mutable std::mutex mutex_;
  std::map<std::uintptr_t, Range> ranges_;  // by begin, guarded by mutex_
};

}  // namespace pcieval::sim
