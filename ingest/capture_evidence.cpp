#include "ingest/capture_evidence.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "ingest/tool_evidence.hpp"
#include "model/pci_tree.hpp"

namespace pcieval {
namespace {

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

// Where each lspci block and nvidia-smi GPU link was read, kept in the
// evidence so that a verdict (in `diagnose` or `validate`) names the lines it
// rests on (validate/capture_rules.hpp, cite_capture_lines).
void add_capture_line(Evidence& evidence, const PciAddress& address, const std::string& source, std::size_t line) {
  const bool known = std::any_of(
      evidence.capture_lines.begin(), evidence.capture_lines.end(),
      [&](const CaptureLine& c) { return c.device && *c.device == address && c.source == source && c.line == line; });
  if (!known) evidence.capture_lines.push_back(CaptureLine{address, std::nullopt, source, line});
}

Reading<PcieGen> gen_reading(const std::optional<int>& gen, const std::string& source) {
  if (!gen) return make_error("not in the nvidia-smi capture " + source);
  return gen_from_number(*gen);
}

Reading<int> width_reading(const std::optional<int>& width, const std::string& source) {
  if (!width) return make_error("not in the nvidia-smi capture " + source);
  return *width;
}

// A GPU that only nvidia-smi names: what it says, with no path (lspci gives
// paths). judge_links then finds a link without a port above it.
DeviceRecord gpu_from_nvidia_smi(const NvidiaSmiGpu& gpu) {
  DeviceRecord record;
  PciFunction& function = record.function;
  function.bdf = gpu.bdf;
  function.vendor_id = gpu.vendor_id.value_or(0x10de);
  function.device_id = gpu.device_id.value_or(0);
  function.class_code = 0x030200;  // 3D controller: what nvidia-smi lists is a GPU
  function.kind = classify_device(function.vendor_id, function.class_code);
  const std::string where = gpu.source + ":" + std::to_string(gpu.line);
  if (gpu.nvml.max_gen || gpu.nvml.current_gen || gpu.nvml.max_width || gpu.nvml.current_width) {
    PortLinkReading link;
    link.max_speed = gen_reading(gpu.nvml.max_gen, where);
    link.max_width = width_reading(gpu.nvml.max_width, where);
    link.current_speed = gen_reading(gpu.nvml.current_gen, where);
    link.current_width = width_reading(gpu.nvml.current_width, where);
    function.link = link;
  }
  record.notes.push_back("known only from nvidia-smi (" + where + "): no lspci block of it, so its path is unknown");
  return record;
}

std::string load_text(const NvmlGpuLink& nvml) {
  std::string text = nvml.pstate ? "P" + std::to_string(*nvml.pstate) : std::string("no performance state");
  text += ", " + (nvml.utilization_gpu_percent ? std::to_string(*nvml.utilization_gpu_percent) + " %"
                                               : std::string("no utilisation"));
  if (nvml.tx_kbps || nvml.rx_kbps) {
    text += ", Tx " + (nvml.tx_kbps ? std::to_string(*nvml.tx_kbps) : std::string("?")) + " KB/s, Rx " +
            (nvml.rx_kbps ? std::to_string(*nvml.rx_kbps) : std::string("?")) + " KB/s";
  }
  return text;
}

// Differences between what lspci and nvidia-smi say about one GPU's link;
// both are kept, the judgement uses lspci's capability and nvidia-smi's
// loaded state.
void note_disagreements(DeviceRecord& record, const NvidiaSmiGpu& gpu, const std::string& where) {
  const auto& link = record.function.link;
  if (!link) return;
  if (link->max_speed && gpu.nvml.gpu_max_gen && generation_number(link->max_speed.value()) != *gpu.nvml.gpu_max_gen) {
    record.notes.push_back("lspci LnkCap reads " + to_string(link->max_speed.value()) + ", nvidia-smi " + where +
                           " Device Max reads Gen" + std::to_string(*gpu.nvml.gpu_max_gen));
  }
  if (link->max_width && gpu.nvml.max_width && link->max_width.value() != *gpu.nvml.max_width) {
    record.notes.push_back("lspci LnkCap reads x" + std::to_string(link->max_width.value()) + ", nvidia-smi " + where +
                           " Link Width Max reads x" + std::to_string(*gpu.nvml.max_width));
  }
}

}  // namespace

Evidence evidence_from_lspci(const LspciCapture& capture) {
  const std::vector<PciFunction> functions = placed_functions(capture);
  Evidence evidence;
  // The capture says nothing reliable about the host it came from; the name of
  // this machine would be wrong.
  evidence.sysfs_root = "";
  evidence.topology = std::nullopt;
  evidence.gpus_under_load = false;

  std::vector<std::string> bridge_notes;
  std::size_t unplaced = 0;
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const PciFunction& function = functions[i];
    add_capture_line(evidence, function.bdf, capture.devices[i].source, capture.devices[i].line);
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

void add_nvidia_smi(Evidence& evidence, const std::vector<NvidiaSmiCapture>& captures,
                    const CaptureEvidenceOptions& options) {
  std::size_t busy = 0;
  std::size_t not_busy = 0;
  for (const NvidiaSmiCapture& capture : captures) {
    evidence.notes.insert(evidence.notes.end(), capture.notes.begin(), capture.notes.end());
    if (capture.skipped_lines > 0) {
      evidence.notes.push_back(capture.source + ": skipped " + std::to_string(capture.skipped_lines) +
                               " lines outside nvidia-smi -q GPU blocks");
    }
    for (const NvidiaSmiGpu& gpu : capture.gpus) {
      const std::string where = gpu.source + ":" + std::to_string(gpu.link_line);
      auto found = std::find_if(evidence.devices.begin(), evidence.devices.end(),
                                [&](const DeviceRecord& d) { return d.function.bdf == gpu.bdf; });
      if (found == evidence.devices.end()) {
        const auto at = std::lower_bound(evidence.devices.begin(), evidence.devices.end(), gpu.bdf,
                                         [](const DeviceRecord& d, const PciAddress& a) { return d.function.bdf < a; });
        found = evidence.devices.insert(at, gpu_from_nvidia_smi(gpu));
      } else if (found->nvml) {
        found->notes.push_back("nvidia-smi " + where + " also describes this GPU; kept the first capture's readings");
        continue;
      } else {
        note_disagreements(*found, gpu, where);
      }
      DeviceRecord& record = *found;
      record.nvml = gpu.nvml;
      record.notes.insert(record.notes.end(), gpu.notes.begin(), gpu.notes.end());
      add_capture_line(evidence, gpu.bdf, gpu.source, gpu.link_line);
      // Said only where validate/ holds the link to Host Max (not when the
      // link runs above it and Host Max describes a hop behind a switch).
      if (gpu.nvml.host_max_gen && gpu.nvml.gpu_max_gen && *gpu.nvml.host_max_gen < *gpu.nvml.gpu_max_gen &&
          options.judged_nvml_generation && options.judged_nvml_generation(gpu.nvml) == gpu.nvml.host_max_gen) {
        record.notes.push_back("nvidia-smi " + where + ": the host caps the link at Gen" +
                               std::to_string(*gpu.nvml.host_max_gen) + " (Host Max) below the GPU's Gen" +
                               std::to_string(*gpu.nvml.gpu_max_gen) + " (Device Max): judged against Gen" +
                               std::to_string(*gpu.nvml.host_max_gen) + ", not a downgrade");
      }
      if (gpu.replay_rollovers && *gpu.replay_rollovers > 0) {
        record.notes.push_back("nvidia-smi " + where + ": " + std::to_string(*gpu.replay_rollovers) +
                               " replay rollovers (each retrained the link)");
      }
      const CapturedLoad load = captured_load(gpu.nvml);
      // "unclear" is no load: say what could not be told.
      const std::string how =
          load == CapturedLoad::kUnclear ? std::string("neither clearly busy nor idle") : std::string(to_string(load));
      record.notes.push_back("nvidia-smi " + where + " captured the GPU " + how + " (" + load_text(gpu.nvml) + ")");
      if (load != CapturedLoad::kBusy || !gpu.nvml.current_gen || !gpu.nvml.current_width) {
        ++not_busy;
        continue;
      }
      auto gen = gen_from_number(*gpu.nvml.current_gen);
      if (!gen) continue;
      ++busy;
      record.nvml->under_load = true;
      LinkSample sample;
      sample.port = gpu.bdf;
      sample.source = SampleSource::kNvml;
      sample.under_load = true;
      sample.speed = gen.value();
      sample.width = *gpu.nvml.current_width;
      evidence.link_samples.push_back(sample);
    }
  }
  if (busy > 0) {
    evidence.notes.push_back(std::to_string(busy) + " GPU link" + (busy == 1 ? " was" : "s were") +
                             " captured busy by nvidia-smi and judged as read under load" +
                             (not_busy > 0 ? "; the others were not busy" : std::string()));
  }
}

namespace {

// What the kernel log's enumeration lines say of the devices its events name,
// where no other capture described them: a device record without a link
// (what it is: a GPU, an NVMe drive) for an endpoint, a note for a port (a
// bridge is not a device of its own, as in evidence_from_lspci).
void add_enumerated(Evidence& evidence, const KernelLogCapture& capture) {
  for (const EnumeratedFunction& function : capture.enumerated) {
    const bool named = std::any_of(capture.events.begin(), capture.events.end(), [&](const KernelLogEvent& e) {
      return e.device == function.bdf || (e.limiting_port && *e.limiting_port == function.bdf);
    });
    // A device or port another capture described needs no word from the log.
    const bool on_a_path = std::any_of(evidence.devices.begin(), evidence.devices.end(), [&](const DeviceRecord& d) {
      return std::any_of(d.path.begin(), d.path.end(),
                         [&](const Link& l) { return l.upstream == function.bdf || l.downstream == function.bdf; });
    });
    if (!named || on_a_path || find_device(evidence, function.bdf) != nullptr) continue;
    const std::string where = capture.source + ":" + std::to_string(function.line);
    char ids[16];
    std::snprintf(ids, sizeof ids, "[%04x:%04x]", function.vendor_id, function.device_id);
    const bool bridge = is_pci_bridge_class(function.class_code) || (function.class_code >> 8) == 0x0600;
    if (bridge) {
      evidence.notes.push_back(to_string(function.bdf) + ": " +
                               (function.port_type.empty() ? std::string("a bridge") : function.port_type) + " " + ids +
                               ", as the kernel enumerated it (" + where + ")");
      continue;
    }
    DeviceRecord record;
    record.function.bdf = function.bdf;
    record.function.vendor_id = function.vendor_id;
    record.function.device_id = function.device_id;
    record.function.class_code = function.class_code;
    record.function.kind = classify_device(function.vendor_id, function.class_code);
    record.notes.push_back("known only from the kernel log's enumeration line (" + where +
                           "): the log holds no link state of it");
    const auto at = std::lower_bound(evidence.devices.begin(), evidence.devices.end(), function.bdf,
                                     [](const DeviceRecord& d, const PciAddress& a) { return d.function.bdf < a; });
    evidence.devices.insert(at, std::move(record));
  }
}

}  // namespace

void add_kernel_logs(Evidence& evidence, const std::vector<KernelLogCapture>& captures) {
  std::vector<CapturedEvent>& events = evidence.captured_events;
  for (const KernelLogCapture& capture : captures) {
    evidence.notes.insert(evidence.notes.end(), capture.notes.begin(), capture.notes.end());
    add_enumerated(evidence, capture);
    std::size_t notifications = 0;
    for (const KernelLogEvent& event : capture.events) {
      CapturedEvent out;
      out.device = event.device;
      out.source = capture.source;
      out.line = event.line;
      out.text = event.text;
      out.time_s = event.time_s;
      switch (event.kind) {
        case KernelEventKind::kBandwidthLimited:
          out.kind = CapturedEvent::Kind::kLinkLimited;
          out.limiting_port = event.limiting_port;
          out.limited_to = event.limited_to;
          out.capable = event.capable;
          break;
        case KernelEventKind::kAerCorrected:
          out.kind = CapturedEvent::Kind::kCorrectableError;
          break;
        case KernelEventKind::kAerUncorrectedNonFatal:
          out.kind = CapturedEvent::Kind::kUncorrectableError;
          break;
        case KernelEventKind::kAerUncorrectedFatal:
          out.kind = CapturedEvent::Kind::kFatalError;
          break;
        case KernelEventKind::kSurpriseDown:
          out.kind = CapturedEvent::Kind::kSurpriseDown;
          break;
        case KernelEventKind::kGpuFellOffBus:
          out.kind = CapturedEvent::Kind::kFellOffBus;
          break;
        case KernelEventKind::kBandwidthNotification:
          ++notifications;
          continue;
      }
      events.push_back(std::move(out));
    }
    evidence.notes.push_back(capture.source + ": " + std::to_string(capture.events.size()) + " PCIe events in " +
                             std::to_string(capture.lines) + " lines; skipped " +
                             std::to_string(capture.skipped_lines) + " lines about other things");
    if (notifications > 0) {
      evidence.notes.push_back(
          capture.source + ": " + std::to_string(notifications) +
          (notifications == 1 ? " link bandwidth notification line" : " link bandwidth notification lines") +
          " (the link changed speed or width; GPUs do so when idle): reported, not judged");
    }
  }
}

Evidence evidence_from_captures(Captures captures, const CaptureEvidenceOptions& options) {
  Evidence evidence;
  if (!captures.lspci.empty()) evidence = evidence_from_lspci(merge_lspci_captures(std::move(captures.lspci)));
  std::string sources;
  for (const auto& name : captures.names) sources += (sources.empty() ? "" : ", ") + name;
  evidence.notes.insert(evidence.notes.begin(), "diagnosed from captured text: " + sources);
  evidence.notes.insert(evidence.notes.begin() + 1, captures.notes.begin(), captures.notes.end());
  add_nvidia_smi(evidence, captures.nvidia_smi, options);
  const bool any_gpu = std::any_of(evidence.devices.begin(), evidence.devices.end(), [](const DeviceRecord& d) {
    return d.function.kind == DeviceKind::kGpu && !(d.nvml && d.nvml->under_load);
  });
  if (any_gpu) {
    evidence.notes.insert(evidence.notes.begin() + 1,
                          "GPU links in captured text are taken as read without load unless nvidia-smi captured the "
                          "GPU busy: an idle GPU's lower link speed is inconclusive, not a downgrade");
  }
  add_kernel_logs(evidence, captures.kernel_logs);
  add_tool_captures(evidence, captures.tools);
  for (const LinklessListing& listing : captures.listings) evidence.notes.push_back(linkless_listing_text(listing));
  return evidence;
}

}  // namespace pcieval
