#pragma once
// Passing the stamped lines of a kernel log in bulk. In dmesg output every
// line starts with '[' ("[   12.345678] ..."), and neither the section split
// (detect.cpp) nor the kernel log reader between two markers (kernel_log.cpp)
// needs more from such a line than that it is one: both ran one memchr and
// one test per line over a 100 MB log, which a 16-byte scan replaces
// (bench/perf/diagnose_vs_grep.sh).
#include <cstddef>
#include <string_view>

namespace pcieval {

// `start` begins a line of `text`. Returns the start of the first line at or
// after it that does not begin with '[' (text.size() when there is none),
// adding the lines passed over to `lines`; a last line without a newline
// counts as passed.
[[nodiscard]] std::size_t next_unstamped_line(std::string_view text, std::size_t start, std::size_t& lines);

}  // namespace pcieval
