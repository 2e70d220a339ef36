// libFuzzer harness: nvidia-smi -q -x XML (ingest/nvidia_smi_xml.hpp).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/nvidia_smi_xml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::looks_like_nvidia_smi_xml(text);
  (void)pcieval::parse_nvidia_smi_xml(text, "fuzz");
  return 0;
}
