#include "report/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include "report/detail/system_error.hpp"

namespace pcieval {
namespace {

// write(2) may write less than asked (signals, pipes, full disks report
// late), so loop until everything is out or a real error comes back.
Status write_all(int fd, std::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return system_error("cannot write", path, errno);
    }
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  return ok_status();
}

Status write_stdout(std::string_view contents) {
  // Flush what iostream/stdio buffered first so output keeps its order.
  std::fflush(stdout);
  return write_all(STDOUT_FILENO, contents, "stdout");
}

// Symbolic links followed before a write gives up: Linux's own limit.
constexpr int kMaxLinkHops = 40;

// /dev/null, /dev/stdout, a FIFO: renaming over them would replace the device
// node with a plain file (as root, for every other program too), and they
// cannot be torn anyway. Write into them as they are; a plain file reached
// through /proc/self/fd (stdout redirected to a file) is appended to, after
// what was printed there before.
Status write_in_place(const std::string& path, std::string_view contents) {
  struct stat existing {};
  const bool plain = ::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (plain ? O_APPEND : 0));
  if (fd < 0) return system_error("cannot open", path, errno);
  Status written = write_all(fd, contents, path);
  ::close(fd);
  return written;
}

// The mode a plain open(O_CREAT, 0666) would give, or the old file's mode:
// mkstemp creates 0600, which would silently hide results from other users.
mode_t mode_for(const std::string& path) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) return existing.st_mode & 07777;
  // umask can only be read by setting it; pcieval writes its outputs from one
  // thread, so the brief change is not observed by anyone.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

// Makes the rename itself durable: without it a crash can bring back the old
// directory entry even though the new file's data reached the disk.
Status sync_directory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return system_error("cannot open directory", directory, errno);
  const int synced = ::fsync(fd);
  const int sync_errno = errno;
  ::close(fd);
  if (synced != 0) return system_error("cannot sync directory", directory, sync_errno);
  return ok_status();
}

// /proc's fd links (/proc/self/fd/1, what /dev/stdout names) read as
// "pipe:[123]" or a deleted file's name, not a path to follow: the kernel
// follows them on open.
bool magic_link(const std::string& path) { return path.rfind("/proc/", 0) == 0 || path.rfind("/dev/fd/", 0) == 0; }

// Writes `contents` to the plain file (new or existing) at `path`, through a
// temporary file in its folder.
Status replace_atomically(const std::string& path, std::string_view contents) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && S_ISDIR(existing.st_mode)) {
    return make_error("cannot write " + path + ": it is a directory");
  }

  // The temporary file must sit in the target's directory: rename(2) is
  // atomic only within one filesystem.
  const auto slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) return make_error("cannot write " + path + ": the path names a directory");

  std::string temp_template =
      (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + name + ".tmp.XXXXXX";
  std::vector<char> temp_path(temp_template.begin(), temp_template.end());
  temp_path.push_back('\0');
  const int fd = ::mkostemp(temp_path.data(), O_CLOEXEC);
  if (fd < 0) return system_error("cannot create a temporary file to write", path, errno);
  const std::string temp(temp_path.data());

  const auto fail = [&](Error error, bool close_fd) -> Status {
    if (close_fd) ::close(fd);
    ::unlink(temp.c_str());
    return error;
  };

  if (::fchmod(fd, mode_for(path)) != 0) return fail(system_error("cannot set the mode of", temp, errno), true);
  if (Status written = write_all(fd, contents, path); !written) return fail(written.error(), true);
  // Data first, name second: renaming before the data is on disk can leave an
  // empty file under the final name after a crash.
  if (::fsync(fd) != 0) return fail(system_error("cannot sync", path, errno), true);
  // close can report a deferred write error (NFS), so its result counts.
  if (::close(fd) != 0) return fail(system_error("cannot close", path, errno), false);
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail(system_error("cannot replace", path, errno), false);
  return sync_directory(directory);
}

}  // namespace

Result<OutputTarget> output_target(const std::string& path) {
  std::string current = path;
  for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
    if (magic_link(current)) return OutputTarget{current, true};
    struct stat info {};
    // Not there (a new file), or not reachable: the write says which.
    if (::lstat(current.c_str(), &info) != 0) return OutputTarget{current, false};
    if (!S_ISLNK(info.st_mode)) {
      return OutputTarget{current, !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)};
    }
    std::vector<char> buffer(PATH_MAX + 1);
    const ssize_t length = ::readlink(current.c_str(), buffer.data(), buffer.size());
    if (length < 0) return system_error("cannot read the symbolic link", current, errno);
    if (static_cast<std::size_t>(length) >= buffer.size()) {
      return make_error("cannot write " + path + ": the symbolic link " + current + " is too long");
    }
    std::string target(buffer.data(), static_cast<std::size_t>(length));
    const auto slash = current.rfind('/');
    if (!target.empty() && target.front() != '/' && slash != std::string::npos) {
      target = current.substr(0, slash + 1) + target;
    }
    current = std::move(target);
  }
  return make_error("cannot write " + path + ": too many levels of symbolic links");
}

Status write_file_atomically(const std::string& path, std::string_view contents) {
  if (path == "-") return write_stdout(contents);
  if (path.empty()) return make_error("cannot write to an empty path");
  auto target = output_target(path);
  if (!target) return target.error();
  if (target->in_place) return write_in_place(target->path, contents);
  if (target->path == path) return replace_atomically(path, contents);
  // The link's own name in the message too: it is what the operator typed.
  if (Status written = replace_atomically(target->path, contents); !written) {
    return make_error(written.error().message + " (" + path + " links there)");
  }
  return ok_status();
}

}  // namespace pcieval
