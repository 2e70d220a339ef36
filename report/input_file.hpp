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

// The text of an input file without a copy where the system allows one: a
// regular file is mapped read-only, anything else (stdin, a pipe, a /proc
// file that reports no size) is read into memory. Diagnose reads kernel logs
// of a hundred megabytes; copying one into fresh memory cost more than
// parsing it. Move-only; the mapping ends with the object.
//
// A mapped file that another process truncates while it is read raises
// SIGBUS, as it would in grep --mmap or ripgrep: captures are copies taken
// for a ticket, and a live log that is rotated is renamed, not truncated.
class InputText {
 public:
  InputText() = default;
  explicit InputText(std::string text) : owned_(std::move(text)) {}
  InputText(InputText&& other) noexcept;
  InputText& operator=(InputText&& other) noexcept;
  InputText(const InputText&) = delete;
  InputText& operator=(const InputText&) = delete;
  ~InputText();

  // Valid while this object lives.
  [[nodiscard]] std::string_view view() const {
    return mapped_ != nullptr ? std::string_view(mapped_, mapped_bytes_) : std::string_view(owned_);
  }
  [[nodiscard]] bool mapped() const { return mapped_ != nullptr; }

 private:
  friend Result<InputText> map_input_file(const std::string& path, std::size_t max_bytes, std::string_view what);
  void unmap() noexcept;

  std::string owned_;
  const char* mapped_ = nullptr;
  std::size_t mapped_bytes_ = 0;
};

// As read_input_file, same errors and limit, into an InputText.
[[nodiscard]] Result<InputText> map_input_file(const std::string& path, std::size_t max_bytes, std::string_view what);

}  // namespace pcieval
