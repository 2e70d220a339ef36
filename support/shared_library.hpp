// A shared library opened at run time (dlopen), never linked, so that the
// binary starts on a node without it and the caller can say why what needs
// it is missing: NVML (topology/nvml_library.hpp) and NCCL
// (bench/nccl_library.hpp).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace pcieval {

// Fills a table's entry `slot` (a function pointer) with what `lookup`
// (dlsym, or a test's table) finds for the exported symbol `name`; false,
// with `slot` null, when the library lacks it. The tables of NVML, NCCL and
// the CUDA driver are filled this way.
template <class Fn>
bool bind_symbol(Fn& slot, const char* name, const std::function<void*(const char*)>& lookup) {
  void* address = lookup(name);
  // POSIX guarantees a data pointer from dlsym converts to a function pointer.
  slot = reinterpret_cast<Fn>(address);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  return address != nullptr;
}

// The library to open: the value of environment variable `variable` when it
// is set and not empty (PCIEVAL_CUDA_LIBRARY, PCIEVAL_NVML_LIBRARY,
// PCIEVAL_NCCL_LIBRARY: a driver installed outside the loader's path, or the
// simulated node's libraries), else `default_name`.
[[nodiscard]] std::string library_from_environment(std::string_view variable, std::string_view default_name);

// The dlopen handle. Move-only; the destructor dlcloses, unless keep_loaded()
// was called: a thread left behind inside the library (a call that missed
// its deadline, a library's own threads) would have its code unmapped.
class SharedLibrary {
 public:
  // dlopen(name, RTLD_NOW | RTLD_LOCAL): a missing symbol is found here, not
  // mid-run, and the library's symbols stay out of the global namespace, where
  // they could satisfy some other library's lookups. The error is dlerror()'s
  // text ("libnccl.so.2: cannot open shared object file: No such file or
  // directory"), for the caller to put in its own words.
  [[nodiscard]] static Result<SharedLibrary> open(const std::string& name);

  SharedLibrary() = default;  // owns nothing
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  // dlsym: the symbol's address, or null when the library lacks it (or owns
  // nothing).
  [[nodiscard]] void* symbol(const char* name) const;
  // Never dlclose (see the class comment); the handle is left to the
  // process's exit.
  void keep_loaded() noexcept { keep_loaded_ = true; }

 private:
  explicit SharedLibrary(void* handle) : handle_(handle) {}
  void close() noexcept;

  void* handle_ = nullptr;
  bool keep_loaded_ = false;
};

}  // namespace pcieval
