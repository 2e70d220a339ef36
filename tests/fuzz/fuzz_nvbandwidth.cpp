// libFuzzer harness: nvbandwidth text and -j JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/nvbandwidth.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::looks_like_nvbandwidth(text);
  (void)pcieval::looks_like_nvbandwidth_json(text);
  (void)pcieval::parse_nvbandwidth(text, "fuzz");
  (void)pcieval::parse_nvbandwidth_json(text, "fuzz");
  return 0;
}
