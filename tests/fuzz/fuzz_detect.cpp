// libFuzzer harness: format detection over every format's marker check, the
// split of a pasted ticket into sections by format, and --format name lookup.
// The split with the kernel log reader walking each kernel log section
// (diagnose's way through a large log) must find the very same sections.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ingest/detect.hpp"
#include "ingest/kernel_log.hpp"

namespace {

bool same_sections(const pcieval::Result<std::vector<pcieval::CaptureSection>>& a,
                   const pcieval::Result<std::vector<pcieval::CaptureSection>>& b) {
  if (!a || !b) return !a && !b;
  if (a->size() != b->size()) return false;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const pcieval::CaptureSection& x = a->at(i);
    const pcieval::CaptureSection& y = b->at(i);
    if (x.format != y.format || x.offset != y.offset || x.size != y.size || x.first_line != y.first_line) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::detect_capture_format(text);
  const auto sections = pcieval::split_capture_sections(text);
  const pcieval::KernelLogWalker walker = [&](std::size_t offset,
                                              std::size_t first_line) -> std::optional<pcieval::WalkedSection> {
    const auto walk = pcieval::walk_kernel_log(text.substr(offset), "fuzz", first_line, &pcieval::ends_kernel_log_at);
    return pcieval::WalkedSection{walk.bytes, walk.lines};
  };
  if (!same_sections(sections, pcieval::split_capture_sections(text, walker))) __builtin_trap();
  (void)pcieval::capture_format_from_name(text.substr(0, 64));
  return 0;
}
