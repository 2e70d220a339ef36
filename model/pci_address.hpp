// PCI address (domain:bus:device.function), the key every stage joins on.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace pcieval {

struct PciAddress {
  std::uint32_t domain = 0;  // 16 bits on most hosts; some VMs use wider domains
  std::uint8_t bus = 0;
  std::uint8_t device = 0;    // 0..31
  std::uint8_t function = 0;  // 0..7

  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>.
  auto operator<=>(const PciAddress&) const = default;
};

// Accepts "0000:17:00.0" and the short "17:00.0" (domain 0); hex is
// case-insensitive. Anything else is an error naming the input.
[[nodiscard]] Result<PciAddress> parse_pci_address(std::string_view text);

// Canonical sysfs form: lowercase, four-digit domain ("0000:17:00.0"); wider
// domains print all their digits.
[[nodiscard]] std::string to_string(const PciAddress& address);

// A function's vendor and device IDs: what tells an emulated port from a
// physical one.
struct PciId {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;

  bool operator==(const PciId&) const = default;
};

// "1b36:000c".
[[nodiscard]] std::string to_string(const PciId& id);
// "1b36:000c", hex, case-insensitive; anything else is an error.
[[nodiscard]] Result<PciId> parse_pci_id(std::string_view text);

}  // namespace pcieval
