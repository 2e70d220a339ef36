// How the simulated node routes a copy between two GPUs (sim/README.md):
// across the switch both sit behind, at the narrowest link of both paths up
// to it; through the root complex when their paths meet only there (other
// root ports, other sockets) or when a downstream port on the in-switch
// route redirects peer traffic (ACS ReqRedir or CmpltRedir: the detour up
// the uplink and back down); through host memory when peer access is off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/pci_address.hpp"

namespace pcieval::sim {

struct Device;

// The ACS extended capability's ID, and where its Control register sits.
inline constexpr std::uint16_t kAcsExtendedCapabilityId = 0x000d;
inline constexpr std::uint16_t kAcsControlOffset = 0x06;

// ACS Control of a port from its config space (the extended capability
// list from 0x100: ID bits 15:0, next pointer bits 31:20); nullopt when the
// config space is 256 bytes or less or has no ACS capability.
[[nodiscard]] std::optional<std::uint16_t> acs_control(std::span<const std::uint8_t> config);

// One physical link a copy crosses, in one direction: hop `hop` of device
// `ordinal`'s path (Device::hops), towards the device or towards the host.
struct RouteLeg {
  int ordinal = 0;
  std::size_t hop = 0;
  bool to_device = true;
};

enum class PeerRouteKind {
  kSwitch,        // across the switch both GPUs sit behind
  kRootComplex,   // their paths meet only at the root complex (or not at all: other sockets)
  kAcsDetour,     // one switch, but a port on the way redirects: up the uplink, through the root complex, back
  kStagedByHost,  // peer access off: the driver stages the bytes through host memory
};

struct PeerRoute {
  PeerRouteKind kind = PeerRouteKind::kSwitch;
  std::vector<RouteLeg> legs;
  // kAcsDetour: the downstream port whose ACS Control redirects.
  std::optional<PciAddress> redirecting_port;
};

// The route of bytes from `source`'s memory to `destination`'s. REQUIRES:
// both devices' chain and acs_redirect filled (Node::load).
[[nodiscard]] PeerRoute peer_route(const Device& source, const Device& destination, bool peer_access);

}  // namespace pcieval::sim
