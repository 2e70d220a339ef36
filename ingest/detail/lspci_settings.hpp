// The settings lines of an lspci -vv block (issue 28): DevCap's and DevCtl's
// payload sizes, DevCtl's read request size and relaxed ordering, LnkCtl's
// ASPM, and the ACS capability's ACSCap/ACSCtl. Internal to ingest/: the
// block reader (lspci.cpp) hands each detail line here, then asks for the
// PortSettings the block proves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/port_settings.hpp"
#include "model/result.hpp"

namespace pcieval {

// What one block's lines said, before it is known whether the block is whole.
struct SettingsLines {
  std::optional<int> max_payload_supported_bytes;  // DevCap: MaxPayload N bytes
  std::optional<int> max_payload_bytes;            // DevCtl's "MaxPayload N bytes, MaxReadReq M bytes"
  std::optional<int> max_read_request_bytes;
  std::optional<bool> relaxed_ordering;  // DevCtl's RlxdOrd+/-
  std::optional<AspmControl> aspm;       // LnkCtl: ASPM ...
  std::optional<std::uint16_t> acs_capability;
  std::optional<std::uint16_t> acs_control;
  bool acs_listed = false;             // "Capabilities: [xxx v1] Access Control Services"
  bool extended_capabilities = false;  // any "Capabilities: [1xx..]" line: config space above 0x100 was read
  std::vector<std::string> notes;      // lines that looked like settings but did not read

  [[nodiscard]] bool any_register() const;
};

// Reads one detail line (trimmed, as lspci.cpp's read_detail sees it); true
// when it was a settings line, whether or not its value could be read.
bool read_settings_line(std::string_view text, SettingsLines& lines);

// Reads the text after "Capabilities:": an extended capability's offset
// (0x100 and above) and the ACS capability's name.
void read_settings_capability(std::string_view text, SettingsLines& lines);

// What the block proves. An error when lspci could not read the registers
// (`access_denied`: kSettingsNeedRoot, never "off") or the block shows none
// of them (lspci -v, a grep of other lines). `acs` is nullopt only when the
// block shows the extended capabilities and no ACS among them; an error when
// it does not show them or lists ACS without its registers.
[[nodiscard]] Reading<PortSettings> settings_of(const SettingsLines& lines, bool access_denied);

}  // namespace pcieval
