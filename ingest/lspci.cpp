// The line-by-line reader of `lspci -vv` text. No regular expressions: a
// capture can be megabytes of pasted garbage, and every step here is a bounded
// scan of one line.
#include "ingest/lspci.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "ingest/detail/lspci_settings.hpp"
#include "ingest/detail/lspci_text.hpp"
#include "model/pci_address.hpp"

namespace pcieval {
namespace {

// What one LnkCap or LnkSta line says.
struct LinkHalf {
  Reading<PcieGen> speed = make_error("not read");
  Reading<int> width = make_error("not read");
};

// A device block while it is being read.
struct Block {
  LspciDevice device;
  bool has_details = false;
  bool express = false;                   // an Express capability line
  bool express_link = true;               // its type has a link (not a root-complex integrated one)
  bool capabilities = false;              // any "Capabilities:" line
  bool access_denied = false;             // "Capabilities: <access denied>"
  std::optional<std::string> unreadable;  // "!!! Unknown header type"
  std::optional<bool> status_cap;         // "Status: Cap+" / "Cap-"
  std::optional<LinkHalf> cap;
  std::optional<LinkHalf> sta;
  SettingsLines settings;  // DevCap/DevCtl/LnkCtl/ACS lines (issue 28)
};

bool is_indented(std::string_view line) { return !line.empty() && (line.front() == ' ' || line.front() == '\t'); }

struct Header {
  PciAddress address;
  std::string_view class_text;  // "VGA compatible controller" or "... [0300]"
  std::string_view name;        // "NVIDIA Corporation AD102GL [...] (rev a1) ..."
};

// "<slot> <class>: <name>", the first line of every block.
std::optional<Header> parse_header(std::string_view line) {
  const std::string_view text = trim_blanks(line);
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto slot = parse_lspci_slot(text.substr(0, space));
  if (!slot) return std::nullopt;
  const std::string_view rest = text.substr(space + 1);
  const auto colon = rest.find(": ");
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  return Header{*slot, rest.substr(0, colon), rest.substr(colon + 2)};
}

// What stands before the lspci text on every line of a block that was pasted
// with a prefix. The prefix is read off the block's header line, by its shape
// alone, and stripped from the lines that follow: nothing inside a line is
// guessed at.
struct Prefix {
  enum class Kind {
    kNone,
    kExact,       // "> " (a quote), "node01: " (pdsh), "Card: " (a script's label)
    kLineNumber,  // "    12\t" (cat -n), "12: ", "12 | ": a new number on every line
  };
  Kind kind = Kind::kNone;
  std::string text;  // kExact only
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "> ", ">> ", "> > ": a mail or forum quote.
std::size_t quote_length(std::string_view line) {
  std::size_t at = 0;
  while (at < line.size() && line[at] == '>') {
    ++at;
    if (at < line.size() && line[at] == ' ') ++at;
  }
  return at;
}

// "    12\t", "12: ", "12:", "12 | ", "12| ", "12 ": an editor's or cat -n's
// line number. One separator only, so that the indent of a detail line
// after it is kept.
std::size_t line_number_length(std::string_view line) {
  std::size_t at = 0;
  while (at < line.size() && line[at] == ' ') ++at;
  const std::size_t digits = at;
  while (at < line.size() && is_digit(line[at])) ++at;
  if (at == digits || at - digits > 7 || at >= line.size()) return 0;
  const std::string_view rest = line.substr(at);
  if (rest.starts_with('\t')) return at + 1;
  if (rest.starts_with(": ") || rest.starts_with("| ")) return at + 2;
  if (rest.starts_with(" | ")) return at + 3;
  if (rest.starts_with(':') || rest.starts_with('|') || rest.starts_with(' ')) return at + 1;
  return 0;
}

// "Card: ", "node01: ", "gpu-a17.example.com: ": one word ending in a colon,
// then blanks, at the very start of the line.
std::size_t label_length(std::string_view line) {
  constexpr std::size_t kLongestLabel = 64;
  const std::size_t end = line.find_first_of(" \t");
  if (end == 0 || end == std::string_view::npos || end > kLongestLabel || line[end - 1] != ':') return 0;
  return line.find_first_not_of(" \t", end) == std::string_view::npos ? 0 : end + 1;
}

// The line without `prefix`, when it carries it; the line as it is otherwise.
std::string_view strip_prefix(std::string_view line, const Prefix& prefix) {
  switch (prefix.kind) {
    case Prefix::Kind::kNone:
      return line;
    case Prefix::Kind::kExact:
      return line.starts_with(prefix.text) ? line.substr(prefix.text.size()) : line;
    case Prefix::Kind::kLineNumber:
      return line.substr(line_number_length(line));
  }
  return line;
}

// The last "[vvvv:dddd]" of a -nn device name.
std::optional<std::pair<std::uint16_t, std::uint16_t>> numeric_ids(std::string_view name) {
  constexpr std::size_t kIdsSize = 11;  // [10de:26b1]
  for (auto open = name.rfind('['); open != std::string_view::npos; open = name.rfind('[', open - 1)) {
    const std::string_view candidate = name.substr(open, kIdsSize);
    if (candidate.size() == kIdsSize && candidate[5] == ':' && candidate[10] == ']') {
      const auto vendor = parse_hex_exact(candidate.substr(1, 4), 4);
      const auto device = parse_hex_exact(candidate.substr(6, 4), 4);
      if (vendor && device) return std::pair{static_cast<std::uint16_t>(*vendor), static_cast<std::uint16_t>(*device)};
    }
    if (open == 0) break;
  }
  return std::nullopt;
}

// "(prog-if 02 [NVM Express])": the low byte of the class code.
std::uint32_t prog_if(std::string_view name) {
  constexpr std::string_view kMarker = "(prog-if ";
  const auto at = name.find(kMarker);
  if (at == std::string_view::npos) return 0;
  return parse_hex_exact(name.substr(at + kMarker.size(), 2), 2).value_or(0);
}

void read_header(const Header& header, Block& block) {
  LspciDevice& device = block.device;
  PciFunction& function = device.function;
  function.bdf = header.address;
  function.numa_node = make_error("lspci printed no NUMA node line");
  function.local_cpulist = make_error("not in lspci output");

  // Class: "[0300]" with -nn, else the name.
  std::string_view class_name = header.class_text;
  std::optional<std::uint16_t> class_code;
  if (const auto open = class_name.rfind(" ["); open != std::string_view::npos && class_name.ends_with(']')) {
    class_code = parse_hex_exact(class_name.substr(open + 2, class_name.size() - open - 3), 4);
    if (class_code) class_name = class_name.substr(0, open);
  }
  if (!class_code) class_code = class_from_name(class_name);
  if (class_code) {
    function.class_code = (std::uint32_t{*class_code} << 8) | prog_if(header.name);
    device.class_known = true;
  } else {
    device.notes.push_back("class " + quoted(class_name) + " is not one pcieval knows by name; class code 0");
  }

  if (const auto ids = numeric_ids(header.name)) {
    function.vendor_id = ids->first;
    function.device_id = ids->second;
    device.vendor_known = device.device_known = true;
  } else if (const auto vendor = vendor_from_name(header.name)) {
    function.vendor_id = *vendor;
    device.vendor_known = true;
  } else {
    device.notes.push_back("vendor of " + quoted(header.name) +
                           " is not one pcieval knows by name; vendor id 0 (capture with lspci -nn for ids)");
  }
  // lspci names SR-IOV virtual functions so ("ConnectX-7 Virtual Function");
  // they have no link of their own, as in sysfs.
  function.is_virtual_function = header.name.find("Virtual Function") != std::string_view::npos;
}

template <class T>
Reading<T> prefixed(std::string_view key, Reading<T> reading) {
  if (reading) return reading;
  return make_error(std::string(key) + " " + reading.error().message);
}

LinkHalf read_link_line(std::string_view line, std::string_view key) {
  LinkHalf half;
  const auto speed = token_after(line, "Speed ");
  half.speed = speed ? prefixed(key, parse_lspci_speed(*speed))
                     : Reading<PcieGen>(make_error(std::string(key) + " has no Speed: " + quoted(line)));
  const auto width = token_after(line, "Width ");
  half.width = width ? prefixed(key, parse_lspci_width(*width))
                     : Reading<int>(make_error(std::string(key) + " has no Width: " + quoted(line)));
  return half;
}

// "Express (v2) Root Port (Slot+), MSI 00": the port type decides the role.
void read_express(std::string_view text, Block& block) {
  if (block.express) return;  // one Express capability per function
  block.express = true;
  text = trim_blanks(text.substr(std::string_view("Express").size()));
  if (text.starts_with("(v")) {
    const auto close = text.find(')');
    text = close == std::string_view::npos ? std::string_view{} : trim_blanks(text.substr(close + 1));
  }
  struct Type {
    std::string_view name;
    PortRole role;
    bool link;
  };
  // Longer names first: "Root Complex Integrated Endpoint" before "Endpoint".
  // A PCIe-to-PCI bridge's link is on its upstream side, as a switch upstream
  // port's is; the reverse bridge's is on its downstream side.
  static constexpr Type kTypes[] = {
      {"Root Complex Integrated Endpoint", PortRole::kEndpoint, false},
      {"Root Complex Event Collector", PortRole::kEndpoint, false},
      {"Root Port", PortRole::kRootPort, true},
      {"Upstream Port", PortRole::kUpstreamPort, true},
      {"Downstream Port", PortRole::kDownstreamPort, true},
      {"Legacy Endpoint", PortRole::kEndpoint, true},
      {"Endpoint", PortRole::kEndpoint, true},
      {"PCI-Express to PCI/PCI-X Bridge", PortRole::kUpstreamPort, true},
      {"PCI/PCI-X to PCI-Express Bridge", PortRole::kDownstreamPort, true},
  };
  for (const Type& type : kTypes) {
    if (!text.starts_with(type.name)) continue;
    block.device.function.role = type.role;
    block.device.role_known = true;
    block.express_link = type.link;
    return;
  }
  block.device.notes.push_back("PCI Express port type " + quoted(text.substr(0, text.find(','))) +
                               " is not known; role taken from the tree");
}

void read_capability(std::string_view text, Block& block) {
  block.capabilities = true;
  if (text.starts_with("<access denied>")) {
    block.access_denied = true;
    return;
  }
  if (!text.starts_with('[')) return;
  read_settings_capability(text, block.settings);
  const auto close = text.find(']');
  if (close == std::string_view::npos) return;
  const std::string_view name = trim_blanks(text.substr(close + 1));
  // "Express ..." only: "Secondary PCI Express" is another capability.
  if (name == "Express" || name.starts_with("Express ")) read_express(name, block);
}

// "Bus: primary=00, secondary=01, subordinate=01, sec-latency=0".
void read_bus(std::string_view text, Block& block) {
  const auto field = [&](std::string_view key) -> std::optional<std::uint8_t> {
    const auto value = token_after(text, key);
    if (!value) return std::nullopt;
    const auto number = parse_hex_exact(*value, 2);
    if (!number) return std::nullopt;
    return static_cast<std::uint8_t>(*number);
  };
  const auto primary = field("primary=");
  const auto secondary = field("secondary=");
  const auto subordinate = field("subordinate=");
  if (!primary || !secondary || !subordinate) {
    block.device.notes.push_back("unreadable bus line " + quoted(text) + "; devices behind it cannot be placed");
    return;
  }
  const BusRange range{*primary, *secondary, *subordinate};
  if (range.secondary <= block.device.function.bdf.bus || range.subordinate < range.secondary) {
    block.device.notes.push_back("bus line " + quoted(text) +
                                 " does not describe buses below this bridge; ignored when placing devices");
    return;
  }
  if (!block.device.bus) block.device.bus = range;
}

void read_numa(std::string_view text, Block& block) {
  const std::string_view value = trim_blanks(text);
  int node = -1;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), node);
  if (ec != std::errc{} || ptr != value.data() + value.size() || node < 0) {
    block.device.function.numa_node = make_error("unrecognised NUMA node " + quoted(value));
  } else {
    block.device.function.numa_node = node;
  }
}

void read_detail(std::string_view text, Block& block) {
  block.has_details = true;
  const auto after = [&](std::string_view key) { return trim_blanks(text.substr(key.size())); };
  if (text.starts_with("LnkCap:")) {
    if (!block.cap) block.cap = read_link_line(text, "LnkCap");
  } else if (text.starts_with("LnkSta:")) {
    if (!block.sta) block.sta = read_link_line(text, "LnkSta");
  } else if (text.starts_with("NUMA node:")) {
    read_numa(after("NUMA node:"), block);
  } else if (text.starts_with("Bus:")) {
    read_bus(after("Bus:"), block);
  } else if (text.starts_with("Capabilities:")) {
    read_capability(after("Capabilities:"), block);
  } else if (text.starts_with("Status:")) {
    // The function's own status line; capability status lines say other things.
    const std::string_view rest = after("Status:");
    if (rest.starts_with("Cap+")) block.status_cap = true;
    if (rest.starts_with("Cap-")) block.status_cap = false;
  } else if (read_settings_line(text, block.settings)) {
    // Payload sizes, ASPM, ACS: lspci_settings.cpp.
  } else if (text.starts_with("!!! Unknown header type")) {
    // A function that no longer answers reads all ones: header type 7f.
    block.unreadable = text.ends_with("7f") ? "config space reads all ones: the device is not responding (fallen off "
                                              "the bus? check dmesg for AER errors and Xid 79)"
                                            : "lspci could not decode the header: " + quoted(text);
  }
}

// A header line, as lspci prints it or behind one of the prefixes above,
// with the prefix it was found behind.
std::optional<std::pair<Header, Prefix>> find_header(std::string_view line) {
  if (auto header = parse_header(line)) return std::pair{*header, Prefix{}};
  if (const std::size_t quote = quote_length(line); quote > 0) {
    if (auto header = parse_header(line.substr(quote))) {
      return std::pair{*header, Prefix{Prefix::Kind::kExact, std::string(line.substr(0, quote))}};
    }
  }
  if (const std::size_t number = line_number_length(line); number > 0) {
    if (auto header = parse_header(line.substr(number)))
      return std::pair{*header, Prefix{Prefix::Kind::kLineNumber, {}}};
  }
  if (const std::size_t label = label_length(line); label > 0) {
    if (auto header = parse_header(line.substr(label))) {
      return std::pair{*header, Prefix{Prefix::Kind::kExact, std::string(line.substr(0, label))}};
    }
  }
  return std::nullopt;
}

// An indented line that can continue a block after an elision: lspci's detail
// lines start with a word ("LnkSta:", "Capabilities:", "ClockPM+"); an
// `lspci -t` tree's start with " |" or " +-", and stay out.
bool continues_block(std::string_view trimmed) {
  const char first = trimmed.front();
  return (first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z');
}

// "$ lspci -vvv", "[root@gpu01 ~]# ...", "user@host:~$ ...": a shell
// prompt, after which the output is another command's.
bool is_shell_prompt(std::string_view trimmed) {
  if (trimmed.starts_with("$ ")) return true;
  constexpr std::size_t kLongestPrompt = 80;
  for (const std::string_view mark : {"$ ", "# "}) {
    const auto at = trimmed.find(mark);
    if (at == std::string_view::npos || at == 0 || at > kLongestPrompt) continue;
    const std::string_view before = trimmed.substr(0, at);
    if (before.find('@') == std::string_view::npos) continue;
    if (before.find(' ') == std::string_view::npos || (before.front() == '[' && before.back() == ']')) return true;
  }
  return false;
}

PortLinkReading link_of(const Block& block) {
  // A missing line makes both of its halves unknown, for one reason.
  const auto half = [](const std::optional<LinkHalf>& line, std::string_view key) {
    if (line) return std::pair<Reading<PcieGen>, Reading<int>>{line->speed, line->width};
    const Error missing =
        make_error("no " + std::string(key) + " line in the lspci block (captured with -v, not -vv, or cut short)");
    return std::pair<Reading<PcieGen>, Reading<int>>{missing, missing};
  };
  PortLinkReading link;
  std::tie(link.max_speed, link.max_width) = half(block.cap, "LnkCap");
  std::tie(link.current_speed, link.current_width) = half(block.sta, "LnkSta");
  link.settings = settings_of(block.settings, block.access_denied);
  return link;
}

// Ends a block: decides what its link is, and keeps it if it had details.
void finish(std::optional<Block>& open, std::vector<LspciDevice>& devices, std::size_t& header_only) {
  if (!open) return;
  Block block = std::move(*open);
  open.reset();
  if (!block.has_details) {
    ++header_only;
    return;
  }
  PciFunction& function = block.device.function;
  for (std::string& note : block.settings.notes) block.device.notes.push_back(std::move(note));
  if (block.settings.acs_control && !block.settings.acs_capability) {
    block.device.notes.push_back(
        "ACSCtl without its ACSCap line: the ACS capability is taken as the bits ACSCtl "
        "enables");
  }
  if (block.unreadable) {
    function.link = PortLinkReading::unknown(make_error(*block.unreadable));
    function.link->settings = make_error(*block.unreadable);
  } else if (block.express) {
    if (block.express_link) function.link = link_of(block);
  } else if (block.cap || block.sta || block.settings.any_register()) {
    // A filtered capture (`lspci -vv | grep -E 'LnkCap|LnkSta|ACSCtl'`): the
    // link or settings lines are there, the capability line that names the
    // port type is not. No note: the same device's full block often
    // follows, and its notes would be merged into it.
    function.link = link_of(block);
  } else if (block.access_denied) {
    function.link = PortLinkReading::unknown(
        make_error("lspci could not read the capabilities ('Capabilities: <access denied>': run it as root)"));
    function.link->settings = make_error(std::string(kSettingsNeedRoot));
  } else if (block.status_cap.value_or(true) && !block.capabilities) {
    // PCIe functions always list capabilities; a block without them was cut.
    const Error cut = make_error("the lspci block ends before its capabilities (cut short?)");
    function.link = PortLinkReading::unknown(cut);
    function.link->settings = cut;
  }
  // Otherwise: no PCI Express capability, a conventional PCI function, no link.
  function.kind = classify_device(function.vendor_id, function.class_code);
  function.is_bridge = is_pci_bridge_class(function.class_code) || block.device.bus.has_value();
  devices.push_back(std::move(block.device));
}

}  // namespace

bool looks_like_lspci_vv(std::string_view text) {
  std::optional<Prefix> after_header;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::string_view line = next_line(text, start);
    if (auto header = find_header(line)) {
      after_header = std::move(header->second);
      continue;
    }
    if (after_header) {
      const std::string_view detail = strip_prefix(line, *after_header);
      if (is_indented(detail) && !trim_blanks(detail).empty()) return true;
    }
    after_header.reset();
  }
  return false;
}

