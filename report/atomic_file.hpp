// Writing an output file so that a reader never sees half of it.
#pragma once

#include <string>
#include <string_view>

#include "model/result.hpp"

namespace pcieval {

// Writes `contents` to a temporary file in the target's directory
// ("<name>.tmp.XXXXXX"), syncs it, renames it over `path` and syncs the
// directory, so `path` holds either the old contents or all of the new ones,
// even across a crash. A new file gets mode 0666 less the umask; a replaced
// file keeps its mode. On failure the temporary file is removed, the previous
// file is left as it was, and the error names the path and the system's
// reason. The one exception is a failure to sync the directory, reported
// after the rename: the new contents are in place but may not survive a
// crash. "-" writes to stdout instead.
[[nodiscard]] Status write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace pcieval
