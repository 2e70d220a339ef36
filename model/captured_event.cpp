#include "model/captured_event.hpp"

#include <array>
#include <utility>

namespace pcieval {
namespace {

using Kind = CapturedEvent::Kind;

constexpr std::array<std::pair<Kind, std::string_view>, 6> kKindNames = {{
    {Kind::kLinkLimited, "link_limited"},
    {Kind::kCorrectableError, "correctable_error"},
    {Kind::kUncorrectableError, "uncorrectable_error"},
    {Kind::kFatalError, "fatal_error"},
    {Kind::kSurpriseDown, "surprise_down"},
    {Kind::kFellOffBus, "fell_off_bus"},
}};

}  // namespace

std::string_view to_string(CapturedEvent::Kind kind) {
  for (const auto& [value, name] : kKindNames) {
    if (value == kind) return name;
  }
  return "unknown";
}

Result<CapturedEvent::Kind> captured_event_kind_from_string(std::string_view text) {
  for (const auto& [value, name] : kKindNames) {
    if (name == text) return value;
  }
  return make_error("unknown captured event kind '" + std::string(text) + "'");
}

namespace {

// Line 0: a JSON capture, whose numbers have no line worth citing.
std::string origin_text(const std::string& source, std::size_t line) {
  return line == 0 ? source : source + ":" + std::to_string(line);
}

}  // namespace

std::string origin_of(const CapturedEvent& event) { return origin_text(event.source, event.line); }

std::string origin_of(const CaptureLine& line) { return origin_text(line.source, line.line); }

}  // namespace pcieval
