// libFuzzer harness: parse_lspci and the detection that routes text to it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/lspci.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::looks_like_lspci_vv(text);
  const auto parsed = pcieval::parse_lspci(text, "fuzz");
  if (parsed) (void)pcieval::merge_lspci_captures({parsed.value(), parsed.value()});
  return 0;
}
