#include "validate/budget.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "model/units.hpp"

namespace pcieval {
namespace {

// Byte sizes per TLP (PCIE-FACTS 2.2).
constexpr int kHeader3DwBytes = 12;  // completions, 32-bit address requests
constexpr int kHeader4DwBytes = 16;  // 64-bit address requests
constexpr int kFramingBytes = 8;     // STP/seq + LCRC (+ END before Gen3); per flit in flit mode
constexpr int kEcrcBytes = 4;

bool is_valid_payload(int bytes) {
  for (int size = 128; size <= 4096; size *= 2) {
    if (bytes == size) return true;
  }
  return false;
}

}  // namespace

LineCode line_code_of(PcieGen gen) {
  if (gen <= PcieGen::kGen2) return LineCode::k8b10b;
  if (gen <= PcieGen::kGen5) return LineCode::k128b130b;
  return LineCode::kFlit;
}

std::string_view to_string(LineCode code) {
  switch (code) {
    case LineCode::k8b10b:
      return "8b/10b";
    case LineCode::k128b130b:
      return "128b/130b";
    case LineCode::kFlit:
      return "flit";
  }
  return "flit";
}

double encoding_efficiency(LineCode code) {
  switch (code) {
    case LineCode::k8b10b:
      return 8.0 / 10.0;
    case LineCode::k128b130b:
      return 128.0 / 130.0;
    case LineCode::kFlit:
      return 236.0 / 256.0;
  }
  return 0;
}

Result<LinkBudget> link_budget(const LinkState& link, const BudgetOptions& options) {
  if (!is_valid_link_width(link.width)) {
    return make_error("x" + std::to_string(link.width) + " is not a PCIe link width");
  }
  if (!is_valid_payload(options.max_payload_bytes)) {
    return make_error("max payload size " + std::to_string(options.max_payload_bytes) +
                      " bytes is not a power of two from 128 to 4096");
  }
  LinkBudget budget;
  budget.link = link;
  budget.rate_gts_per_lane = transfer_rate_gts(link.gen);
  budget.line_code = line_code_of(link.gen);
  budget.encoding_efficiency = encoding_efficiency(budget.line_code);
  // GT/s is 1e9 symbols (bits) per second per lane; 8 bits per byte.
  budget.raw_gbps = budget.rate_gts_per_lane * 1e9 * link.width * budget.encoding_efficiency / 8.0 / kBytesPerGigabyte;

  // In flit mode framing and LCRC are per flit and already out of the TLP area.
  const int framing = budget.line_code == LineCode::kFlit ? 0 : kFramingBytes;
  const int ecrc = options.ecrc ? kEcrcBytes : 0;
  const double payload = options.max_payload_bytes;
  budget.payload_bytes = options.max_payload_bytes;

  budget.write_overhead_bytes = (options.address_64bit ? kHeader4DwBytes : kHeader3DwBytes) + framing + ecrc;
  budget.write_efficiency = payload / (payload + budget.write_overhead_bytes);
  budget.write_gbps = budget.raw_gbps * budget.write_efficiency;

  budget.completion_overhead_bytes = kHeader3DwBytes + framing + ecrc;
  budget.read_efficiency = payload / (payload + budget.completion_overhead_bytes);
  budget.read_gbps = budget.raw_gbps * budget.read_efficiency;
  return budget;
}

Result<double> direction_budget_gbps(const LinkBudget& budget, Direction direction) {
  switch (direction) {
    case Direction::kHostToDevice:
      return budget.read_gbps;
    case Direction::kDeviceToHost:
      return budget.write_gbps;
    case Direction::kAllReduce:
      // Through host memory an all-reduce loads both directions of every
      // GPU's link at once; the slower one bounds it.
      return std::min(budget.read_gbps, budget.write_gbps);
    case Direction::kDeviceToDevice:
      // A peer write is a stream of posted writes; a peer read's data comes
      // back as completions. Which one the probe key says; the slower bounds
      // either until the rule that knows the key asks for its own.
      return std::min(budget.read_gbps, budget.write_gbps);
    case Direction::kHostToHost:
      break;
  }
  return make_error("a host-to-host copy crosses no PCIe link and has no link budget");
}

std::optional<int> programmed_payload_bytes(const PciPath& links) {
  std::optional<int> smallest;
  for (const Link& link : links) {
    for (const PortLinkReading* end : {&link.downstream_end, &link.upstream_end}) {
      // A port with no link registers (a conventional bridge) has no DevCtl.
      if (end->has_no_link()) continue;
      if (!end->settings || !end->settings.value().max_payload_bytes) return std::nullopt;
      const int bytes = *end->settings.value().max_payload_bytes;
      smallest = smallest ? std::min(*smallest, bytes) : bytes;
    }
  }
  return smallest;
}

BudgetOptions budget_options_for(const PciPath& links) {
  BudgetOptions options;
  if (const auto bytes = programmed_payload_bytes(links)) options.max_payload_bytes = *bytes;
  return options;
}

std::string payload_note(const PciPath& links) {
  const auto bytes = programmed_payload_bytes(links);
  if (!bytes) return "";
  return "max payload " + std::to_string(*bytes) + " bytes, as programmed on the path";
}

Result<double> probe_budget_gbps(const LinkBudget& budget, std::string_view probe, Direction direction) {
  if (direction == Direction::kDeviceToDevice) {
    if (probe.starts_with("p2p_write")) return budget.write_gbps;
    if (probe.starts_with("p2p_read")) return budget.read_gbps;
  }
  return direction_budget_gbps(budget, direction);
}

Result<LinkState> path_expected_state(const PciPath& path) {
  if (path.empty()) return make_error("the device has no PCIe path");
  std::optional<LinkState> lowest;
  for (const Link& link : path) {
    auto expected = link.expected();
    if (!expected) return expected.error();
    lowest = lowest ? lower_of(*lowest, expected.value()) : expected.value();
  }
  return *lowest;
}

}  // namespace pcieval
