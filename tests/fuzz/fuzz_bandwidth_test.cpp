// libFuzzer harness: CUDA samples bandwidthTest output.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/bandwidth_test.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::looks_like_bandwidth_test(text);
  (void)pcieval::parse_bandwidth_test(text, "fuzz");
  return 0;
}
