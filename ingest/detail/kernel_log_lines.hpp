// The grammar of the kernel log lines pcieval reads: the pieces of one line
// (an address, a link speed and width, an Xid, an AER announcement, an
// enumerated function) that the reader (kernel_log.cpp) takes apart once a
// marker has found the line. Pure functions over text.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ingest/kernel_log.hpp"
#include "model/link.hpp"
#include "model/pci_address.hpp"

namespace pcieval::kernel_log_lines {

// The start of the message newer drivers print over three lines when a GPU
// falls off the bus ("NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: ...)").
inline constexpr std::string_view kNamedGpu = "NVRM: The NVIDIA GPU ";

// What a root port's AER announcement names: the device and the severity.
struct Announced {
  PciAddress device;
  KernelEventKind kind = KernelEventKind::kAerCorrected;
};

[[nodiscard]] bool contains(std::string_view line, std::string_view marker);
// Removes `prefix` from the front of `rest` when it is there; true when it was.
bool consume(std::string_view& rest, std::string_view prefix);
// A full address token ("0000:01:00.0"), as dev_printk prints it.
[[nodiscard]] std::optional<PciAddress> full_address(std::string_view token);
// The device a dev_printk line is about: the last address token of `prefix`.
[[nodiscard]] std::optional<PciAddress> device_in(std::string_view prefix);
// "8.0 GT/s PCIe x8" at the start of `text`; `used`: the characters read.
[[nodiscard]] std::optional<LinkState> parse_speed_width(std::string_view text, std::size_t& used);
// "NVRM: Xid (PCI:0000:63:00): 79, ...": the GPU and the Xid.
[[nodiscard]] std::optional<std::pair<PciAddress, int>> parse_xid(std::string_view line);
// The GPU a fell-off-the-bus message names (every form the drivers print).
[[nodiscard]] std::optional<PciAddress> fallen_gpu(std::string_view line);
// The announcement of "AER: ... error received ...", `at` being where "AER: " starts.
[[nodiscard]] std::optional<Announced> error_received(std::string_view text, std::size_t at);
// An enumeration line ("pci 0000:00:03.1: [1022:1483] type 01 class ..."),
// `at` being where "] type 0" starts: its address, or all of it.
[[nodiscard]] std::optional<PciAddress> enumerated_address(std::string_view text, std::size_t at);
[[nodiscard]] std::optional<EnumeratedFunction> enumerated_function(std::string_view text, std::size_t at);
// An AER status dump line's error bit ("[ 6] BadTLP (First)" -> "BadTLP").
[[nodiscard]] std::optional<std::string> error_bit(std::string_view text);

}  // namespace pcieval::kernel_log_lines
