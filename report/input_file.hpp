// Reading an input file whole: a results document for validate, captured text
// for diagnose. The counterpart of atomic_file.hpp for what pcieval reads.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace pcieval {

// The whole of the file at `path`, "-" being standard input. Errors name the
// path and the system's reason ("cannot open X: No such file or directory").
// More than `max_bytes` is refused as "X is larger than N MiB: not <what>", so
// a mistaken /dev/zero or disk image cannot fill memory.
[[nodiscard]] Result<std::string> read_input_file(const std::string& path, std::size_t max_bytes,
                                                  std::string_view what);

}  // namespace pcieval
