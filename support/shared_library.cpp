#include "support/shared_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

namespace pcieval {

std::string library_from_environment(std::string_view variable, std::string_view default_name) {
  const char* chosen = std::getenv(std::string(variable).c_str());
  return chosen != nullptr && *chosen != '\0' ? std::string(chosen) : std::string(default_name);
}

Result<SharedLibrary> SharedLibrary::open(const std::string& name) {
  ::dlerror();  // clear a stale error so the one read below is ours
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    return make_error(reason != nullptr ? reason : "unknown dlopen failure");
  }
  return SharedLibrary(handle);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), keep_loaded_(std::exchange(other.keep_loaded_, false)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    keep_loaded_ = std::exchange(other.keep_loaded_, false);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() { close(); }

void* SharedLibrary::symbol(const char* name) const { return handle_ == nullptr ? nullptr : ::dlsym(handle_, name); }

void SharedLibrary::close() noexcept {
  if (handle_ != nullptr && !keep_loaded_) static_cast<void>(::dlclose(handle_));
  handle_ = nullptr;
}

}  // namespace pcieval
