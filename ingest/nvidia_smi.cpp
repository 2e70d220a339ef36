// The line-by-line reader of `nvidia-smi -q` text. Like the lspci reader it
// uses no regular expressions: every step is a bounded scan of one line, so a
// pasted log of any size is read in one pass.
#include "ingest/nvidia_smi.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <initializer_list>
#include <utility>

#include "ingest/detail/lspci_text.hpp"
#include "model/enum_names.hpp"

namespace pcieval {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool not_available(std::string_view value) {
  return value.empty() || iequals(value, "N/A") || iequals(value, "[N/A]") || value.starts_with("Unknown") ||
         value.starts_with("[Unknown") || value.starts_with("Not Supported") || value.starts_with("[Not Supported");
}

template <class T>
std::optional<T> parse_unsigned(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Leading spaces (a tab counts as four, as an editor shows a markdown paste).
std::size_t indent_of(std::string_view line) {
  std::size_t columns = 0;
  for (char c : line) {
    if (c == ' ') {
      ++columns;
    } else if (c == '\t') {
      columns += 4;
    } else {
      break;
    }
  }
  return columns;
}

// What a field updates, by its section path below the GPU block.
enum class Field {
  kIgnored,
  kProductName,
  kBusId,
  kDeviceId,
  kBaseClass,
  kSubClass,
  kGenMax,
  kGenCurrent,
  kGenDeviceMax,
  kGenHostMax,
  kWidthMax,
  kWidthCurrent,
  kReplays,
  kRollovers,
  kTx,
  kRx,
  kPstate,
  kUtilGpu,
};

struct Section {
  std::size_t indent;
  std::string_view name;
};

// The fields of one section that pcieval reads, by name (matched ignoring
// case, as nvidia-smi's capitalisation varies between driver versions).
struct NamedField {
  std::string_view name;
  Field field;
};

Field field_named(std::string_view name, std::initializer_list<NamedField> fields) {
  for (const NamedField& named : fields) {
    if (iequals(name, named.name)) return named.field;
  }
  return Field::kIgnored;
}

Field field_of(const std::vector<Section>& sections, std::string_view name) {
  const auto in = [&](std::initializer_list<std::string_view> path) {
    if (sections.size() != path.size()) return false;
    std::size_t i = 0;
    for (std::string_view part : path) {
      if (!iequals(sections[i++].name, part)) return false;
    }
    return true;
  };
  if (in({})) return field_named(name, {{"Product Name", Field::kProductName}, {"Performance State", Field::kPstate}});
  if (in({"PCI"})) {
    return field_named(name, {{"Bus Id", Field::kBusId},
                              {"Device Id", Field::kDeviceId},
                              {"Base Classcode", Field::kBaseClass},
                              {"Sub Classcode", Field::kSubClass},
                              {"Replays Since Reset", Field::kReplays},
                              {"Replay Number Rollovers", Field::kRollovers},
                              {"Tx Throughput", Field::kTx},
                              {"Rx Throughput", Field::kRx}});
  }
  if (in({"PCI", "GPU Link Info", "PCIe Generation"})) {
    return field_named(name, {{"Max", Field::kGenMax},
                              {"Current", Field::kGenCurrent},
                              {"Device Max", Field::kGenDeviceMax},
                              {"Host Max", Field::kGenHostMax}});
  }
  if (in({"PCI", "GPU Link Info", "Link Width"})) {
    return field_named(name, {{"Max", Field::kWidthMax}, {"Current", Field::kWidthCurrent}});
  }
  if (in({"Utilization"})) return field_named(name, {{"Gpu", Field::kUtilGpu}});
  return Field::kIgnored;
}

class SmiTextReader {
 public:
  // `base_indent`: the columns every line of the output was shifted right by
  // (a notebook or a quote indents the whole output), taken off each line.
  SmiTextReader(std::string_view source, std::size_t base_indent) : base_indent_(base_indent) {
    capture_.source = std::string(source);
  }

  void line(std::string_view raw, std::size_t number) {
    const std::string_view text = trim_blanks(raw);
    if (text.empty()) return;
    const std::size_t shifted = indent_of(raw);
    const std::size_t indent = shifted > base_indent_ ? shifted - base_indent_ : 0;
    if (indent == 0) {
      top_level(text, number);
      return;
    }
    if (gpu_ == nullptr) {
      ++capture_.skipped_lines;
      return;
    }
    while (!sections_.empty() && sections_.back().indent >= indent) sections_.pop_back();
    const auto colon = text.find(" : ");
    const bool bare_colon = text.ends_with(" :");  // "Name :" with nothing after it
    if (colon == std::string_view::npos && !bare_colon) {
      sections_.push_back(Section{indent, text});
      return;
    }
    const std::string_view name =
        trim_blanks(text.substr(0, colon == std::string_view::npos ? text.size() - 2 : colon));
    const std::string_view value =
        colon == std::string_view::npos ? std::string_view{} : trim_blanks(text.substr(colon + 3));
    field(field_of(sections_, name), name, value, number);
  }

  Result<NvidiaSmiCapture> finish() && {
    if (capture_.gpus.empty()) {
      return make_error(capture_.source +
                        ": no GPU block found (expected `nvidia-smi -q` output with lines like "
                        "'GPU 00000000:17:00.0')");
    }
    for (NvidiaSmiGpu& gpu : capture_.gpus) {
      settle_gpu_ids(gpu);
      if (!gpu.nvml.current_gen && !gpu.nvml.current_width) {
        capture_.notes.push_back(origin(gpu.line) + ": GPU " + to_string(gpu.bdf) +
                                 " has no readable GPU Link Info (PCIe generation and width)");
      }
    }
    return std::move(capture_);
  }

 private:
  std::size_t base_indent_ = 0;
  std::string origin(std::size_t line) const { return capture_.source + ":" + std::to_string(line); }

  void top_level(std::string_view text, std::size_t number) {
    sections_.clear();
    gpu_ = nullptr;
    if (text.starts_with("GPU ")) {
      const std::string_view id = trim_blanks(text.substr(4));
      if (auto bdf = parse_nvidia_smi_bus_id(id)) {
        start_gpu(bdf.value(), number);
        return;
      }
    }
    // The log's banner and its header fields belong to the format; anything
    // else at column 0 (a prompt, a fence, another command's output) does not.
    const bool banner = text.find("NVSMI LOG") != std::string_view::npos;
    const auto colon = text.find(" : ");
    const bool header_field = colon != std::string_view::npos && [&] {
      const std::string_view name = trim_blanks(text.substr(0, colon));
      for (std::string_view known :
           {"Timestamp", "Driver Version", "CUDA Version", "Attached GPUs", "HIC Info", "Driver Model"}) {
        if (iequals(name, known)) return true;
      }
      return false;
    }();
    if (!banner && !header_field) ++capture_.skipped_lines;
  }

  void start_gpu(const PciAddress& bdf, std::size_t number) {
    const auto same =
        std::find_if(capture_.gpus.begin(), capture_.gpus.end(), [&](const NvidiaSmiGpu& g) { return g.bdf == bdf; });
    if (same != capture_.gpus.end()) {
      // Two snapshots pasted together: the first is kept, as lspci merging does.
      capture_.notes.push_back(origin(number) + ": GPU " + to_string(bdf) + " appears again (first at " +
                               origin(same->line) + "); kept the first block");
      ignored_.line = number;
      ignored_.bdf = bdf;
      ignored_.nvml = {};
      gpu_ = &ignored_;
      return;
    }
    NvidiaSmiGpu gpu;
    gpu.bdf = bdf;
    gpu.source = capture_.source;
    gpu.line = number;
    gpu.link_line = number;
    capture_.gpus.push_back(std::move(gpu));
    gpu_ = &capture_.gpus.back();
  }

  void unreadable(std::string_view name, std::string_view value, std::size_t number) {
    gpu_->notes.push_back(origin(number) + ": " + std::string(name) + " " + quoted(value) + " is not readable");
  }

  template <class T>
  void set(std::optional<T>& target, std::optional<T> parsed, std::string_view name, std::string_view value,
           std::size_t number) {
    if (parsed) {
      target = parsed;
    } else if (!not_available(value)) {
      unreadable(name, value, number);
    }
  }

  void field(Field which, std::string_view name, std::string_view value, std::size_t number) {
    NvmlGpuLink& nvml = gpu_->nvml;
    switch (which) {
      case Field::kIgnored:
        return;
      case Field::kProductName:
        if (!not_available(value)) nvml.name = std::string(value);
        return;
      case Field::kBusId:
        if (auto bdf = parse_nvidia_smi_bus_id(value); bdf && !(bdf.value() == gpu_->bdf)) {
          gpu_->notes.push_back(origin(number) + ": Bus Id " + quoted(value) + " differs from the block's header " +
                                to_string(gpu_->bdf) + "; kept the header's");
        }
        return;
      case Field::kDeviceId:
        // "0x233010DE": device id in the high half, vendor in the low half.
        if (value.size() == 10 && (value.starts_with("0x") || value.starts_with("0X"))) {
          if (auto ids = parse_hex_exact(value.substr(2), 8)) {
            gpu_->device_id = static_cast<std::uint16_t>(*ids >> 16);
            gpu_->vendor_id = static_cast<std::uint16_t>(*ids & 0xffffU);
            return;
          }
        }
        if (!not_available(value)) unreadable(name, value, number);
        return;
      case Field::kBaseClass:
      case Field::kSubClass: {
        const auto byte = parse_smi_class_byte(value);
        if (!byte) {
          if (!not_available(value)) unreadable(name, value, number);
          return;
        }
        set_class_byte(*gpu_, which == Field::kBaseClass, *byte);
        return;
      }
      case Field::kGenMax:
        return set(nvml.max_gen, parse_smi_generation(value), "PCIe Generation Max", value, number);
      case Field::kGenCurrent:
        gpu_->link_line = number;
        return set(nvml.current_gen, parse_smi_generation(value), "PCIe Generation Current", value, number);
      case Field::kGenDeviceMax:
        return set(nvml.gpu_max_gen, parse_smi_generation(value), "PCIe Generation Device Max", value, number);
      case Field::kGenHostMax:
        return set(nvml.host_max_gen, parse_smi_generation(value), "PCIe Generation Host Max", value, number);
      case Field::kWidthMax:
        return set(nvml.max_width, parse_smi_width(value), "Link Width Max", value, number);
      case Field::kWidthCurrent:
        return set(nvml.current_width, parse_smi_width(value), "Link Width Current", value, number);
      case Field::kReplays:
        return set(nvml.replay_counter, parse_smi_count(value), name, value, number);
      case Field::kRollovers:
        return set(gpu_->replay_rollovers, parse_smi_count(value), name, value, number);
      case Field::kTx:
        return set(nvml.tx_kbps, parse_smi_kbps(value), name, value, number);
      case Field::kRx:
        return set(nvml.rx_kbps, parse_smi_kbps(value), name, value, number);
      case Field::kPstate:
        return set(nvml.pstate, parse_smi_pstate(value), name, value, number);
      case Field::kUtilGpu:
        return set(nvml.utilization_gpu_percent, parse_smi_percent(value), "Utilization Gpu", value, number);
    }
  }

  NvidiaSmiCapture capture_;
  // Stable while the block is read: gpus only grows at a GPU header, which
  // resets gpu_ first.
  NvidiaSmiGpu* gpu_ = nullptr;
  NvidiaSmiGpu ignored_;  // a repeated GPU's block is read here and dropped
  std::vector<Section> sections_;
};

constexpr EnumNames<CapturedLoad, 3> kCapturedLoadNames{
    {{CapturedLoad::kIdle, "idle"}, {CapturedLoad::kBusy, "busy"}, {CapturedLoad::kUnclear, "unclear"}}};

}  // namespace

std::optional<std::uint8_t> parse_smi_class_byte(std::string_view text) {
  std::string_view digits = trim_blanks(text);
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  if (digits.empty() || digits.size() > 2) return std::nullopt;
  std::uint8_t byte = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), byte, 16);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return byte;
}

