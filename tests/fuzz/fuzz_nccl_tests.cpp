// libFuzzer harness: nccl-tests text tables and -J JSON, and their summary.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/nccl_tests.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::looks_like_nccl_tests(text);
  (void)pcieval::looks_like_nccl_tests_json(text);
  if (const auto parsed = pcieval::parse_nccl_tests(text, "fuzz")) (void)pcieval::summarize_nccl(parsed.value());
  if (const auto parsed = pcieval::parse_nccl_tests_json(text, "fuzz")) (void)pcieval::summarize_nccl(parsed.value());
  return 0;
}
