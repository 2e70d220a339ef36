// Text helpers of the lspci parser: the names lspci prints in place of
// numbers, slot and token scanning, and quoting of captured text for notes and
// error readings. Internal to ingest/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/pci_address.hpp"

namespace pcieval {

// The 16-bit class/subclass of a class name as lspci prints it without -nn
// ("VGA compatible controller" -> 0x0300, "PCI bridge" -> 0x0604), from the
// pci.ids names of the classes found on GPU nodes; also "Class 0b40", which
// lspci prints for a class it has no name for. nullopt for other names.
[[nodiscard]] std::optional<std::uint16_t> class_from_name(std::string_view name);

// The vendor id of a device name that starts with one of a small set of
// vendor names (pci.ids spelling): NVIDIA, Mellanox, Intel, AMD, AMD/ATI,
// Broadcom / LSI, Broadcom, PLX, Samsung, Micron, KIOXIA, HighPoint, ASPEED,
// Huawei. Only NVIDIA matters to the verdicts (a GPU is an NVIDIA display or
// 3D controller); the others make the JSON easier to read.
[[nodiscard]] std::optional<std::uint16_t> vendor_from_name(std::string_view device_name);

// `text` in single quotes, cut to 80 characters, with every byte outside
// printable ASCII replaced by '?': captured text goes into notes and JSON,
// which must stay valid UTF-8 and one line whatever the capture held.
[[nodiscard]] std::string quoted(std::string_view text);

// Exactly `digits` hex digits (any case), nothing else.
[[nodiscard]] std::optional<std::uint32_t> parse_hex_exact(std::string_view text, std::size_t digits);

// "01:00.0" or "0000:01:00.0" (4 to 8 domain digits), exactly as lspci prints
// a slot; nullopt for anything else.
[[nodiscard]] std::optional<PciAddress> parse_lspci_slot(std::string_view token);

// The token after `key` ("Speed ", "Width ") up to a space, comma, tab or '(';
// nullopt when `key` is not in `line`.
[[nodiscard]] std::optional<std::string_view> token_after(std::string_view line, std::string_view key);

// Leading and trailing spaces, tabs and carriage returns removed.
[[nodiscard]] std::string_view trim_blanks(std::string_view text);

// The line of `text` that starts at `start`, without its '\n'; `start` moves
// to the next line's start (past the end after the last line). For the
// readers' loops: `while (start < text.size()) { line = next_line(text, start); ... }`.
[[nodiscard]] std::string_view next_line(std::string_view text, std::size_t& start);

}  // namespace pcieval
