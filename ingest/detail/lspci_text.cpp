#include "ingest/detail/lspci_text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include "ingest/lspci.hpp"

namespace pcieval {
namespace {

// pci.ids names of the classes a GPU node shows. lspci prints the subclass
// name when it has one, else the class name.
constexpr std::array<std::pair<std::string_view, std::uint16_t>, 34> kClassNames = {{
    {"Non-VGA unclassified device", 0x0000},
    {"SCSI storage controller", 0x0100},
    {"IDE interface", 0x0101},
    {"RAID bus controller", 0x0104},
    {"SATA controller", 0x0106},
    {"Serial Attached SCSI controller", 0x0107},
    {"Non-Volatile memory controller", 0x0108},
    {"Mass storage controller", 0x0180},
    {"Ethernet controller", 0x0200},
    {"Infiniband controller", 0x0207},
    {"Fabric controller", 0x0208},
    {"Network controller", 0x0280},
    {"VGA compatible controller", 0x0300},
    {"3D controller", 0x0302},
    {"Display controller", 0x0380},
    {"Multimedia audio controller", 0x0401},
    {"Audio device", 0x0403},
    {"RAM memory", 0x0500},
    {"Memory controller", 0x0580},
    {"Host bridge", 0x0600},
    {"ISA bridge", 0x0601},
    {"PCI bridge", 0x0604},
    {"Bridge", 0x0680},
    {"Serial controller", 0x0700},
    {"Communication controller", 0x0780},
    {"IOMMU", 0x0806},
    {"System peripheral", 0x0880},
    {"USB controller", 0x0c03},
    {"SMBus", 0x0c05},
    {"Encryption controller", 0x1080},
    {"Signal processing controller", 0x1180},
    {"Processing accelerators", 0x1200},
    {"Non-Essential Instrumentation", 0x1300},
    {"Unassigned class", 0xff00},
}};

// Longer names first where one is a prefix of another ("[AMD/ATI]" before "[AMD]").
constexpr std::array<std::pair<std::string_view, std::uint16_t>, 14> kVendorNames = {{
    {"NVIDIA Corporation", 0x10de},
    {"Mellanox Technologies", 0x15b3},
    {"Intel Corporation", 0x8086},
    {"Advanced Micro Devices, Inc. [AMD/ATI]", 0x1002},
    {"Advanced Micro Devices, Inc. [AMD]", 0x1022},
    {"Broadcom / LSI", 0x1000},
    {"Broadcom Inc. and subsidiaries", 0x14e4},
    {"PLX Technology, Inc.", 0x10b5},
    {"Samsung Electronics Co Ltd", 0x144d},
    {"Micron Technology Inc", 0x1344},
    {"KIOXIA Corporation", 0x1e0f},
    {"HighPoint Technologies, Inc.", 0x1103},
    {"ASPEED Technology, Inc.", 0x1a03},
    {"Huawei Technologies Co., Ltd.", 0x19e5},
}};

constexpr std::size_t kQuoteLimit = 80;

}  // namespace

std::optional<std::uint16_t> class_from_name(std::string_view name) {
  for (const auto& [text, code] : kClassNames) {
    if (name == text) return code;
  }
  constexpr std::string_view kNumbered = "Class ";
  if (name.starts_with(kNumbered)) {
    if (const auto code = parse_hex_exact(name.substr(kNumbered.size()), 4)) return static_cast<std::uint16_t>(*code);
  }
  return std::nullopt;
}

std::optional<std::uint16_t> vendor_from_name(std::string_view device_name) {
  for (const auto& [text, id] : kVendorNames) {
    if (!device_name.starts_with(text)) continue;
    // "Intel Corporation" must not match "Intel Corporationx"; names end at a space.
    if (device_name.size() == text.size() || device_name[text.size()] == ' ') return id;
  }
  return std::nullopt;
}

std::string quoted(std::string_view text) {
  std::string out = "'";
  const bool cut = text.size() > kQuoteLimit;
  for (char c : text.substr(0, kQuoteLimit)) {
    const auto byte = static_cast<unsigned char>(c);
    out += (byte >= 0x20 && byte < 0x7f) ? c : '?';
  }
  if (cut) out += "...";
  return out + "'";
}

std::optional<std::uint32_t> parse_hex_exact(std::string_view text, std::size_t digits) {
  if (text.size() != digits || digits == 0 || digits > 8) return std::nullopt;
  std::uint32_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, 16);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

std::optional<PciAddress> parse_lspci_slot(std::string_view token) {
  constexpr std::size_t kShort = 7;  // bb:dd.f
  if (token.size() < kShort) return std::nullopt;
  const std::string_view tail = token.substr(token.size() - kShort);
  if (tail[2] != ':' || tail[5] != '.') return std::nullopt;
  const auto bus = parse_hex_exact(tail.substr(0, 2), 2);
  const auto device = parse_hex_exact(tail.substr(3, 2), 2);
  const auto function = parse_hex_exact(tail.substr(6, 1), 1);
  if (!bus || !device || !function || *device > 0x1f || *function > 7) return std::nullopt;
  PciAddress address;
  address.bus = static_cast<std::uint8_t>(*bus);
  address.device = static_cast<std::uint8_t>(*device);
  address.function = static_cast<std::uint8_t>(*function);
  if (token.size() > kShort) {
    const std::string_view domain = token.substr(0, token.size() - kShort);
    if (domain.size() < 5 || domain.size() > 9 || domain.back() != ':') return std::nullopt;
    const auto value = parse_hex_exact(domain.substr(0, domain.size() - 1), domain.size() - 1);
    if (!value) return std::nullopt;
    address.domain = *value;
  }
  return address;
}

std::optional<std::string_view> token_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + key.size());
  const auto end = rest.find_first_of(" ,(\t");
  return rest.substr(0, end);
}

Reading<PcieGen> parse_lspci_speed(std::string_view text) {
  static constexpr std::pair<std::string_view, PcieGen> kSpeeds[] = {
      {"2.5GT/s", PcieGen::kGen1}, {"5GT/s", PcieGen::kGen2},  {"8GT/s", PcieGen::kGen3},   {"16GT/s", PcieGen::kGen4},
      {"32GT/s", PcieGen::kGen5},  {"64GT/s", PcieGen::kGen6}, {"128GT/s", PcieGen::kGen7},
  };
  for (const auto& [spelling, gen] : kSpeeds) {
    if (text == spelling) return gen;
  }
  std::string lower(text.substr(0, 16));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  if (lower == "unknown") return make_error("speed " + quoted(text) + ": lspci could not decode the link speed");
  return make_error("speed " + quoted(text) + " is not a PCIe link speed lspci prints");
}

Reading<int> parse_lspci_width(std::string_view text) {
  const std::string_view digits = text.starts_with('x') ? text.substr(1) : std::string_view{};
  int lanes = -1;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), lanes);
  if (digits.empty() || ec != std::errc{} || ptr != digits.data() + digits.size()) {
    return make_error("width " + quoted(text) + " is not a link width");
  }
  if (lanes == 0) return make_error("width " + quoted(text) + ": the link is down");
  if (!is_valid_link_width(lanes)) return make_error("width " + quoted(text) + " is not a PCIe link width");
  return lanes;
}

std::string_view next_line(std::string_view text, std::size_t& start) {
  auto end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  const std::string_view line = text.substr(start, end - start);
  start = end + 1;
  return line;
}

std::string_view trim_blanks(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

}  // namespace pcieval
