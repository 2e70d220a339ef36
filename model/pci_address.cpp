#include "model/pci_address.hpp"

#include <charconv>
#include <cstdio>
#include <optional>
#include <string>

namespace pcieval {
namespace {

// Parses exactly `text` as lowercase or uppercase hex, no prefix, no sign.
bool parse_hex(std::string_view text, std::uint32_t max_value, std::uint32_t& out) {
  if (text.empty() || text.size() > 8) return false;
  std::uint32_t value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, 16);
  if (ec != std::errc{} || ptr != end || value > max_value) return false;
  out = value;
  return true;
}

Error bad_address(std::string_view text, std::string_view why) {
  return make_error("invalid PCI address '" + std::string(text) + "': " + std::string(why) +
                    " (expected domain:bus:device.function such as 0000:17:00.0, or bus:device.function)");
}

}  // namespace

Result<PciAddress> parse_pci_address(std::string_view text) {
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return bad_address(text, "no '.' before the function");
  const auto last_colon = text.rfind(':', dot);
  if (last_colon == std::string_view::npos) return bad_address(text, "no ':' before the device");
  const auto bus_start = text.rfind(':', last_colon - (last_colon > 0 ? 1 : 0));
  const bool has_domain = last_colon > 0 && bus_start != std::string_view::npos;

  std::string_view domain_text = has_domain ? text.substr(0, bus_start) : std::string_view{};
  std::string_view bus_text =
      has_domain ? text.substr(bus_start + 1, last_colon - bus_start - 1) : text.substr(0, last_colon);
  std::string_view device_text = text.substr(last_colon + 1, dot - last_colon - 1);
  std::string_view function_text = text.substr(dot + 1);

  PciAddress address;
  std::uint32_t value = 0;
  if (has_domain) {
    if (!parse_hex(domain_text, 0xffffffffU, value)) return bad_address(text, "bad domain");
    address.domain = value;
  }
  if (bus_text.size() > 2 || !parse_hex(bus_text, 0xff, value)) return bad_address(text, "bad bus");
  address.bus = static_cast<std::uint8_t>(value);
  if (device_text.size() > 2 || !parse_hex(device_text, 0x1f, value)) {
    return bad_address(text, "bad device (00-1f)");
  }
  address.device = static_cast<std::uint8_t>(value);
  if (function_text.size() != 1 || !parse_hex(function_text, 7, value)) {
    return bad_address(text, "bad function (0-7)");
  }
  address.function = static_cast<std::uint8_t>(value);
  return address;
}

std::string to_string(const PciAddress& address) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04x:%02x:%02x.%x", address.domain, address.bus, address.device,
                address.function);
  return buffer;
}

std::string to_string(const PciId& id) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04x:%04x", id.vendor, id.device);
  return buffer;
}

Result<PciId> parse_pci_id(std::string_view text) {
  const auto hex16 = [](std::string_view part) -> std::optional<std::uint16_t> {
    std::uint16_t value = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value, 16);
    if (part.size() != 4 || ec != std::errc{} || ptr != part.data() + part.size()) return std::nullopt;
    return value;
  };
  const auto colon = text.find(':');
  if (colon != std::string_view::npos) {
    const auto vendor = hex16(text.substr(0, colon));
    const auto device = hex16(text.substr(colon + 1));
    if (vendor && device) return PciId{*vendor, *device};
  }
  return make_error("'" + std::string(text.substr(0, 32)) + "' is not a PCI vendor:device ID such as 1b36:000c");
}

}  // namespace pcieval
