// `pcieval diagnose`: judge captured text from a machine pcieval never ran
// on (lspci -vv, nvidia-smi -q and -q -x, kernel logs), with the same rules,
// table and exit codes as check.
//
// ingest/ turns the text into PCI functions with parents, NVML readings and
// kernel events; placing functions in the tree (roles where the capture names
// none, and each device's path of links) uses topology's pure functions here,
// because ingest/ may depend on model only. Captures are merged by PCI
// address; each verdict says which file and line it rests on.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "app/commands.hpp"
#include "app/diagnose_tools.hpp"
#include "ingest/detect.hpp"
#include "ingest/kernel_log.hpp"
#include "ingest/lspci.hpp"
#include "ingest/nvidia_smi.hpp"
#include "ingest/nvidia_smi_xml.hpp"
#include "report/input_file.hpp"
#include "model/pci_tree.hpp"
#include "validate/capture_rules.hpp"
#include "validate/event_rate_rules.hpp"
#include "validate/expectation.hpp"
#include "validate/link_rules.hpp"
#include "validate/stated_link_rules.hpp"

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

// Where each lspci block and nvidia-smi GPU link was read, kept in the
// evidence so that a verdict (here or in `validate`) names the lines it rests
// on (validate/capture_rules.hpp, cite_capture_lines).
void add_capture_line(Evidence& evidence, const PciAddress& address, const std::string& source, std::size_t line) {
  const bool known = std::any_of(
      evidence.capture_lines.begin(), evidence.capture_lines.end(),
      [&](const CaptureLine& c) { return c.device && *c.device == address && c.source == source && c.line == line; });
  if (!known) evidence.capture_lines.push_back(CaptureLine{address, std::nullopt, source, line});
}

// Everything read from the files, by format.
struct Captures {
  std::vector<LspciCapture> lspci;
  std::vector<NvidiaSmiCapture> nvidia_smi;
  std::vector<KernelLogCapture> kernel_logs;
  std::vector<ToolCapture> tools;  // nvbandwidth, bandwidthTest, nccl-tests (diagnose_tools.hpp)
  std::vector<std::string> names;
  std::vector<std::string> notes;  // how files that mix formats were split
};

