// Reads the settings lines of an lspci -vv block. Formats (pciutils
// ls-caps.c and ls-ecaps.c, PCIE-FACTS sections 2.3 and 5):
//   DevCap:  MaxPayload 256 bytes, PhantFunc 0, Latency L0s <64ns, L1 <1us
//   DevCtl:  CorrErr- NonFatalErr- FatalErr- UnsupReq-
//            RlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+ FLReset-
//            MaxPayload 256 bytes, MaxReadReq 512 bytes
//   LnkCtl:  ASPM L1 Enabled; RCB 64 bytes, LnkDisable- CommClk+
//   ACSCap:  SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
//   ACSCtl:  SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
// Each line is recognised by its own words, not by the line before it, so a
// grep of the capture (`lspci -vvv | grep -E '^[0-9a-f]|MaxReadReq|ACSCtl'`)
// reads the same as the whole block.
#include "ingest/detail/lspci_settings.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "ingest/detail/lspci_text.hpp"

namespace pcieval {
namespace {

// "256" of "MaxPayload 256 bytes": 128 << v for v in 0..5 (4096 at most).
std::optional<int> payload_size(std::string_view line, std::string_view key) {
  const auto token = token_after(line, key);
  if (!token) return std::nullopt;
  int bytes = 0;
  const auto [ptr, ec] = std::from_chars(token->data(), token->data() + token->size(), bytes);
  if (ec != std::errc{} || ptr != token->data() + token->size()) return std::nullopt;
  for (int size = 128; size <= 4096; size *= 2) {
    if (bytes == size) return bytes;
  }
  return std::nullopt;
}

// '+' or '-' right after `name`, where `name` starts a word; nullopt when the
// flag is absent or carries neither.
std::optional<bool> flag_after(std::string_view line, std::string_view name) {
  for (auto at = line.find(name); at != std::string_view::npos; at = line.find(name, at + 1)) {
    if (at > 0 && line[at - 1] != ' ' && line[at - 1] != '\t') continue;
    const std::size_t sign = at + name.size();
    if (sign >= line.size()) return std::nullopt;
    if (line[sign] == '+') return true;
    if (line[sign] == '-') return false;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<AcsBit, std::string_view>, 7> kAcsWords = {{
    {kAcsSourceValidation, "SrcValid"},
    {kAcsTranslationBlocking, "TransBlk"},
    {kAcsRequestRedirect, "ReqRedir"},
    {kAcsCompletionRedirect, "CmpltRedir"},
    {kAcsUpstreamForwarding, "UpstreamFwd"},
    {kAcsEgressControl, "EgressCtrl"},
    {kAcsDirectTranslated, "DirectTrans"},
}};

// All seven bits, or nothing: a line cut short could hide a redirect bit.
std::optional<std::uint16_t> acs_bits(std::string_view line) {
  std::uint16_t bits = 0;
  for (const auto& [bit, word] : kAcsWords) {
    const auto flag = flag_after(line, word);
    if (!flag) return std::nullopt;
    if (*flag) bits = static_cast<std::uint16_t>(bits | bit);
  }
  return bits;
}

// "ASPM L0s L1 Enabled;" -> kL0sL1. The words run to ';' (or ',' in odd
// builds, or the end of the line).
std::optional<AspmControl> aspm_of(std::string_view line) {
  const auto at = line.find("ASPM ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view words = line.substr(at + 5);
  words = trim_blanks(words.substr(0, words.find_first_of(";,")));
  for (const AspmControl aspm : {AspmControl::kDisabled, AspmControl::kL0s, AspmControl::kL1, AspmControl::kL0sL1}) {
    if (words == lspci_text(aspm)) return aspm;
  }
  return std::nullopt;
}

template <class T>
void keep_first(std::optional<T>& field, const std::optional<T>& value) {
  if (!field && value) field = value;
}

void unreadable(SettingsLines& lines, std::string_view what, std::string_view line) {
  lines.notes.push_back("unreadable " + std::string(what) + " " + quoted(line) + "; not used");
}

}  // namespace

bool SettingsLines::any_register() const {
  return max_payload_supported_bytes || max_payload_bytes || max_read_request_bytes || relaxed_ordering || aspm ||
         acs_capability || acs_control;
}

bool read_settings_line(std::string_view text, SettingsLines& lines) {
  if (text.starts_with("DevCap:")) {
    if (text.find("MaxPayload ") == std::string_view::npos) return true;
    const auto bytes = payload_size(text, "MaxPayload ");
    if (!bytes) unreadable(lines, "DevCap payload", text);
    keep_first(lines.max_payload_supported_bytes, bytes);
    return true;
  }
  if (text.starts_with("MaxPayload ") && text.find("MaxReadReq ") != std::string_view::npos) {
    const auto payload = payload_size(text, "MaxPayload ");
    const auto read_request = payload_size(text, "MaxReadReq ");
    if (!payload || !read_request) unreadable(lines, "DevCtl payload line", text);
    keep_first(lines.max_payload_bytes, payload);
    keep_first(lines.max_read_request_bytes, read_request);
    return true;
  }
  if (text.starts_with("RlxdOrd")) {
    const auto flag = flag_after(text, "RlxdOrd");
    if (!flag) unreadable(lines, "DevCtl flags", text);
    keep_first(lines.relaxed_ordering, flag);
    return true;
  }
  if (text.starts_with("LnkCtl:")) {
    const auto aspm = aspm_of(text);
    if (!aspm) unreadable(lines, "LnkCtl ASPM", text);
    keep_first(lines.aspm, aspm);
    return true;
  }
  if (text.starts_with("ACSCap:") || text.starts_with("ACSCtl:")) {
    const bool control = text.starts_with("ACSCtl:");
    const auto bits = acs_bits(text);
    if (!bits) unreadable(lines, control ? "ACSCtl" : "ACSCap", text);
    keep_first(control ? lines.acs_control : lines.acs_capability, bits);
    return true;
  }
  return false;
}

void read_settings_capability(std::string_view text, SettingsLines& lines) {
  // "[100 v1] Advanced Error Reporting", "[2a0 v1] Access Control Services".
  if (!text.starts_with('[')) return;
  const auto end = text.find_first_of(" ]");
  if (end == std::string_view::npos) return;
  std::uint32_t offset = 0;
  const std::string_view hex = text.substr(1, end - 1);
  const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), offset, 16);
  if (ec != std::errc{} || ptr != hex.data() + hex.size()) return;
  if (offset >= 0x100) lines.extended_capabilities = true;
  if (text.find("Access Control Services") != std::string_view::npos) lines.acs_listed = true;
}

Reading<PortSettings> settings_of(const SettingsLines& lines, bool access_denied) {
  if (access_denied) return make_error(std::string(kSettingsNeedRoot));
  if (!lines.any_register()) {
    return make_error(
        "not read: the lspci block shows no DevCap, DevCtl, LnkCtl or ACS lines (captured with -v, not -vv, "
        "or filtered)");
  }
  PortSettings settings;
  settings.max_payload_supported_bytes = lines.max_payload_supported_bytes;
  settings.max_payload_bytes = lines.max_payload_bytes;
  settings.max_read_request_bytes = lines.max_read_request_bytes;
  settings.relaxed_ordering = lines.relaxed_ordering;
  settings.aspm = lines.aspm;
  if (lines.acs_control) {
    // Control bits of a capability the port lacks are hardwired to 0, so
    // ACSCtl alone (a grep of it) bounds ACSCap from below.
    settings.acs = std::optional<AcsRegisters>(
        AcsRegisters{lines.acs_capability.value_or(*lines.acs_control), *lines.acs_control});
  } else if (lines.acs_capability || lines.acs_listed) {
    settings.acs = make_error(
        "not read: the ACS capability is listed but its ACSCtl line is not in the capture (captured with -v, "
        "or cut short)");
  } else if (lines.extended_capabilities) {
    settings.acs = std::optional<AcsRegisters>{};
  } else {
    settings.acs = make_error(
        "not read: the capture does not show the extended capabilities (config space above 0x100), so whether "
        "the port has ACS is not known");
  }
  return settings;
}

}  // namespace pcieval