void set_class_byte(NvidiaSmiGpu& gpu, bool base, std::uint8_t byte) {
  const unsigned code = gpu.class_code.value_or(0);
  gpu.class_code =
      static_cast<std::uint16_t>(base ? (code & 0x00ffU) | (unsigned{byte} << 8U) : (code & 0xff00U) | byte);
}

void settle_gpu_ids(NvidiaSmiGpu& gpu) {
  constexpr std::uint16_t kNvidia = 0x10de;
  if (!gpu.vendor_id || *gpu.vendor_id == kNvidia) return;
  const bool display_class = gpu.class_code && (*gpu.class_code >> 8U) == 0x03;
  bool nvidia_name = false;
  if (gpu.nvml.name) {
    for (std::string_view brand : {"NVIDIA", "Tesla", "Quadro", "GeForce", "TITAN", "GRID"}) {
      nvidia_name = nvidia_name || std::string_view(*gpu.nvml.name).starts_with(brand);
    }
  }
  if (!display_class && !nvidia_name) return;
  char printed[16];
  std::snprintf(printed, sizeof printed, "%04x%04x", gpu.device_id.value_or(0), *gpu.vendor_id);
  gpu.notes.push_back(gpu.source + ":" + std::to_string(gpu.line) + ": Device Id " + quoted(printed) +
                      " names vendor " + std::string(printed + 4) + ", not NVIDIA's 10de; taken as an NVIDIA GPU by " +
                      (nvidia_name ? "its product name " + quoted(*gpu.nvml.name) : std::string("its display class")) +
                      ", device id unknown");
  gpu.vendor_id = kNvidia;
  gpu.device_id.reset();
}

