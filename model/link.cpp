#include "model/link.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace pcieval {
namespace {

constexpr std::array<double, kMaxPcieGen> kRatesGts = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

}  // namespace

double transfer_rate_gts(PcieGen gen) { return kRatesGts.at(static_cast<std::size_t>(gen) - 1); }

int generation_number(PcieGen gen) { return static_cast<int>(gen); }

std::string to_string(PcieGen gen) { return "Gen" + std::to_string(generation_number(gen)); }

Result<PcieGen> gen_from_number(int number) {
  if (number < 1 || number > kMaxPcieGen) {
    return make_error("PCIe generation " + std::to_string(number) + " is not 1 to " + std::to_string(kMaxPcieGen));
  }
  return static_cast<PcieGen>(number);
}

Result<PcieGen> gen_from_gts(double rate_gts) {
  for (std::size_t i = 0; i < kRatesGts.size(); ++i) {
    if (std::abs(kRatesGts[i] - rate_gts) < 1e-6) return static_cast<PcieGen>(i + 1);
  }
  return make_error("no PCIe generation runs at " + std::to_string(rate_gts) + " GT/s");
}

Result<PcieGen> parse_sysfs_link_speed(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (trimmed == "Unknown" || trimmed == "Unknown speed") {
    return make_error("kernel reports link speed '" + std::string(trimmed) + "'");
  }
  // "<rate> GT/s" optionally followed by " PCIe" (kernels >= 5.7).
  std::string_view rest = trimmed;
  if (rest.ends_with(" PCIe")) rest.remove_suffix(5);
  if (!rest.ends_with(" GT/s")) return make_error("unrecognised link speed '" + std::string(trimmed) + "'");
  rest.remove_suffix(5);
  // The rate is one of a handful of literal spellings; compare text, not floats,
  // so "2.50" or "8.00000001" are rejected rather than guessed.
  static constexpr std::array<std::array<std::string_view, 2>, kMaxPcieGen> kSpellings = {{
      {"2.5", "2.5"},
      {"5.0", "5"},
      {"8.0", "8"},
      {"16.0", "16"},
      {"32.0", "32"},
      {"64.0", "64"},
      {"128.0", "128"},
  }};
  for (std::size_t i = 0; i < kSpellings.size(); ++i) {
    if (rest == kSpellings[i][0] || rest == kSpellings[i][1]) return static_cast<PcieGen>(i + 1);
  }
  return make_error("unrecognised link speed '" + std::string(trimmed) + "'");
}

bool is_valid_link_width(int lanes) {
  switch (lanes) {
    case 1:
    case 2:
    case 4:
    case 8:
    case 12:
    case 16:
    case 32:
      return true;
    default:
      return false;
  }
}

std::string to_string(const LinkState& state) { return to_string(state.gen) + " x" + std::to_string(state.width); }

std::string join_states(const std::vector<LinkState>& states) {
  std::string text;
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (i > 0) text += i + 1 == states.size() ? " or " : ", ";
    text += to_string(states[i]);
  }
  return text;
}

LinkState lower_of(const LinkState& a, const LinkState& b) {
  return LinkState{std::min(a.gen, b.gen), std::min(a.width, b.width)};
}

namespace {

Reading<LinkState> combine(const Reading<PcieGen>& speed, const Reading<int>& width) {
  if (!speed) return speed.error();
  if (!width) return width.error();
  return LinkState{speed.value(), width.value()};
}

}  // namespace

PortLinkReading PortLinkReading::known(const LinkState& capable, const LinkState& negotiated) {
  PortLinkReading reading;
  reading.max_speed = capable.gen;
  reading.max_width = capable.width;
  reading.current_speed = negotiated.gen;
  reading.current_width = negotiated.width;
  return reading;
}

PortLinkReading PortLinkReading::unknown(const Error& reason) {
  PortLinkReading reading;
  reading.max_speed = reason;
  reading.max_width = reason;
  reading.current_speed = reason;
  reading.current_width = reason;
  return reading;
}

PortLinkReading PortLinkReading::without_link(const std::string& who) {
  return unknown(make_error(who + " " + std::string(kNoLinkAttributes)));
}

bool PortLinkReading::has_no_link() const {
  const auto says_no_link = [](const auto& reading) {
    return !reading && reading.error().message.ends_with(kNoLinkAttributes);
  };
  return says_no_link(max_speed) && says_no_link(max_width) && says_no_link(current_speed) &&
         says_no_link(current_width);
}

Reading<LinkState> PortLinkReading::capable() const { return combine(max_speed, max_width); }

Reading<LinkState> PortLinkReading::negotiated() const { return combine(current_speed, current_width); }

}  // namespace pcieval
