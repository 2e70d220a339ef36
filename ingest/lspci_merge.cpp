// Placing lspci functions in the tree (bus ranges) and merging captures.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "ingest/lspci.hpp"
#include "model/pci_address.hpp"
#include "model/text.hpp"

namespace pcieval {
namespace {

// "bus 41", or "bus 0001:41" outside domain 0.
std::string bus_name(std::uint32_t domain, std::uint8_t bus) {
  if (domain == 0) return "bus " + hex_text(bus & 0xffU, 2);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04x:", domain);
  return "bus " + std::string(buffer) + hex_text(bus & 0xffU, 2);
}

std::string origin(const LspciDevice& device) { return device.source + ":" + std::to_string(device.line); }

std::string show(PcieGen gen) { return to_string(gen); }
std::string show(int value) { return std::to_string(value); }
std::string show(std::uint16_t id) { return hex_text(id, 4); }

std::string show(const BusRange& range) {
  return "secondary " + hex_text(range.secondary & 0xffU, 2) + "-" + hex_text(range.subordinate & 0xffU, 2);
}
std::string show(PortRole role) { return std::string(to_string(role)); }
std::string show(std::uint32_t class_code) { return hex_text(class_code, 6); }
std::string show(bool flag) { return flag ? "+" : "-"; }
std::string show(AspmControl aspm) { return std::string(lspci_text(aspm)); }
std::string show(const std::optional<AcsRegisters>& acs) {
  return acs ? "ACSCtl " + acs_bits_text(acs->control) : "no ACS capability";
}

// Who fills what: the kept device and the one merged into it.
class Merger {
 public:
  Merger(LspciDevice& kept, const LspciDevice& other) : kept_(kept), other_(other) {}

  template <class T>
  void reading(Reading<T>& mine, const Reading<T>& theirs, std::string_view what) {
    if (!theirs) return;
    if (!mine) {
      mine = theirs;
      filled(what);
    } else if (!(mine.value() == theirs.value())) {
      conflict(what, show(mine.value()), show(theirs.value()));
    }
  }

  template <class T>
  void value(T& mine, bool& mine_known, const T& theirs, bool theirs_known, std::string_view what) {
    if (!theirs_known) return;
    if (!mine_known) {
      mine = theirs;
      mine_known = true;
      filled(what);
    } else if (!(mine == theirs)) {
      conflict(what, show(mine), show(theirs));
    }
  }

  // A setting one block read and the other did not is filled in; two
  // different values keep the earlier one, with a note.
  template <class T>
  void setting(std::optional<T>& mine, const std::optional<T>& theirs, std::string_view what) {
    if (!theirs) return;
    if (!mine) {
      mine = theirs;
      filled(what);
    } else if (!(*mine == *theirs)) {
      conflict(what, show(*mine), show(*theirs));
    }
  }

  void settings(Reading<PortSettings>& mine, const Reading<PortSettings>& theirs) {
    if (!theirs) return;
    if (!mine) {
      mine = theirs;
      filled("port settings");
      return;
    }
    PortSettings& kept = mine.value();
    const PortSettings& other = theirs.value();
    setting(kept.max_payload_supported_bytes, other.max_payload_supported_bytes, "DevCap MaxPayload");
    setting(kept.max_payload_bytes, other.max_payload_bytes, "DevCtl MaxPayload");
    setting(kept.max_read_request_bytes, other.max_read_request_bytes, "DevCtl MaxReadReq");
    setting(kept.relaxed_ordering, other.relaxed_ordering, "DevCtl RlxdOrd");
    setting(kept.aspm, other.aspm, "LnkCtl ASPM");
    reading(kept.acs, other.acs, "ACS");
  }

  void conflict(std::string_view what, const std::string& mine, const std::string& theirs) {
    const auto filled_at = kept_.filled_from.find(std::string(what));
    const std::string mine_at = filled_at == kept_.filled_from.end() ? origin(kept_) : filled_at->second;
    kept_.notes.push_back(std::string(what) + ": " + mine_at + " reads " + mine + ", " + origin_of(what) + " reads " +
                          theirs + "; kept " + mine_at);
  }

 private:
  // Where `other_` read `what`: its own block, or the block it was filled from.
  std::string origin_of(std::string_view what) const {
    const auto at = other_.filled_from.find(std::string(what));
    return at == other_.filled_from.end() ? origin(other_) : at->second;
  }

 public:
  void filled(std::string_view what) { kept_.filled_from[std::string(what)] = origin_of(what); }