Result<PciAddress> parse_nvidia_smi_bus_id(std::string_view text) {
  const std::string_view id = trim_blanks(text);
  // nvidia-smi prints an 8-digit domain (4 before driver ~400); parse_lspci_slot
  // takes 4 to 8 and wants the full "dddd:bb:dd.f".
  if (auto slot = parse_lspci_slot(id); slot && id.find(':') >= 4) return *slot;
  return make_error("not an nvidia-smi bus id: " + quoted(text));
}

std::optional<int> parse_smi_generation(std::string_view text) {
  const auto gen = parse_unsigned<int>(trim_blanks(text));
  if (!gen || *gen < 1 || *gen > 7) return std::nullopt;
  return gen;
}

std::optional<int> parse_smi_width(std::string_view text) {
  std::string_view t = trim_blanks(text);
  if (t.ends_with('x') || t.ends_with('X')) t.remove_suffix(1);
  if (t.starts_with('x')) t.remove_prefix(1);
  const auto width = parse_unsigned<int>(t);
  if (!width || *width < 1 || *width > 32) return std::nullopt;
  return width;
}

std::optional<int> parse_smi_pstate(std::string_view text) {
  std::string_view t = trim_blanks(text);
  if (t.size() < 2 || (t.front() != 'P' && t.front() != 'p')) return std::nullopt;
  const auto state = parse_unsigned<int>(t.substr(1));
  if (!state || *state > 15) return std::nullopt;
  return state;
}

