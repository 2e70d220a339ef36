#include "model/captured_event.hpp"

#include "model/enum_names.hpp"

namespace pcieval {
namespace {

using Kind = CapturedEvent::Kind;

constexpr EnumNames<Kind, 6> kKindNames{{{Kind::kLinkLimited, "link_limited"},
                                         {Kind::kCorrectableError, "correctable_error"},
                                         {Kind::kUncorrectableError, "uncorrectable_error"},
                                         {Kind::kFatalError, "fatal_error"},
                                         {Kind::kSurpriseDown, "surprise_down"},
                                         {Kind::kFellOffBus, "fell_off_bus"}}};

}  // namespace

std::string_view to_string(CapturedEvent::Kind kind) { return name_of(kKindNames, kind); }

Result<CapturedEvent::Kind> captured_event_kind_from_string(std::string_view text) {
  return value_of(kKindNames, text, "captured event kind");
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
