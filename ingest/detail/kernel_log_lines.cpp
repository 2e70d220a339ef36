#include "ingest/detail/kernel_log_lines.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "ingest/detail/lspci_text.hpp"

namespace pcieval::kernel_log_lines {

bool contains(std::string_view line, std::string_view marker) { return line.find(marker) != std::string_view::npos; }

// Removes `prefix` from the front of `rest` when it is there; true when it was.
bool consume(std::string_view& rest, std::string_view prefix) {
  if (!rest.starts_with(prefix)) return false;
  rest.remove_prefix(prefix.size());
  return true;
}

// A full sysfs-style address token ("0000:01:00.0"), as dev_printk prints it.
std::optional<PciAddress> full_address(std::string_view token) {
  if (token.size() < 12 || token.find(':') < 4) return std::nullopt;
  return parse_lspci_slot(token);
}

// The device a dev_printk line is about: the last "<driver> <bdf>:" token of
// `prefix` ("pci 0000:01:00.0:", "pcieport 0000:00:01.0:", "nvidia
// 0000:17:00.0:"). Searching backwards keeps syslog prefixes out of the way.
std::optional<PciAddress> device_in(std::string_view prefix) {
  // The last token first: it is the one dev_printk wrote in most lines (and
  // in every enumeration line, thousands in a pasted log), and when it is an
  // address no earlier one can win.
  if (const auto last = prefix.find_last_not_of(' '); last != std::string_view::npos) {
    const auto space = prefix.rfind(' ', last);
    const std::size_t first = space == std::string_view::npos ? 0 : space + 1;
    std::string_view token = prefix.substr(first, last + 1 - first);
    if (token.ends_with(':')) token.remove_suffix(1);
    if (auto address = full_address(token)) return address;
  }
  std::optional<PciAddress> found;
  std::size_t start = 0;
  while (start < prefix.size()) {
    auto end = prefix.find(' ', start);
    if (end == std::string_view::npos) end = prefix.size();
    std::string_view token = prefix.substr(start, end - start);
    if (token.ends_with(':')) token.remove_suffix(1);
    if (auto address = full_address(token)) found = address;
    start = end + 1;
  }
  return found;
}

// "8.0 GT/s PCIe x8 link" / "8 GT/s x8 link" / "Unknown x8 link" at `text`:
// the state, and how far the parse got.
std::optional<LinkState> parse_speed_width(std::string_view text, std::size_t& used) {
  const auto gts = text.find(" GT/s");
  const auto x = text.find(" x");
  if (gts == std::string_view::npos || x == std::string_view::npos || x < gts) return std::nullopt;
  double rate = 0;
  const auto [rate_end, rate_ec] = std::from_chars(text.data(), text.data() + gts, rate);
  if (rate_ec != std::errc{} || rate_end != text.data() + gts) return std::nullopt;
  std::string_view between = text.substr(gts + 5, x - gts - 5);
  if (!between.empty() && between != " PCIe") return std::nullopt;
  int width = 0;
  const char* width_start = text.data() + x + 2;
  const auto [width_end, width_ec] = std::from_chars(width_start, text.data() + text.size(), width);
  if (width_ec != std::errc{} || !is_valid_link_width(width)) return std::nullopt;
  auto gen = gen_from_gts(rate);
  if (!gen) return std::nullopt;
  used = static_cast<std::size_t>(width_end - text.data());
  return LinkState{gen.value(), width};
}

// "NVRM: Xid (PCI:0000:2b:00): 79, pid=..." -> the GPU (function 0) and 79.
// Old drivers print "Xid (0000:01:00): 3, ...".
std::optional<std::pair<PciAddress, int>> parse_xid(std::string_view line) {
  constexpr std::string_view kMarker = "Xid (";
  const auto at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kMarker.size());
  consume(rest, "PCI:");
  const auto close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  auto address = full_address(std::string(rest.substr(0, close)) + ".0");
  if (!address) return std::nullopt;
  rest = rest.substr(close + 1);
  if (!consume(rest, ": ")) return std::nullopt;
  int xid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), xid);
  if (ec != std::errc{}) return std::nullopt;
  return std::pair{*address, xid};
}