std::optional<int> parse_smi_percent(std::string_view text) {
  std::string_view t = trim_blanks(text);
  if (!t.ends_with('%')) return std::nullopt;
  t = trim_blanks(t.substr(0, t.size() - 1));
  const auto percent = parse_unsigned<int>(t);
  if (!percent || *percent > 100) return std::nullopt;
  return percent;
}

std::optional<std::uint64_t> parse_smi_kbps(std::string_view text) {
  std::string_view t = trim_blanks(text);
  if (!t.ends_with("KB/s")) return std::nullopt;
  return parse_unsigned<std::uint64_t>(trim_blanks(t.substr(0, t.size() - 4)));
}

std::optional<std::uint64_t> parse_smi_count(std::string_view text) {
  return parse_unsigned<std::uint64_t>(trim_blanks(text));
}

CapturedLoad captured_load(const NvmlGpuLink& nvml) {
  if (!nvml.pstate) return CapturedLoad::kUnclear;
  const bool traffic =
      (nvml.tx_kbps && *nvml.tx_kbps > kBusyTrafficKbps) || (nvml.rx_kbps && *nvml.rx_kbps > kBusyTrafficKbps);
  const bool working = (nvml.utilization_gpu_percent && *nvml.utilization_gpu_percent > 0) || traffic;
  if (*nvml.pstate <= 2 && working) return CapturedLoad::kBusy;
  const bool quiet = nvml.utilization_gpu_percent && *nvml.utilization_gpu_percent == 0 && !traffic;
  if (*nvml.pstate >= 8 && quiet) return CapturedLoad::kIdle;
  return CapturedLoad::kUnclear;
}

std::string_view to_string(CapturedLoad load) { return name_of(kCapturedLoadNames, load, "unclear"); }

bool looks_like_nvidia_smi(std::string_view text) {
  if (text.find("==NVSMI LOG==") != std::string_view::npos) return true;
  // A block pasted without the banner: "GPU <bus id>" then an indented field.
  std::size_t start = 0;
  bool after_header = false;
  std::size_t header_indent = 0;  // an indented paste shifts the header too (common_indent)
  while (start < text.size()) {
    const std::string_view raw = next_line(text, start);
    const std::string_view line = trim_blanks(raw);
    if (line.empty()) continue;
    if (after_header && indent_of(raw) > header_indent &&
        (line.starts_with("Product Name") || line == "PCI" || line.starts_with("Product Brand"))) {
      return true;
    }
    after_header = line.starts_with("GPU ") && parse_nvidia_smi_bus_id(line.substr(4)).ok();
    header_indent = indent_of(raw);
  }
  return false;
}

namespace {

// The indent of the output's "GPU 00000000:17:00.0" headers, which
// nvidia-smi prints at column 0: more than 0 when the whole output was
// indented after the command that printed it (a notebook cell's
// "!nvidia-smi -q" then the output four columns in, a quote, a list item).
std::size_t common_indent(std::string_view text) {
  std::optional<std::size_t> least;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::string_view raw = next_line(text, start);
    const std::string_view line = trim_blanks(raw);
    if (!line.starts_with("GPU ") || !parse_nvidia_smi_bus_id(line.substr(4)).ok()) continue;
    const std::size_t indent = indent_of(raw);
    if (indent == 0) return 0;
    least = least ? std::min(*least, indent) : indent;
  }
  return least.value_or(0);
}

}  // namespace

Result<NvidiaSmiCapture> parse_nvidia_smi(std::string_view text, std::string_view source) {
  SmiTextReader reader(source, common_indent(text));
  std::size_t start = 0;
  std::size_t number = 0;
  while (start < text.size()) {
    const std::string_view line = next_line(text, start);
    reader.line(line, ++number);
  }
  return std::move(reader).finish();
}

}  // namespace pcieval
