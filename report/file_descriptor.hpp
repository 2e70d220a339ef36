// A file descriptor closed on every path out: input_file.cpp and the fleet's
// document reader (fleet/node_document.cpp) read files through it.
#pragma once

#include <unistd.h>

namespace pcieval {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace pcieval