// The GPU the driver names in "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID:
// ...)", the first line of the message newer drivers print over three lines
// ("... installed in this system has" / "fallen off the bus and is not
// responding to commands."), with no Xid.
// "NVRM: GPU at 0000:01:00.0 has fallen off the bus." / "NVRM: GPU
// 0000:2b:00.0: GPU has fallen off the bus." / "GPU at PCI:0000:01:00" /
// "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) ...".
std::optional<PciAddress> fallen_gpu(std::string_view line) {
  std::size_t nvrm = line.find("NVRM: GPU ");
  std::size_t skip = 10;
  if (nvrm == std::string_view::npos) {
    nvrm = line.find(kNamedGpu);
    skip = kNamedGpu.size();
  }
  if (nvrm == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(nvrm + skip);
  consume(rest, "at ");
  consume(rest, "PCI:");
  const auto end = rest.find_first_of(" )");
  std::string_view token = rest.substr(0, end);
  if (token.ends_with(':')) token.remove_suffix(1);
  if (auto address = full_address(token)) return address;
  return full_address(std::string(token) + ".0");
}

// What a root port's error announcement says: the device it names and the
// severity, `at` being where "AER: " starts:
//   "AER: Corrected error received: 0000:00:1c.4"          (4.x, 5.x)
//   "AER: Corrected error received: id=0018"                (3.x, RHEL 6/7)
//   "AER: Correctable error message received from 0000:c1:00.0"  (6.x)
//   "AER: Uncorrected (Non-Fatal) error received: 0000:00:1d.2"
//   "AER: Uncorrectable (Fatal) error message received from 0000:63:00.0"
// each also with "Multiple " before the severity. An "id=" is the requester
// id (bus << 8 | device << 3 | function) in the announcing port's domain.
std::optional<Announced> error_received(std::string_view text, std::size_t at) {
  std::string_view rest = text.substr(at + 5);
  consume(rest, "Multiple ");
  Announced announced;
  if (consume(rest, "Corrected ") || consume(rest, "Correctable ")) {
    announced.kind = KernelEventKind::kAerCorrected;
  } else if (consume(rest, "Uncorrected (Fatal) ") || consume(rest, "Uncorrectable (Fatal) ")) {
    announced.kind = KernelEventKind::kAerUncorrectedFatal;
  } else if (consume(rest, "Uncorrected (Non-Fatal) ") || consume(rest, "Uncorrectable (Non-Fatal) ")) {
    announced.kind = KernelEventKind::kAerUncorrectedNonFatal;
  } else {
    return std::nullopt;
  }
  if (!consume(rest, "error message received") && !consume(rest, "error received")) return std::nullopt;
  if (!consume(rest, ": ") && !consume(rest, " from ")) return std::nullopt;
  const std::string_view token = rest.substr(0, rest.find_first_of(" ,"));
  if (auto address = full_address(token)) {
    announced.device = *address;
    return announced;
  }
  const auto port = device_in(text.substr(0, at));
  if (!token.starts_with("id=")) {
    if (!port) return std::nullopt;
    announced.device = *port;
    return announced;
  }
  const auto id = parse_hex_exact(token.substr(3), 4);
  if (!id) {
    if (!port) return std::nullopt;
    announced.device = *port;
    return announced;
  }
  announced.device.domain = port ? port->domain : 0;
  announced.device.bus = static_cast<std::uint8_t>(*id >> 8);
  announced.device.device = static_cast<std::uint8_t>((*id >> 3) & 0x1fU);
  announced.device.function = static_cast<std::uint8_t>(*id & 7U);
  return announced;
}

// "pci 0000:00:03.1: [1022:1483] type 01 class 0x060400 PCIe Root Port", `at`
// being where "] type 0" starts: the kernel's line for each function it
// enumerates (drivers/pci/probe.c, pci_setup_device).
// The address of the function such a line is about, when the "[vvvv:dddd]"
// before `at` has its shape; enumerated_function() reads the rest.
std::optional<PciAddress> enumerated_address(std::string_view text, std::size_t at) {
  const auto open = text.rfind('[', at);
  if (open == std::string_view::npos || at - open != 10 || text[open + 5] != ':') return std::nullopt;
  return device_in(text.substr(0, open));
}

std::optional<EnumeratedFunction> enumerated_function(std::string_view text, std::size_t at) {
  const auto open = text.rfind('[', at);
  if (open == std::string_view::npos || at - open != 10 || text[open + 5] != ':') return std::nullopt;
  const auto vendor = parse_hex_exact(text.substr(open + 1, 4), 4);
  const auto device_id = parse_hex_exact(text.substr(open + 6, 4), 4);
  const auto bdf = enumerated_address(text, at);
  if (!vendor || !device_id || !bdf) return std::nullopt;
  std::string_view rest = text.substr(at + 8);  // past "] type 0", at the header type's last digit
  if (rest.size() < 2) return std::nullopt;
  rest.remove_prefix(1);
  if (!consume(rest, " class 0x")) return std::nullopt;
  const auto class_code = parse_hex_exact(rest.substr(0, 6), 6);
  if (!class_code) return std::nullopt;
  EnumeratedFunction function;
  function.bdf = *bdf;
  function.vendor_id = static_cast<std::uint16_t>(*vendor);
  function.device_id = static_cast<std::uint16_t>(*device_id);
  function.class_code = *class_code;
  const std::string_view type = trim_blanks(rest.substr(std::min<std::size_t>(6, rest.size())));
  if (type.starts_with("PCIe ") || type.starts_with("conventional PCI")) {
    function.port_type = quoted(type).substr(1, std::min<std::size_t>(type.size(), 40));
  }
  return function;
}

// "[ 6] BadTLP                 (First)" -> "BadTLP"; "[12] Replay Timer
// Timeout" -> "Replay Timer Timeout".
std::optional<std::string> error_bit(std::string_view text) {
  if (!text.starts_with('[')) return std::nullopt;
  const auto close = text.find(']');
  if (close == std::string_view::npos || close > 4) return std::nullopt;
  std::string_view name = trim_blanks(text.substr(close + 1));
  if (const auto first = name.find("(First)"); first != std::string_view::npos)
    name = trim_blanks(name.substr(0, first));
  if (name.empty()) return std::nullopt;
  return quoted(name).substr(1, std::min<std::size_t>(name.size(), 40));
}

}  // namespace pcieval::kernel_log_lines
