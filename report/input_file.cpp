#include "report/input_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "report/detail/system_error.hpp"
#include "report/file_descriptor.hpp"

namespace pcieval {
namespace {

Error too_large(const std::string& name, std::size_t max_bytes, std::string_view what) {
  return make_error(name + " is larger than " + std::to_string(max_bytes >> 20) + " MiB: not " + std::string(what));
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
    if (text.size() > max_bytes) return too_large(name, max_bytes, what);
  }
}

}  // namespace

Result<std::string> read_input_file(const std::string& path, std::size_t max_bytes, std::string_view what) {
  if (path == "-") return read_all(STDIN_FILENO, "stdin", max_bytes, what);
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return system_error("cannot open", path, errno);
  return read_all(fd.get(), path, max_bytes, what);
}

InputText::InputText(InputText&& other) noexcept
    : owned_(std::move(other.owned_)),
      mapped_(std::exchange(other.mapped_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)) {}

InputText& InputText::operator=(InputText&& other) noexcept {
  if (this != &other) {
    unmap();
    owned_ = std::move(other.owned_);
    mapped_ = std::exchange(other.mapped_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

InputText::~InputText() { unmap(); }

void InputText::unmap() noexcept {
  // munmap of a range this object mapped cannot fail in a way worth reporting.
  if (mapped_ != nullptr) ::munmap(const_cast<char*>(mapped_), mapped_bytes_);
  mapped_ = nullptr;
  mapped_bytes_ = 0;
}

Result<InputText> map_input_file(const std::string& path, std::size_t max_bytes, std::string_view what) {
  if (path == "-") {
    auto text = read_all(STDIN_FILENO, "stdin", max_bytes, what);
    if (!text) return text.error();
    return InputText(std::move(text).value());
  }
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return system_error("cannot open", path, errno);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) return system_error("cannot read", path, errno);
  const auto size = static_cast<std::size_t>(status.st_size);
  // Only a regular file with a size can be mapped: /proc files report 0,
  // devices and pipes have no size to map.
  if (S_ISREG(status.st_mode) && size > 0) {
    if (size > max_bytes) return too_large(path, max_bytes, what);
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE;  // the page table filled in one call, not by faults during the parse
#endif
    void* mapped = ::mmap(nullptr, size, PROT_READ, flags, fd.get(), 0);
    if (mapped != MAP_FAILED) {
      InputText text;
      text.mapped_ = static_cast<const char*>(mapped);
      text.mapped_bytes_ = size;
      return text;
    }
    // A file system that cannot map (some FUSE mounts) is still readable.
  }
  auto text = read_all(fd.get(), path, max_bytes, what);
  if (!text) return text.error();
  return InputText(std::move(text).value());
}

}  // namespace pcieval
