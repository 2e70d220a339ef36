#include "bench/detail/scoped_environment.hpp"

#include <cstdlib>
#include <utility>

namespace pcieval {

ScopedEnvironment::~ScopedEnvironment() {
  // Restored in reverse, so a variable set twice ends at its first value.
  for (auto saved = saved_.rbegin(); saved != saved_.rend(); ++saved) {
    if (saved->was_set) {
      ::setenv(saved->name.c_str(), saved->value.c_str(), 1);
    } else {
      ::unsetenv(saved->name.c_str());
    }
  }
}

void ScopedEnvironment::set(const std::string& name, const std::string& value) {
  Saved saved{name, false, {}};
  if (const char* old = std::getenv(name.c_str()); old != nullptr) {
    saved.was_set = true;
    saved.value = old;
  }
  saved_.push_back(std::move(saved));
  ::setenv(name.c_str(), value.c_str(), 1);
}

}  // namespace pcieval
