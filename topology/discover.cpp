#include "topology/discover.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model/pci_tree.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/sysfs_reader.hpp"

namespace pcieval {
namespace fs = std::filesystem;

namespace {

bool is_live_sysfs(const fs::path& root) {
  fs::path normal = root.lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "/sys/"
  return normal == fs::path("/sys");
}

// Root port first, the way a path is read aloud.
std::string describe_chain(const std::vector<PciAddress>& nearest_first) {
  if (nearest_first.empty()) return "no PCI bridge";
  std::string text;
  for (auto it = nearest_first.rbegin(); it != nearest_first.rend(); ++it) {
    if (!text.empty()) text += " > ";
    text += to_string(*it);
  }
  return text;
}

// Where hwloc and sysfs disagree, the operator should know before trusting
// either: a firmware with a wrong _PXM, or an XML taken from another host.
void compare_with_hwloc(const std::vector<PciFunction>& functions, const PciFunction& function,
                        const Locality& locality, std::vector<std::string>& notes) {
  const std::vector<PciAddress> sysfs_chain = bridge_chain(functions, function.bdf);
  if (sysfs_chain != locality.ancestor_bridges) {
    notes.push_back("hwloc places " + to_string(function.bdf) + " under " + describe_chain(locality.ancestor_bridges) +
                    ", sysfs under " + describe_chain(sysfs_chain));
  }
  if (locality.numa_node && function.numa_node && *locality.numa_node != function.numa_node.value()) {
    notes.push_back("hwloc places " + to_string(function.bdf) + " on NUMA node " + std::to_string(*locality.numa_node) +
                    ", sysfs numa_node reads " + std::to_string(function.numa_node.value()));
  }
}

// A /proc file's text, or nullopt when it cannot be opened (a fixture or
// captured tree without it).
std::optional<std::string> read_small_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

HostInfo read_host_info() {
  HostInfo host;
  struct utsname names {};
  if (::uname(&names) == 0) {
    host.hostname = names.nodename;
    host.kernel = names.release;
  }
  return host;
}

std::optional<bool> cpuinfo_hypervisor_flag(std::string_view cpuinfo) {
  bool any_flags_line = false;
  while (!cpuinfo.empty()) {
    const auto end = cpuinfo.find('\n');
    std::string_view line = cpuinfo.substr(0, end);
    cpuinfo.remove_prefix(end == std::string_view::npos ? cpuinfo.size() : end + 1);
    // "flags\t\t: fpu vme ... hypervisor lahf_lm ..."; one line per CPU.
    if (!line.starts_with("flags")) continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos ||
        line.substr(5, colon - 5).find_first_not_of(" \t") != std::string_view::npos) {
      continue;
    }
    any_flags_line = true;
    std::string_view flags = line.substr(colon + 1);
    while (!flags.empty()) {
      const auto start = flags.find_first_not_of(" \t");
      if (start == std::string_view::npos) break;
      flags.remove_prefix(start);
      const auto stop = flags.find_first_of(" \t");
      if (flags.substr(0, stop) == "hypervisor") return true;
      flags.remove_prefix(stop == std::string_view::npos ? flags.size() : stop);
    }
  }
  if (!any_flags_line) return std::nullopt;
  return false;
}

std::string kernel_command_line(std::string_view cmdline) {
  // One line, ending in a newline; some boot loaders leave a trailing space.
  const auto end = cmdline.find_last_not_of(" \t\r\n");
  return std::string(end == std::string_view::npos ? std::string_view{} : cmdline.substr(0, end + 1));
}

Result<Evidence> discover(const DiscoveryOptions& options) {
  SysfsNotes sysfs_notes;
  auto read = read_pci_functions(options.sysfs_root, &sysfs_notes, options.sysfs_read);
  if (!read) return read.error();
  const std::vector<PciFunction> functions = assign_port_roles(std::move(read).value());

  Evidence evidence;
  evidence.host = read_host_info();
  {
    fs::path root = options.sysfs_root.lexically_normal();
    if (!root.has_filename()) root = root.parent_path();  // "/sys/"
    const fs::path proc = root.parent_path() / "proc";
    if (auto cpuinfo = read_small_file(proc / "cpuinfo")) evidence.host.hypervisor = cpuinfo_hypervisor_flag(*cpuinfo);
    if (auto cmdline = read_small_file(proc / "cmdline")) {
      evidence.host.kernel_command_line = kernel_command_line(*cmdline);
    }
  }
  evidence.sysfs_root = options.sysfs_root.string();
  evidence.gpus_under_load = false;
  evidence.notes = std::move(sysfs_notes.general);

  std::optional<HwlocTopology> topology;
  if (options.topology_xml) {
    auto loaded = HwlocTopology::load_xml(*options.topology_xml);
    if (!loaded) return loaded.error();
    topology.emplace(std::move(loaded).value());
    evidence.topology = options.topology_xml->string();
  } else if (is_live_sysfs(options.sysfs_root)) {
    auto loaded = HwlocTopology::load_live();
    if (loaded) {
      topology.emplace(std::move(loaded).value());
      evidence.topology = "live hwloc";
    } else {
      evidence.notes.push_back(loaded.error().message + "; NUMA locality not read from hwloc");
    }
  } else {
    // The live machine's hwloc tree would not describe a captured or fixture
    // tree, and mixing the two would produce false mismatch notes.
    evidence.notes.push_back("locality not read: sysfs root " + evidence.sysfs_root +
                             " is not the live /sys and no topology XML was given");
  }

  for (const PciFunction& function : functions) {
    std::vector<std::string> notes;
    if (auto found = sysfs_notes.by_function.find(function.bdf); found != sysfs_notes.by_function.end()) {
      notes = std::move(found->second);
    }
    // A host bridge (class 0600) is the root complex itself, not a device on
    // a link: listing it would only add a "not judged" row per socket.
    const bool host_bridge = (function.class_code >> 8) == 0x0600;
    if (function.is_bridge || host_bridge) {
      // Bridges are no device of their own; their caveats still matter to the
      // paths that run through them.
      for (const auto& note : notes) evidence.notes.push_back(to_string(function.bdf) + ": " + note);
      continue;
    }
    DeviceRecord record;
    record.function = function;
    record.path = build_path(functions, function.bdf);
    if (topology) {
      record.locality = topology->locality_of(function.bdf);
      if (record.locality) {
        compare_with_hwloc(functions, function, *record.locality, notes);
      } else {
        notes.push_back("hwloc topology does not list " + to_string(function.bdf));
      }
    }
    record.notes = std::move(notes);
    evidence.devices.push_back(std::move(record));
  }
  // read_pci_functions sorts already; kept explicit because the contract says so.
  std::sort(evidence.devices.begin(), evidence.devices.end(),
            [](const DeviceRecord& a, const DeviceRecord& b) { return a.function.bdf < b.function.bdf; });
  return evidence;
}

}  // namespace pcieval
