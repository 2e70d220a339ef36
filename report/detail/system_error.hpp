// "<what> <path>: <strerror>": how report/'s file readers and writers say a
// system call on a file failed.
#pragma once

#include <cstring>
#include <string>

#include "model/result.hpp"

namespace pcieval {

[[nodiscard]] inline Error system_error(const std::string& what, const std::string& path, int error_number) {
  return make_error(what + " " + path + ": " + std::strerror(error_number));
}

}  // namespace pcieval
