#include "report/input_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace pcieval {
namespace {

Error system_error(const std::string& what, const std::string& name, int error_number) {
  return make_error(what + " " + name + ": " + std::strerror(error_number));
}

Result<std::string> read_all(int fd, const std::string& name, std::size_t max_bytes, std::string_view what) {
  std::string text;
  std::vector<char> buffer(std::size_t{1} << 16);
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      return system_error("cannot read", name, errno);
    }
    if (got == 0) return text;
    text.append(buffer.data(), static_cast<std::size_t>(got));
    if (text.size() > max_bytes) {
      return make_error(name + " is larger than " + std::to_string(max_bytes >> 20) + " MiB: not " + std::string(what));
    }
  }
}

}  // namespace

Result<std::string> read_input_file(const std::string& path, std::size_t max_bytes, std::string_view what) {
  if (path == "-") return read_all(STDIN_FILENO, "stdin", max_bytes, what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return system_error("cannot open", path, errno);
  auto text = read_all(fd, path, max_bytes, what);
  ::close(fd);
  return text;
}

}  // namespace pcieval
