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
// crash. "-" writes to stdout instead. Where `path` is a symbolic link, the
// file it names is written (replaced atomically in its own folder), and the
// link stays: an operator's link into a shared folder keeps working.
[[nodiscard]] Status write_file_atomically(const std::string& path, std::string_view contents);

// Where a write to `path` lands (output_target).
struct OutputTarget {
  // `path`, or the file its chain of symbolic links ends at (which need not
  // exist yet); a relative link is read against the folder of the link.
  std::string path;
  // A device, FIFO or socket, or a file reached through /proc or /dev/fd
  // (/dev/stdout): written through as it is, never replaced.
  bool in_place = false;
};
[[nodiscard]] Result<OutputTarget> output_target(const std::string& path);

}  // namespace pcieval
