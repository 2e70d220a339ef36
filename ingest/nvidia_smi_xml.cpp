// nvidia-smi -q -x through tinyxml2: a DOM of a few hundred kilobytes at most,
// walked by element name. tinyxml2 expands no external entities and limits
// element depth, so a hostile document cannot reach the network or the stack.
#include "ingest/nvidia_smi_xml.hpp"

#include <tinyxml2.h>

#include <utility>

#include "ingest/detail/lspci_text.hpp"

namespace pcieval {
namespace {

std::string_view text_of(const tinyxml2::XMLElement* element) {
  if (element == nullptr || element->GetText() == nullptr) return {};
  return trim_blanks(element->GetText());
}

const tinyxml2::XMLElement* child(const tinyxml2::XMLElement* parent, const char* name) {
  return parent == nullptr ? nullptr : parent->FirstChildElement(name);
}

// No value, as nvidia-smi -q -x spells it: exactly, where the text reader's
// not_available (nvidia_smi.cpp) also takes the case and bracket variants of
// pasted text.
bool xml_not_available(std::string_view value) {
  return value.empty() || value == "N/A" || value == "[N/A]" || value.starts_with("Unknown") ||
         value.starts_with("Not Supported");
}

class GpuReader {
 public:
  GpuReader(NvidiaSmiGpu& gpu, std::string_view source) : gpu_(gpu), source_(source) {}

  template <class T, class Parse>
  void read(std::optional<T>& target, const tinyxml2::XMLElement* element, Parse parse) {
    if (element == nullptr) return;
    const std::string_view value = text_of(element);
    if (auto parsed = parse(value)) {
      target = parsed;
    } else if (!xml_not_available(value)) {
      gpu_.notes.push_back(std::string(source_) + ":" + std::to_string(element->GetLineNum()) + ": <" +
                           element->Name() + "> " + quoted(value) + " is not readable");
    }
  }

  void read_gpu(const tinyxml2::XMLElement* element) {
    NvmlGpuLink& nvml = gpu_.nvml;
    if (auto name = text_of(child(element, "product_name")); !xml_not_available(name)) nvml.name = std::string(name);
    const auto* pci = child(element, "pci");
    const auto* link = child(pci, "pci_gpu_link_info");
    const auto* gen = child(link, "pcie_gen");
    const auto* widths = child(link, "link_widths");
    read(nvml.max_gen, child(gen, "max_link_gen"), parse_smi_generation);
    read(nvml.current_gen, child(gen, "current_link_gen"), parse_smi_generation);
    read(nvml.gpu_max_gen, child(gen, "max_device_link_gen"), parse_smi_generation);
    read(nvml.host_max_gen, child(gen, "max_host_link_gen"), parse_smi_generation);
    if (const auto* current = child(gen, "current_link_gen"))
      gpu_.link_line = static_cast<std::size_t>(current->GetLineNum());
    read(nvml.max_width, child(widths, "max_link_width"), parse_smi_width);
    read(nvml.current_width, child(widths, "current_link_width"), parse_smi_width);
    read(nvml.replay_counter, child(pci, "replay_counter"), parse_smi_count);
    read(gpu_.replay_rollovers, child(pci, "replay_rollover_counter"), parse_smi_count);
    read(nvml.tx_kbps, child(pci, "tx_util"), parse_smi_kbps);
    read(nvml.rx_kbps, child(pci, "rx_util"), parse_smi_kbps);
    read(nvml.pstate, child(element, "performance_state"), parse_smi_pstate);
    read(nvml.utilization_gpu_percent, child(child(element, "utilization"), "gpu_util"), parse_smi_percent);
    // DTD v12 and later: <pci_base_class>3</pci_base_class>, <pci_sub_class>2</pci_sub_class>.
    if (auto base = parse_smi_class_byte(text_of(child(pci, "pci_base_class")))) set_class_byte(gpu_, true, *base);
    if (auto sub = parse_smi_class_byte(text_of(child(pci, "pci_sub_class")))) set_class_byte(gpu_, false, *sub);
    // <pci_device_id>233010DE</pci_device_id>: device id high, vendor low.
    if (auto ids = parse_hex_exact(text_of(child(pci, "pci_device_id")), 8)) {
      gpu_.device_id = static_cast<std::uint16_t>(*ids >> 16);
      gpu_.vendor_id = static_cast<std::uint16_t>(*ids & 0xffffU);
    }
  }

 private:
  NvidiaSmiGpu& gpu_;
  std::string_view source_;
};

}  // namespace

bool looks_like_nvidia_smi_xml(std::string_view text) {
  // The root element comes after the prolog, DOCTYPE and comments: within the
  // first few hundred bytes of any real capture.
  const std::string_view head = text.substr(0, 4096);
  const auto root = head.find("<nvidia_smi_log");
  if (root == std::string_view::npos) return false;
  const auto first_tag = head.find('<');
  return first_tag != std::string_view::npos && trim_blanks(head.substr(0, first_tag)).empty();
}

Result<NvidiaSmiCapture> parse_nvidia_smi_xml(std::string_view text, std::string_view source) {
  NvidiaSmiCapture capture;
  capture.source = std::string(source);
  tinyxml2::XMLDocument document;
  if (document.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS) {
    const char* why = document.ErrorStr();
    return make_error(capture.source + ":" + std::to_string(document.ErrorLineNum()) +
                      ": not well-formed nvidia-smi -q -x XML: " + quoted(why != nullptr ? why : "unknown error"));
  }
  const tinyxml2::XMLElement* root = document.RootElement();
  if (root == nullptr || std::string_view(root->Name()) != "nvidia_smi_log") {
    return make_error(capture.source + ": XML root is " +
                      (root == nullptr ? std::string("missing") : quoted(root->Name())) +
                      ", not <nvidia_smi_log> (expected `nvidia-smi -q -x` output)");
  }
  for (const auto* element = root->FirstChildElement("gpu"); element != nullptr;
       element = element->NextSiblingElement("gpu")) {
    const std::size_t line = static_cast<std::size_t>(element->GetLineNum());
    const char* id = element->Attribute("id");
    auto bdf = parse_nvidia_smi_bus_id(id != nullptr ? id : text_of(child(child(element, "pci"), "pci_bus_id")));
    if (!bdf) {
      capture.notes.push_back(capture.source + ":" + std::to_string(line) + ": <gpu> without a readable bus id (" +
                              bdf.error().message + "); skipped");
      ++capture.skipped_lines;
      continue;
    }
    bool repeated = false;
    for (const NvidiaSmiGpu& seen : capture.gpus) repeated = repeated || seen.bdf == bdf.value();
    if (repeated) {
      capture.notes.push_back(capture.source + ":" + std::to_string(line) + ": GPU " + to_string(bdf.value()) +
                              " appears again; kept the first <gpu>");
      continue;
    }
    NvidiaSmiGpu gpu;
    gpu.bdf = bdf.value();
    gpu.source = capture.source;
    gpu.line = line;
    gpu.link_line = line;
    GpuReader(gpu, capture.source).read_gpu(element);
    settle_gpu_ids(gpu);
    capture.gpus.push_back(std::move(gpu));
  }
  if (capture.gpus.empty()) return make_error(capture.source + ": <nvidia_smi_log> holds no <gpu> element");
  return capture;
}

}  // namespace pcieval
