// Joining the lines a mail client or a terminal wrapped back into the kernel
// messages they were (kernel_log.hpp, unwrap_kernel_log). A paste wrapped at
// 72 columns breaks a "limited by" line in two or three, and with it the
// marker the reader looks for; only a join that makes a message this reader
// knows is made, so a stack trace's or a driver's own continuation lines stay
// as they are.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/detail/kernel_log_markers.hpp"
#include "ingest/detail/lspci_text.hpp"
#include "ingest/kernel_log.hpp"

namespace pcieval {
namespace {

// How much of a "limited by" message the text holds: 0 for none, up to 4
// when the limit, the port and the device's capability all parse.
int limited_parts(std::string_view text) {
  if (text.find("available PCIe bandwidth") == std::string_view::npos) return 0;
  const auto limited = parse_bandwidth_limited(text);
  if (!limited) return 0;
  return 1 + (limited->limited_to ? 1 : 0) + (limited->limiting_port ? 1 : 0) + (limited->capable ? 1 : 0);
}

// How much of an enumeration line's port type the text holds: 2 for a whole
// one ("PCIe Root Port"), 1 for the start of one cut by a break ("PCIe
// Root"), 0 for none.
int port_type_parts(std::string_view text) {
  constexpr std::string_view kClass = " class 0x";
  const auto at = text.find("] type 0");
  if (at == std::string_view::npos) return 0;
  const auto class_at = text.find(kClass, at);
  if (class_at == std::string_view::npos) return 0;
  const std::string_view type = trim_blanks(text.substr(std::min(text.size(), class_at + kClass.size() + 6)));
  if (type.empty()) return 0;
  // drivers/pci/probe.c, pci_type_str().
  constexpr std::string_view kTypes[] = {"PCIe Endpoint",
                                         "PCIe Legacy Endpoint",
                                         "PCIe Root Port",
                                         "PCIe Switch Upstream Port",
                                         "PCIe Switch Downstream Port",
                                         "PCIe to PCI/PCI-X bridge",
                                         "PCI/PCI-X to PCIe bridge",
                                         "PCIe Root Complex Integrated Endpoint",
                                         "PCIe Root Complex Event Collector"};
  int best = 0;
  for (const std::string_view known : kTypes) {
    if (type == known) return 2;
    if (known.starts_with(type)) best = 1;
  }
  return best;
}

// `line` with `continuation` after it, when only the joined text holds a
// message: a marker the break split, or more of a "limited by" line than
// either line holds alone (a message of its own on the next line is not a
// continuation). A mail client breaks at a space; a terminal anywhere, so
// both are tried.
std::optional<std::string> joined_message(std::string_view line, std::string_view continuation) {
  const std::size_t apart = kernel_log_markers_in(line) + kernel_log_markers_in(continuation);
  const int parts = std::max(limited_parts(line), limited_parts(continuation));
  for (const std::string_view separator : {std::string_view(" "), std::string_view()}) {
    std::string joined;
    joined.reserve(line.size() + separator.size() + continuation.size());
    joined.append(line).append(separator).append(continuation);
    if (kernel_log_markers_in(joined) > apart || limited_parts(joined) > parts ||
        port_type_parts(joined) > std::max(port_type_parts(line), port_type_parts(continuation))) {
      return joined;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unwrap_kernel_log(std::string_view text, std::size_t* joined_lines) {
  if (text.size() > kMaxUnwrapBytes) return std::nullopt;
  // Each line of the text, and what replaces it once something was joined.
  std::vector<std::string_view> lines;
  std::map<std::size_t, std::string> replaced;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t open = kNone;  // the stamped (or joined) line a continuation may join
  for (std::size_t start = 0; start < text.size();) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::string_view trimmed = trim_blanks(line);
    const bool stamped = !trimmed.empty() && is_kernel_log_line(trimmed);
    if (open != kNone && !trimmed.empty() && !stamped) {
      const auto held = replaced.find(open);
      const std::string_view above = held != replaced.end() ? std::string_view(held->second) : trim_blanks(lines[open]);
      if (auto message = joined_message(above, trimmed)) {
        replaced[open] = std::move(*message);
        replaced[lines.size()] = std::string();
        lines.push_back(line);
        if (joined_lines != nullptr) ++*joined_lines;
        continue;
      }
    }
    lines.push_back(line);
    open = stamped ? lines.size() - 1 : kNone;
  }
  if (replaced.empty()) return std::nullopt;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    const auto held = replaced.find(i);
    out.append(held != replaced.end() ? std::string_view(held->second) : lines[i]);
  }
  if (text.ends_with('\n')) out.push_back('\n');
  return out;
}

}  // namespace pcieval
