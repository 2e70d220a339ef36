#include "report/detail/settings_json.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

namespace pcieval::settings_json {
namespace {

using json_document::DocumentReader;
using json_document::Node;

// The payload and read-request sizes the spec defines: 128 << 0..5.
constexpr std::int64_t kSmallestPayloadBytes = 128;
constexpr std::int64_t kLargestPayloadBytes = 4096;
// PortLinkReading's default: no reader tried.
constexpr std::string_view kNotRead = "not read";

std::string hex4(std::uint16_t value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%04x", static_cast<unsigned>(value));
  return buffer;
}

template <class T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

std::string key_of(std::string_view prefix, std::string_view name) { return std::string(prefix) + std::string(name); }

std::optional<int> payload_or_null(DocumentReader& in, const Node& node) {
  const auto bytes = in.integer_or_null(node, kSmallestPayloadBytes, kLargestPayloadBytes);
  if (!bytes) return std::nullopt;
  if ((*bytes & (*bytes - 1)) != 0) {
    in.fail(node, std::to_string(*bytes) + " bytes is not a power of two from 128 to 4096");
    return std::nullopt;
  }
  return static_cast<int>(*bytes);
}

}  // namespace

void add_settings(Json& object, std::string_view prefix, const Reading<PortSettings>& settings) {
  // Nothing tried to read them (captured text without the registers, a
  // document before 1.7): nothing written, so such documents stay as they were.
  if (!settings && settings.error().message == kNotRead) return;
  if (!settings) {
    object[key_of(prefix, "settings")] = nullptr;
    object[key_of(prefix, "settings_unread")] = settings.error().message;
    return;
  }
  const PortSettings& s = settings.value();
  Json out = Json::object();
  out["max_payload_supported_bytes"] = optional_json(s.max_payload_supported_bytes);
  out["max_payload_bytes"] = optional_json(s.max_payload_bytes);
  out["max_read_request_bytes"] = optional_json(s.max_read_request_bytes);
  out["relaxed_ordering"] = optional_json(s.relaxed_ordering);
  out["aspm"] = s.aspm ? Json(std::string(to_string(*s.aspm))) : Json(nullptr);
  if (!s.acs) {
    out["acs"] = nullptr;
    out["acs_unread"] = s.acs.error().message;
  } else if (!s.acs.value()) {
    out["acs"] = Json{{"present", false}};
  } else {
    const AcsRegisters& acs = *s.acs.value();
    // The bits in lspci's words beside the registers, so a reader can grep
    // the document as they grep lspci -vvv; only the registers are read back.
    out["acs"] = Json{{"present", true},
                      {"capability", hex4(acs.capability)},
                      {"control", hex4(acs.control)},
                      {"control_bits", acs_bits_text(acs.control)}};
  }
  object[key_of(prefix, "settings")] = std::move(out);
}

Reading<PortSettings> read_settings(DocumentReader& in, const Node& object, std::string_view prefix) {
  const auto node = in.member_if_present(object, key_of(prefix, "settings"));
  if (!node) return make_error(std::string(kNotRead));
  if (!in.object_or_null(*node)) {
    const auto why = in.member_if_present(object, key_of(prefix, "settings_unread"));
    return make_error(why ? in.text(*why) : std::string("not read"));
  }
  PortSettings s;
  s.max_payload_supported_bytes = payload_or_null(in, in.member(*node, "max_payload_supported_bytes"));
  s.max_payload_bytes = payload_or_null(in, in.member(*node, "max_payload_bytes"));
  s.max_read_request_bytes = payload_or_null(in, in.member(*node, "max_read_request_bytes"));
  s.relaxed_ordering = in.boolean_or_null(in.member(*node, "relaxed_ordering"));
  const Node aspm = in.member(*node, "aspm");
  if (const auto text = in.text_or_null(aspm)) {
    if (auto parsed = aspm_from_string(*text)) {
      s.aspm = parsed.value();
    } else if (in.ok()) {
      in.fail(aspm, parsed.error().message);
    }
  }
  const Node acs = in.member(*node, "acs");
  if (!in.object_or_null(acs)) {
    const auto why = in.member_if_present(*node, "acs_unread");
    s.acs = make_error(why ? in.text(*why) : std::string("not read"));
  } else if (!in.boolean(in.member(acs, "present"))) {
    s.acs = std::optional<AcsRegisters>();
  } else {
    AcsRegisters registers;
    registers.capability = static_cast<std::uint16_t>(in.hex_id(in.member(acs, "capability"), 4));
    registers.control = static_cast<std::uint16_t>(in.hex_id(in.member(acs, "control"), 4));
    s.acs = std::optional<AcsRegisters>(registers);
  }
  return s;
}

Json iommu_json(const IommuReading& iommu) {
  Json out = Json::object();
  out["group"] = optional_json(iommu.group);
  out["type"] = optional_json(iommu.type);
  return out;
}

IommuReading read_iommu(DocumentReader& in, const Node& node) {
  IommuReading iommu;
  if (const auto group = in.integer_or_null(in.member(node, "group"), 0, std::numeric_limits<int>::max())) {
    iommu.group = static_cast<int>(*group);
  }
  iommu.type = in.text_or_null(in.member(node, "type"));
  return iommu;
}

Json peer_status_json(const PeerStatus& status) {
  Json out = Json::object();
  out["gpu"] = to_string(status.gpu);
  out["peer"] = to_string(status.peer);
  out["capability"] = std::string(to_string(status.capability));
  out["status"] = status.status;
  out["source"] = status.source;
  return out;
}

PeerStatus read_peer_status(DocumentReader& in, const Node& node) {
  PeerStatus status;
  status.gpu = in.address(in.member(node, "gpu"));
  status.peer = in.address(in.member(node, "peer"));
  const Node capability = in.member(node, "capability");
  const std::string capability_text = in.text(capability);
  if (auto parsed = peer_capability_from_string(capability_text)) {
    status.capability = parsed.value();
  } else if (in.ok()) {
    in.fail(capability, parsed.error().message);
  }
  const Node word = in.member(node, "status");
  status.status = in.text(word);
  const auto& words = peer_status_words();
  if (in.ok() && std::find(words.begin(), words.end(), status.status) == words.end()) {
    in.fail(word, "unknown peer status " + json_document::quote(status.status));
  }
  status.source = in.text(in.member(node, "source"));
  return status;
}

}  // namespace pcieval::settings_json
