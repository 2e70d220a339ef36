// libFuzzer harness: format detection over every format's marker check, the
// split of a pasted ticket into sections by format, and --format name lookup.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/detect.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::detect_capture_format(text);
  (void)pcieval::split_capture_sections(text);
  (void)pcieval::capture_format_from_name(text.substr(0, 64));
  return 0;
}