 private:
  LspciDevice& kept_;
  const LspciDevice& other_;
};

void merge_into(LspciDevice& kept, const LspciDevice& other) {
  Merger merge(kept, other);
  PciFunction& mine = kept.function;
  const PciFunction& theirs = other.function;
  merge.value(mine.vendor_id, kept.vendor_known, theirs.vendor_id, other.vendor_known, "vendor id");
  merge.value(mine.device_id, kept.device_known, theirs.device_id, other.device_known, "device id");
  merge.value(mine.class_code, kept.class_known, theirs.class_code, other.class_known, "class code");
  merge.value(mine.role, kept.role_known, theirs.role, other.role_known, "PCI Express port type");
  bool has_bus = kept.bus.has_value();
  BusRange range = kept.bus.value_or(BusRange{});
  merge.value(range, has_bus, other.bus.value_or(BusRange{}), other.bus.has_value(), "bus range");
  if (has_bus) kept.bus = range;
  merge.reading(mine.numa_node, theirs.numa_node, "NUMA node");
  if (!mine.link) {
    mine.link = theirs.link;
    if (theirs.link) {
      for (std::string_view what : {"LnkCap speed", "LnkCap width", "LnkSta speed", "LnkSta width"}) merge.filled(what);
    }
  } else if (theirs.link) {
    merge.reading(mine.link->max_speed, theirs.link->max_speed, "LnkCap speed");
    merge.reading(mine.link->max_width, theirs.link->max_width, "LnkCap width");
    merge.reading(mine.link->current_speed, theirs.link->current_speed, "LnkSta speed");
    merge.reading(mine.link->current_width, theirs.link->current_width, "LnkSta width");
    merge.settings(mine.link->settings, theirs.link->settings);
  }
  mine.is_virtual_function = mine.is_virtual_function || theirs.is_virtual_function;
  mine.kind = classify_device(mine.vendor_id, mine.class_code);
  mine.is_bridge = is_pci_bridge_class(mine.class_code) || kept.bus.has_value();
  for (const auto& note : other.notes) {
    if (std::find(kept.notes.begin(), kept.notes.end(), note) == kept.notes.end()) kept.notes.push_back(note);
  }
}

using BusKey = std::pair<std::uint32_t, std::uint8_t>;  // domain, bus

}  // namespace

void link_lspci_parents(std::vector<LspciDevice>& devices) {
  // Buses a root complex starts: bus 0, and any bus with a host bridge or a
  // root port on it (AMD hosts start one at 0x20, 0x40, ...).
  std::set<BusKey> root_buses;
  std::map<BusKey, std::vector<std::size_t>> claims;  // secondary bus -> bridges
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const LspciDevice& device = devices[i];
    const PciAddress& bdf = device.function.bdf;
    const bool host_bridge = device.class_known && (device.function.class_code >> 8) == 0x0600;
    const bool root_port = device.role_known && device.function.role == PortRole::kRootPort;
    if (host_bridge || root_port) root_buses.insert({bdf.domain, bdf.bus});
    // parse_lspci keeps only ranges below the bridge's own bus, so no loop.
    if (device.bus && device.bus->secondary > bdf.bus) claims[{bdf.domain, device.bus->secondary}].push_back(i);
  }
  for (LspciDevice& device : devices) {
    const PciAddress& bdf = device.function.bdf;
    device.function.parent.reset();
    device.placement_note.reset();
    const auto found = claims.find({bdf.domain, bdf.bus});
    if (found == claims.end()) {
      if (bdf.bus != 0 && !root_buses.contains({bdf.domain, bdf.bus})) {
        device.placement_note = "capture has no bridge for " + bus_name(bdf.domain, bdf.bus) + "; its path is unknown";
      }
      continue;
    }
    // Two bridges cannot both lead to one bus; the narrower range is nearer.
    const std::vector<std::size_t>& bridges = found->second;
    const auto span = [&](std::size_t i) { return devices[i].bus->subordinate - devices[i].bus->secondary; };
    const std::size_t chosen = *std::min_element(bridges.begin(), bridges.end(), [&](std::size_t a, std::size_t b) {
      return span(a) != span(b) ? span(a) < span(b) : devices[a].function.bdf < devices[b].function.bdf;
    });
    device.function.parent = devices[chosen].function.bdf;
    if (bridges.size() > 1) {
      std::string names;
      for (std::size_t i : bridges) names += (names.empty() ? "" : ", ") + to_string(devices[i].function.bdf);
      device.placement_note = "bridges " + names + " all claim " + bus_name(bdf.domain, bdf.bus) + "; placed under " +
                              to_string(devices[chosen].function.bdf);
    }
  }
}

LspciCapture merge_lspci_captures(std::vector<LspciCapture> captures) {
  LspciCapture merged;
  std::map<PciAddress, std::size_t> index;
  std::set<std::string> sources;
  for (LspciCapture& capture : captures) {
    if (sources.insert(capture.source).second) merged.source += (merged.source.empty() ? "" : ", ") + capture.source;
    merged.skipped_lines += capture.skipped_lines;
    for (auto& note : capture.notes) merged.notes.push_back(std::move(note));
    for (LspciDevice& device : capture.devices) {
      const auto [at, inserted] = index.try_emplace(device.function.bdf, merged.devices.size());
      if (inserted) {
        merged.devices.push_back(std::move(device));
      } else {
        merge_into(merged.devices[at->second], device);
      }
    }
  }
  std::sort(merged.devices.begin(), merged.devices.end(),
            [](const LspciDevice& a, const LspciDevice& b) { return a.function.bdf < b.function.bdf; });
  link_lspci_parents(merged.devices);
  return merged;
}

}  // namespace pcieval
