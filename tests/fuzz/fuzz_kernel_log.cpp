// libFuzzer harness: kernel logs (ingest/kernel_log.hpp).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/kernel_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::looks_like_kernel_log(text);
  (void)pcieval::parse_kernel_log(text, "fuzz");
  return 0;
}
