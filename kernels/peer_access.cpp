#include "kernels/peer_access.hpp"

#include <utility>

#include "kernels/detail/cuda_check.hpp"

namespace pcieval {

Result<bool> cuda_can_access_peer(int ordinal, int peer) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  const CudaDriverApi& api = detail::cu();
  CuDevice device = 0;
  CuDevice peer_device = 0;
  PCIEVAL_CU_TRY("cuDeviceGet", api.device_get(&device, ordinal));
  PCIEVAL_CU_TRY("cuDeviceGet", api.device_get(&peer_device, peer));
  int can = 0;
  PCIEVAL_CU_TRY("cuDeviceCanAccessPeer", api.device_can_access_peer(&can, device, peer_device));
  return can != 0;
}

Result<PeerAccessScope> PeerAccessScope::enable(int ordinal, int peer) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(CuContext peer_context, detail::context_of(peer));
  const CuResult code = detail::cu().ctx_enable_peer_access(peer_context, 0);
  if (code == kCudaErrorPeerAccessAlreadyEnabled) return PeerAccessScope(ordinal, peer, Change::kNone);
  if (code != kCudaSuccess) return detail::device_error(ordinal, "cuCtxEnablePeerAccess", code);
  return PeerAccessScope(ordinal, peer, Change::kEnabled);
}

Result<PeerAccessScope> PeerAccessScope::disable(int ordinal, int peer) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(CuContext peer_context, detail::context_of(peer));
  const CuResult code = detail::cu().ctx_disable_peer_access(peer_context);
  if (code == kCudaErrorPeerAccessNotEnabled) return PeerAccessScope(ordinal, peer, Change::kNone);
  if (code != kCudaSuccess) return detail::device_error(ordinal, "cuCtxDisablePeerAccess", code);
  return PeerAccessScope(ordinal, peer, Change::kDisabled);
}

PeerAccessScope::PeerAccessScope(PeerAccessScope&& other) noexcept
    : ordinal_(other.ordinal_), peer_(other.peer_), change_(std::exchange(other.change_, Change::kNone)) {}

PeerAccessScope& PeerAccessScope::operator=(PeerAccessScope&& other) noexcept {
  if (this != &other) {
    restore();
    ordinal_ = other.ordinal_;
    peer_ = other.peer_;
    change_ = std::exchange(other.change_, Change::kNone);
  }
  return *this;
}

PeerAccessScope::~PeerAccessScope() { restore(); }

void PeerAccessScope::restore() noexcept {
  if (change_ == Change::kNone) return;
  const Change change = std::exchange(change_, Change::kNone);
  // A retired device's context may be wedged, and the peer's too is left be.
  if (cuda_device_retired(peer_) || !detail::current_for_release(ordinal_)) return;
  auto peer_context = detail::context_of(peer_);
  if (!peer_context) return;
  const CudaDriverApi& api = detail::cu();
  static_cast<void>(change == Change::kEnabled ? api.ctx_disable_peer_access(peer_context.value())
                                               : api.ctx_enable_peer_access(peer_context.value(), 0));
}

}  // namespace pcieval
