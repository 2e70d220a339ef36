// `pcieval diagnose`: judge captured text (lspci -vv so far) from a machine
// pcieval never ran on, with the same rules, table and exit codes as check.
//
// ingest/ turns the text into PCI functions with parents; placing them in the
// tree (roles where the capture names none, and each device's path of links)
// uses topology's pure functions here, because ingest/ may depend on model
// only.
#include <algorithm>
#include <utility>
#include <vector>

#include "app/commands.hpp"
#include "ingest/lspci.hpp"
#include "report/input_file.hpp"
#include "topology/pci_tree.hpp"

namespace pcieval::app {
namespace {

// Captured text is kilobytes; a pasted dmesg may be tens of megabytes. The cap
// keeps /dev/zero or a disk image from filling memory.
constexpr std::size_t kMaxCaptureBytes = std::size_t{256} << 20;

std::string display_name(const std::string& path) { return path == "-" ? std::string("stdin") : path; }

// The functions with their roles: a capture's Express line is authoritative;
// a function without one (a conventional PCI bridge, a block cut short) gets
// the role its place in the tree implies.
std::vector<PciFunction> placed_functions(const LspciCapture& capture) {
  std::vector<PciFunction> functions;
  functions.reserve(capture.devices.size());
  for (const LspciDevice& device : capture.devices) functions.push_back(device.function);
  const std::vector<PciFunction> structural = assign_port_roles(functions);
  for (std::size_t i = 0; i < functions.size(); ++i) {
    if (!capture.devices[i].role_known) functions[i].role = structural[i].role;
  }
  return functions;
}

std::vector<std::string> notes_of(const LspciDevice& device) {
  std::vector<std::string> notes = device.notes;
  if (device.placement_note) notes.push_back(*device.placement_note);
  return notes;
}

// A path from sysfs always ends at a root port; one from a partial capture
// can end at a switch port whose own port above is missing. Its verdict then
// rests on the links that were captured only, and the device says so.
std::optional<std::string> path_cut_short(const std::vector<PciFunction>& functions, const PciPath& path) {
  if (path.empty()) return std::nullopt;
  const PciAddress& top = path.back().upstream;
  const auto port =
      std::find_if(functions.begin(), functions.end(), [&](const PciFunction& f) { return f.bdf == top; });
  if (port == functions.end() || port->role == PortRole::kRootPort) return std::nullopt;
  const std::string what = port->role == PortRole::kDownstreamPort ? "a switch downstream port"
                           : port->role == PortRole::kUpstreamPort ? "a switch upstream port"
                                                                   : "not a root port";
  return "the capture ends at " + to_string(top) + " (" + what +
         "): links above it are not in the capture and were not judged";
}

Evidence evidence_from(const LspciCapture& capture, const std::vector<std::string>& names) {
  const std::vector<PciFunction> functions = placed_functions(capture);
  Evidence evidence;
  // The capture says nothing reliable about the host it came from; the name of
  // this machine would be wrong.
  evidence.sysfs_root = "";
  evidence.topology = std::nullopt;
  evidence.gpus_under_load = false;

  std::string sources;
  for (const auto& name : names) sources += (sources.empty() ? "" : ", ") + name;
  evidence.notes.push_back("diagnosed from captured text: " + sources);

  std::vector<std::string> bridge_notes;
  std::size_t unplaced = 0;
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const PciFunction& function = functions[i];
    const bool host_bridge = (function.class_code >> 8) == 0x0600;
    if (function.is_bridge || host_bridge) {
      // Not devices of their own; their caveats matter to the paths through them.
      for (const auto& note : notes_of(capture.devices[i]))
        bridge_notes.push_back(to_string(function.bdf) + ": " + note);
      continue;
    }
    DeviceRecord record;
    record.function = function;
    record.path = build_path(functions, function.bdf);
    record.notes = notes_of(capture.devices[i]);
    if (record.path.empty() && function.link && !function.is_virtual_function && capture.devices[i].placement_note) {
      ++unplaced;
    }
    if (auto cut = path_cut_short(functions, record.path)) record.notes.push_back(std::move(*cut));
    evidence.devices.push_back(std::move(record));
  }

  const bool any_gpu = std::any_of(evidence.devices.begin(), evidence.devices.end(),
                                   [](const DeviceRecord& d) { return d.function.kind == DeviceKind::kGpu; });
  if (any_gpu) {
    evidence.notes.push_back(
        "GPU links in captured text are taken as read without load: an idle GPU's lower link speed is "
        "inconclusive, not a downgrade");
  }
  evidence.notes.insert(evidence.notes.end(), capture.notes.begin(), capture.notes.end());
  evidence.notes.insert(evidence.notes.end(), bridge_notes.begin(), bridge_notes.end());
  if (unplaced > 0) {
    evidence.notes.push_back(std::to_string(unplaced) +
                             (unplaced == 1 ? " device has a PCIe link but no port above it in the capture"
                                            : " devices have a PCIe link but no port above them in the capture") +
                             " (capture `sudo lspci -vv` of the whole machine, not `-s` of one device)");
  }
  evidence.notes.push_back("lspci output carries no AER counters or CPU lists: aer and cpulist are null");
  return evidence;
}

}  // namespace

int run_diagnose(const DiagnoseOptions& options) {
  std::vector<LspciCapture> captures;
  std::vector<std::string> names;
  for (const std::string& path : options.input_paths) {
    const std::string name = display_name(path);
    auto text = read_input_file(path, kMaxCaptureBytes, "a capture");
    if (!text) {
      print_error(text.error().message);
      return kExitUsage;
    }
    // Formats are told apart by content, never by file name: tickets carry
    // "output.txt" and "log" as often as anything.
    if (!looks_like_lspci_vv(text.value())) {
      print_error(name + ": not a recognised capture (supported: lspci -vv)");
      return kExitUsage;
    }
    auto parsed = parse_lspci(text.value(), name);
    if (!parsed) {
      print_error(parsed.error().message);
      return kExitUsage;
    }
    captures.push_back(std::move(parsed).value());
    names.push_back(name);
  }

  Results results;
  results.evidence = evidence_from(merge_lspci_captures(std::move(captures)), names);
  return judge_and_report(std::move(results), options.judge);
}

}  // namespace pcieval::app
