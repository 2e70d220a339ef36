#pragma once
// The kernel log reader's markers (kernel_log.cpp), shared with the code that
// joins wrapped lines (kernel_log_unwrap.cpp): a join is made where it makes a
// marker whole.
#include <cstddef>
#include <string_view>

namespace pcieval {

// How many of the reader's markers the text holds (each counted once).
[[nodiscard]] std::size_t kernel_log_markers_in(std::string_view text);

}  // namespace pcieval
