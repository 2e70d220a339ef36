#include "sim/peer_route.hpp"

#include <algorithm>

#include "sim/node.hpp"

namespace pcieval::sim {
namespace {

constexpr std::size_t kExtendedCapabilitiesStart = 0x100;

std::uint32_t read32(std::span<const std::uint8_t> config, std::size_t offset) {
  return static_cast<std::uint32_t>(config[offset]) | static_cast<std::uint32_t>(config[offset + 1]) << 8 |
         static_cast<std::uint32_t>(config[offset + 2]) << 16 | static_cast<std::uint32_t>(config[offset + 3]) << 24;
}

// Every hop of `device`'s path in one direction: what a copy between the GPU
// and the root complex crosses.
void add_whole_path(std::vector<RouteLeg>& legs, const Device& device, bool to_device) {
  for (std::size_t hop = 0; hop < device.hops.size(); ++hop) legs.push_back({device.ordinal, hop, to_device});
}

// The hops of `device`'s path below chain index `meet` (the bridge where the
// two paths meet): hop i joins chain[2i] to chain[2i + 1] (node.hpp).
void add_path_below(std::vector<RouteLeg>& legs, const Device& device, std::size_t meet, bool to_device) {
  for (std::size_t hop = 0; hop < device.hops.size() && 2 * hop + 1 <= meet; ++hop) {
    legs.push_back({device.ordinal, hop, to_device});
  }
}

}  // namespace

std::optional<std::uint16_t> acs_control(std::span<const std::uint8_t> config) {
  std::size_t offset = kExtendedCapabilitiesStart;
  // A list longer than the space it lives in is a loop: stop.
  for (int steps = 0; steps < 512 && offset >= kExtendedCapabilitiesStart && offset + 8 <= config.size(); ++steps) {
    const std::uint32_t header = read32(config, offset);
    if (header == 0 || header == 0xffffffffU) return std::nullopt;
    if ((header & 0xffffU) == kAcsExtendedCapabilityId) {
      return static_cast<std::uint16_t>(config[offset + kAcsControlOffset] | config[offset + kAcsControlOffset + 1]
                                                                                 << 8);
    }
    offset = (header >> 20) & 0xffcU;
  }
  return std::nullopt;
}

PeerRoute peer_route(const Device& source, const Device& destination, bool peer_access) {
  PeerRoute route;
  if (!peer_access) {
    route.kind = PeerRouteKind::kStagedByHost;
    add_whole_path(route.legs, source, false);
    add_whole_path(route.legs, destination, true);
    return route;
  }
  // Where the two paths first meet, going up from each GPU.
  std::optional<std::size_t> meet_source;
  std::optional<std::size_t> meet_destination;
  for (std::size_t i = 1; i < source.chain.size() && !meet_source; ++i) {
    const auto found = std::find(destination.chain.begin(), destination.chain.end(), source.chain[i]);
    if (found != destination.chain.end()) {
      meet_source = i;
      meet_destination = static_cast<std::size_t>(found - destination.chain.begin());
    }
  }
  // A switch's upstream port sits at an even index above the GPU (2: the
  // GPU's own switch); the root port is the top of the chain.
  const bool in_switch =
      meet_source && *meet_source + 1 < source.chain.size() && *meet_destination + 1 < destination.chain.size();
  if (in_switch) {
    // The downstream ports on the way inside the switch: below the meeting
    // point on both sides.
    const auto redirecting = [](const Device& device, std::size_t meet) -> std::optional<PciAddress> {
      for (std::size_t i = 1; i < meet && i < device.acs_redirect.size(); ++i) {
        if (device.acs_redirect[i]) return device.chain_addresses[i];
      }
      return std::nullopt;
    };
    route.redirecting_port = redirecting(source, *meet_source);
    if (!route.redirecting_port) route.redirecting_port = redirecting(destination, *meet_destination);
    if (!route.redirecting_port) {
      route.kind = PeerRouteKind::kSwitch;
      add_path_below(route.legs, source, *meet_source, false);
      add_path_below(route.legs, destination, *meet_destination, true);
      return route;
    }
    route.kind = PeerRouteKind::kAcsDetour;
  } else {
    route.kind = PeerRouteKind::kRootComplex;
  }
  // Up the source's whole path and down the destination's: with one switch
  // above both, its uplink is crossed twice, once each way.
  add_whole_path(route.legs, source, false);
  add_whole_path(route.legs, destination, true);
  return route;
}

}  // namespace pcieval::sim
