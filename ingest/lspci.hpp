// Captured `lspci -vv` / `-vvv` text turned into PCI functions: what an
// engineer pastes into a ticket, read without the machine it came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/device.hpp"
#include "model/link.hpp"
#include "model/result.hpp"

namespace pcieval {

// A bridge's `Bus: primary=00, secondary=01, subordinate=01` line (hex).
struct BusRange {
  std::uint8_t primary = 0;
  std::uint8_t secondary = 0;
  std::uint8_t subordinate = 0;

  bool operator==(const BusRange&) const = default;
};

// One device block of the capture: the function as read, plus what placing it
// in the tree and merging it with other captures need.
struct LspciDevice {
  // parent is set by link_lspci_parents; role comes from the Express line.
  PciFunction function;
  std::string source;           // name of the capture the block came from
  std::size_t line = 0;         // 1-based line of the block's header in that capture
  bool vendor_known = false;    // from -nn ids, or a vendor name in the small table
  bool device_known = false;    // only -nn prints device ids
  bool class_known = false;     // from -nn, or a class name lspci prints
  bool role_known = false;      // an `Express (vN) <type>` line named the port type
  std::optional<BusRange> bus;  // bridges only
  std::vector<std::string> notes;
  // Readings another block of the same function filled in when merged
  // ("LnkSta speed" -> "paste.txt:40"), so that a later contradiction names
  // the line each value was read on.
  std::map<std::string, std::string> filled_from;
  // Set by link_lspci_parents when no bridge of the capture leads to this
  // function's bus and the bus is not a root bus: its path is unknown.
  std::optional<std::string> placement_note;
};

struct LspciCapture {
  std::string source;                // the name given to parse_lspci, or the merged names
  std::vector<LspciDevice> devices;  // by address, one per function, parents linked
  std::vector<std::string> notes;    // caveats about the capture as a whole
  // Non-blank lines outside any device block: shell prompts, markdown fences
  // and headings, `#` comments, `lspci -t` trees, anything that is not -vv.
  std::size_t skipped_lines = 0;
};

// Parses `lspci -vv` or `-vvv` output: with or without -D (domains) and -nn
// (numeric ids), indented with tabs or spaces (markdown pastes), pciutils
// before and after 3.8. Lines that are not part of a device block are skipped
// and counted, so a capture pasted with its shell prompts and ``` fences, or
// with `#` comment lines, reads the same as raw output. The `(ok)`,
// `(downgraded)`, `(strange)` and `(overdriven)` annotations are ignored: the
// judgement is recomputed from LnkCap and LnkSta on every hop.
//
// A block runs from its header to the next header: a blank line, an elision
// ("[ ... ]", "...", "[snip]"), a comment or a separator pauses it, and an
// indented detail line after that continues the same device. A block pasted
// with a prefix on its lines (a quote's "> ", pdsh's "node01: ", a script's
// "Card: " on the header only, line numbers) is read by stripping the prefix
// its header line starts with from the lines that carry it. A block with
// LnkCap/LnkSta but no Express capability line (a grep of lspci) has its link
// read from them, its port type left to the tree.
//
// Each LnkCap/LnkSta half that cannot be read becomes an error Reading that
// quotes the text. A block with no Express capability has no link (nullopt);
// one whose capabilities lspci could not read (`<access denied>`: run without
// root) or whose config space reads all ones has four error readings.
// A function listed twice is merged as merge_lspci_captures does.
//
// Errors only when the text holds no device block at all.
[[nodiscard]] Result<LspciCapture> parse_lspci(std::string_view text, std::string_view source = "input");

// True when `text` holds at least one device header line followed by an
// indented detail line: lspci -v/-vv/-vvv output, not a plain `lspci` list.
// The header may carry a prefix (see parse_lspci), and the detail line the
// same prefix or none.
[[nodiscard]] bool looks_like_lspci_vv(std::string_view text);

// The length of the prefix shape a pasted lspci line may start with (a
// quote's "> ", a line number, a "word: " label); 0 when it starts with none.
// Only the shape is checked: whether an lspci header follows is the caller's
// question (detect.cpp's section split).
[[nodiscard]] std::size_t lspci_line_prefix_length(std::string_view line);

// The speed token of LnkCap/LnkSta: "2.5GT/s", "5GT/s", "8GT/s", "16GT/s",
// "32GT/s", "64GT/s", "128GT/s". "unknown" (any case) and anything else are
// errors that quote the text.
[[nodiscard]] Reading<PcieGen> parse_lspci_speed(std::string_view text);

// The width token of LnkCap/LnkSta: "x16". "x0" (a link that is down) and
// widths the spec does not define are errors that quote the text.
[[nodiscard]] Reading<int> parse_lspci_width(std::string_view text);

// Sets each function's parent from the bridges' bus ranges: the parent of a
// function on bus B is the bridge of the same domain whose secondary bus is B
// (and whose range holds B). A bridge that claims a bus not above its own is
// ignored (it would make a loop). A function on a bus no bridge claims has no
// parent; when that bus is not a root bus (bus 0, or a bus holding a host
// bridge or a root port) its placement_note says the path is unknown.
void link_lspci_parents(std::vector<LspciDevice>& devices);

// Merges captures by address, in order: a later capture fills what an earlier
// one lacked (a reading it could not take, ids it did not print); where both
// read a value and they differ, the earlier one is kept and the device gets a
// note naming both sources and lines. Parents are linked over the merged set,
// so one file's bridges place another file's devices.
[[nodiscard]] LspciCapture merge_lspci_captures(std::vector<LspciCapture> captures);

}  // namespace pcieval