std::size_t lspci_line_prefix_length(std::string_view line) {
  if (line.empty() || line.front() == '[') return 0;
  if (const std::size_t quote = quote_length(line); quote > 0) return quote;
  if (const std::size_t number = line_number_length(line); number > 0) return number;
  return label_length(line);
}

Result<LspciCapture> parse_lspci(std::string_view text, std::string_view source) {
  LspciCapture capture;
  capture.source = std::string(source);
  std::optional<Block> open;
  Prefix prefix;  // the open block's
  // lspci ends every block with a blank line, but a paste also breaks one
  // with elisions ("[ ... ]", "...", "[snip]"), comments and forum
  // separators. So a block stays open until the next header: after such a
  // line it is paused, and an indented detail line resumes it (the rest of
  // the device the excerpt was cut from).
  bool paused = false;
  std::size_t header_only = 0;
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::string_view raw = next_line(text, start);
    ++line_number;
    // A header may be indented too (a markdown code block indented by four).
    if (auto found = find_header(raw)) {
      finish(open, capture.devices, header_only);
      open.emplace();
      open->device.source = capture.source;
      open->device.line = line_number;
      read_header(found->first, *open);
      prefix = std::move(found->second);
      paused = false;
      continue;
    }
    const std::string_view line = open ? strip_prefix(raw, prefix) : raw;
    const std::string_view trimmed = trim_blanks(line);
    if (trimmed.empty()) {
      paused = true;
      continue;
    }
    if (open && is_indented(line) && (!paused || continues_block(trimmed))) {
      paused = false;
      read_detail(trimmed, *open);
      continue;
    }
    ++capture.skipped_lines;
    if (is_shell_prompt(trimmed)) {
      // Another command's output follows: indented lines after it (a grep
      // of ACSCtl without the device lines) belong to no block above.
      finish(open, capture.devices, header_only);
      paused = false;
      continue;
    }
    paused = open.has_value();
  }
  finish(open, capture.devices, header_only);
  capture.skipped_lines += header_only;

  if (capture.devices.empty()) {
    return make_error("no lspci -vv device blocks found in " + capture.source +
                      (header_only > 0 ? " (" + std::to_string(header_only) +
                                             " device lines without details: capture with lspci -vv, not plain lspci)"
                                       : ""));
  }
  if (capture.skipped_lines > 0) {
    capture.notes.push_back(capture.source + ": skipped " + std::to_string(capture.skipped_lines) +
                            " lines outside lspci -vv device blocks (prompts, markdown, comments, lspci -t trees" +
                            (header_only > 0 ? ", device lines without details" : "") + ")");
  }
  if (std::any_of(capture.devices.begin(), capture.devices.end(),
                  [](const LspciDevice& device) { return !device.device_known; })) {
    capture.notes.push_back(capture.source +
                            ": captured without -nn: device ids read 0000 and vendor ids come from vendor names");
  }
  std::vector<LspciCapture> one;
  one.push_back(std::move(capture));
  // Merging one capture with itself folds a function listed twice into one.
  return merge_lspci_captures(std::move(one));
}

}  // namespace pcieval
