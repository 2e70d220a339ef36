// Peer-to-peer access between two CUDA devices (the p2p probes): whether one
// device may reach another's memory directly, and the per-context switch
// that lets it. A probe changes that switch only through PeerAccessScope,
// which puts back what it found when it ends, so no later probe (nor NCCL in
// the same process) inherits a state pcieval set.
#pragma once

#include "model/result.hpp"

namespace pcieval {

// Whether device `ordinal` can map `peer`'s memory (cuDeviceCanAccessPeer:
// the driver's answer for this pair in this direction, 0 where the platform
// does not route peer traffic, across some CPU sockets, under some IOMMU
// settings).
[[nodiscard]] Result<bool> cuda_can_access_peer(int ordinal, int peer);

// Peer access from `ordinal`'s context to `peer`'s memory held on (enable)
// or off (disable) for the scope's life. The destructor restores the state
// found: access pcieval enabled is disabled again, access it disabled is
// enabled again, access that already was as asked is left alone. On a
// retired device it restores nothing (a wedged context is not touched).
class PeerAccessScope {
 public:
  // cuCtxEnablePeerAccess from `ordinal`'s context; already enabled is fine.
  // Error: the driver refuses (no peer access between them: check
  // cuda_can_access_peer first).
  [[nodiscard]] static Result<PeerAccessScope> enable(int ordinal, int peer);
  // cuCtxDisablePeerAccess; not enabled is fine.
  [[nodiscard]] static Result<PeerAccessScope> disable(int ordinal, int peer);

  PeerAccessScope(const PeerAccessScope&) = delete;
  PeerAccessScope& operator=(const PeerAccessScope&) = delete;
  PeerAccessScope(PeerAccessScope&& other) noexcept;
  PeerAccessScope& operator=(PeerAccessScope&& other) noexcept;
  ~PeerAccessScope();

  // Whether the scope changed the state (and so will change it back).
  [[nodiscard]] bool changed() const { return change_ != Change::kNone; }

 private:
  enum class Change { kNone, kEnabled, kDisabled };
  PeerAccessScope(int ordinal, int peer, Change change) : ordinal_(ordinal), peer_(peer), change_(change) {}
  void restore() noexcept;

  int ordinal_ = -1;
  int peer_ = -1;
  Change change_ = Change::kNone;
};

}  // namespace pcieval
