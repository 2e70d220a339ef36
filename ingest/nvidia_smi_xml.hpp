// Captured `nvidia-smi -q -x` XML, read with tinyxml2 into the same per-GPU
// readings as the text form (nvidia_smi.hpp).
#pragma once

#include <string_view>

#include "ingest/nvidia_smi.hpp"
#include "model/result.hpp"

namespace pcieval {

// True when the text is an XML document whose root element is
// <nvidia_smi_log> (a prolog, DOCTYPE and comments may come first).
[[nodiscard]] bool looks_like_nvidia_smi_xml(std::string_view text);

// Parses nvidia-smi -q -x output of drivers with and without the newer
// device/host generation elements (<device_current_link_gen>,
// <max_device_link_gen>, <max_host_link_gen>). Each GPU's line is the line of
// its <gpu id="..."> element; link_line is that of <current_link_gen>.
// Elements nvidia-smi does not describe are ignored; values that are "N/A" stay
// unknown. Errors when the XML is not well formed (tinyxml2's message and
// line), when the root is not <nvidia_smi_log>, or when it holds no <gpu>.
[[nodiscard]] Result<NvidiaSmiCapture> parse_nvidia_smi_xml(std::string_view text, std::string_view source = "input");

}  // namespace pcieval