Evidence evidence_from(const LspciCapture& capture) {
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

// Merges nvidia-smi's GPUs into the evidence by address. A GPU captured busy
// gives a link sample under load for its own port, the evidence judge_links
// already uses to tell an idle downshift from a downgrade.
void add_nvidia_smi(Evidence& evidence, const std::vector<NvidiaSmiCapture>& captures) {
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
          expected_nvml_generation(gpu.nvml) == gpu.nvml.host_max_gen) {
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

// Kernel events in the validator's terms, kept in the evidence, and notes on
// what is not judged.
void add_kernel_logs(Evidence& evidence, const std::vector<KernelLogCapture>& captures) {
  std::vector<CapturedEvent>& events = evidence.captured_events;
  for (const KernelLogCapture& capture : captures) {
    evidence.notes.insert(evidence.notes.end(), capture.notes.begin(), capture.notes.end());
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

// Parses one section of an input, `first_line` being where it starts in the
// file, so that each verdict cites the file's own line numbers.
Status parse_section(CaptureFormat format, std::string_view text, const std::string& name, std::size_t first_line,
                     Captures& captures) {
  if (format == CaptureFormat::kKernelLog) {
    auto parsed = parse_kernel_log(text, name, first_line);
    if (!parsed) return parsed.error();
    captures.kernel_logs.push_back(std::move(parsed).value());
    return ok_status();
  }
  // The other parsers count lines from the start of what they are given:
  // blank lines in front keep their numbers right (sections other than a
  // kernel log are kilobytes, so the copy is cheap).
  std::string padded;
  if (first_line > 1) {
    padded.reserve(first_line - 1 + text.size());
    padded.assign(first_line - 1, '\n');
    padded.append(text);
    text = padded;
  }
  switch (format) {
    case CaptureFormat::kLspci: {
      auto parsed = parse_lspci(text, name);
      if (!parsed) return parsed.error();
      captures.lspci.push_back(std::move(parsed).value());
      return ok_status();
    }
    case CaptureFormat::kNvidiaSmi: {
      auto parsed = parse_nvidia_smi(text, name);
      if (!parsed) return parsed.error();
      captures.nvidia_smi.push_back(std::move(parsed).value());
      return ok_status();
    }
    case CaptureFormat::kNvidiaSmiXml: {
      auto parsed = parse_nvidia_smi_xml(text, name);
      if (!parsed) return parsed.error();
      captures.nvidia_smi.push_back(std::move(parsed).value());
      return ok_status();
    }
    default:
      break;
  }
  if (auto tool = parse_tool_capture(format, text, name)) {
    if (!*tool) return tool->error();
    captures.tools.push_back(std::move(*tool).value());
    return ok_status();
  }
  return make_error(name + ": format " + std::string(to_string(format)) + " is not read by diagnose yet");
}

// Reads and parses one input; errors are the one line diagnose prints. A file
// that holds several formats (a ticket paste of lspci -vv then dmesg) is read
// section by section, unless --format names one.
Status read_capture(const std::string& path, const std::optional<CaptureFormat>& forced, Captures& captures) {
  const std::string name = display_name(path);
  auto input = map_input_file(path, kMaxCaptureBytes, "a capture");
  if (!input) return input.error();
  // Parsers copy what they keep, so the text need not outlive this call.
  const std::string_view text = input.value().view();
  std::vector<CaptureSection> sections;
  if (forced) {
    sections.push_back(CaptureSection{*forced, 0, text.size(), 1});
  } else if (auto split = split_capture_sections(text)) {
    sections = std::move(split).value();
  } else {
    // pcieval's own documents are the likeliest JSON to land here by mistake.
    switch (pcieval_document_kind(text)) {
      case PcievalDocument::kResults:
        return make_error(name +
                          " is a pcieval results document, not captured text: judge it again with 'pcieval "
                          "validate " +
                          path + "'");
      case PcievalDocument::kFleet:
        return make_error(name +
                          " is a pcieval fleet document, not captured text: diagnose reads lspci -vv, "
                          "nvidia-smi -q, kernel logs and the bandwidth tools' output");
      case PcievalDocument::kNone:
        break;
    }
    return make_error(name + ": " + split.error().message);
  }
  captures.names.push_back(name);
  std::string parts;
  for (const CaptureSection& section : sections) {
    if (Status parsed = parse_section(section.format, text.substr(section.offset, section.size), name,
                                      section.first_line, captures);
        !parsed) {
      return parsed;
    }
    parts += (parts.empty() ? "" : ", ") + std::string(to_string(section.format)) + " from line " +
             std::to_string(section.first_line);
  }
  if (sections.size() > 1) captures.notes.push_back(name + " holds several captures, read one by one: " + parts);
  return ok_status();
}

}  // namespace

int run_diagnose(const DiagnoseOptions& options) {
  if (const Status writable = check_output_directories(options.judge); !writable) {
    print_error(writable.error().message);
    return kExitUsage;
  }
  std::optional<CaptureFormat> forced;
  if (options.format) {
    auto format = capture_format_from_name(*options.format);
    if (!format) {
      print_error("--format: " + format.error().message);
      return kExitUsage;
    }
    forced = format.value();
  }
  std::optional<LinkState> stated_link;
  if (options.link) {
    auto link = parse_stated_link(*options.link);
    if (!link) {
      print_error(link.error().message);
      return kExitUsage;
    }
    stated_link = link.value();
  }
  Captures captures;
  for (const std::string& path : options.input_paths) {
    if (const Status read = read_capture(path, forced, captures); !read) {
      print_error(read.error().message);
      return kExitUsage;
    }
  }

  Results results;
  Evidence& evidence = results.evidence;
  if (!captures.lspci.empty()) evidence = evidence_from(merge_lspci_captures(std::move(captures.lspci)));
  std::string sources;
  for (const auto& name : captures.names) sources += (sources.empty() ? "" : ", ") + name;
  evidence.notes.insert(evidence.notes.begin(), "diagnosed from captured text: " + sources);
  evidence.notes.insert(evidence.notes.begin() + 1, captures.notes.begin(), captures.notes.end());
  add_nvidia_smi(evidence, captures.nvidia_smi);
  const bool any_gpu = std::any_of(evidence.devices.begin(), evidence.devices.end(), [](const DeviceRecord& d) {
    return d.function.kind == DeviceKind::kGpu && !(d.nvml && d.nvml->under_load);
  });
  if (any_gpu) {
    evidence.notes.insert(evidence.notes.begin() + 1,
                          "GPU links in captured text are taken as read without load unless nvidia-smi captured the "
                          "GPU busy: an idle GPU's lower link speed is inconclusive, not a downgrade");
  }
  add_kernel_logs(evidence, captures.kernel_logs);
  if (stated_link) evidence.stated_link = StatedLink{*stated_link, "--link " + *options.link};
  add_tool_captures(evidence, captures.tools);
  // Correctable errors per port and replay counts per GPU, named; a burst's
  // verdict is drawn with the effective profile where verdicts are.
  for (std::string& note : judge_captured_rates(evidence, results.thresholds).notes) {
    evidence.notes.push_back(std::move(note));
  }

  return judge_and_report(std::move(results), options.judge);
}

}  // namespace pcieval::app
