// Sets environment variables for its lifetime and restores each one's earlier
// value (or absence) when destroyed. setenv is not thread-safe against
// concurrent getenv: hold it only where nothing else reads the environment
// (around NCCL's communicator setup, where NCCL reads its variables).
#pragma once

#include <string>
#include <vector>

namespace pcieval {

class ScopedEnvironment {
 public:
  ScopedEnvironment() = default;
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;
  ~ScopedEnvironment();
  void set(const std::string& name, const std::string& value);

 private:
  struct Saved {
    std::string name;
    bool was_set = false;
    std::string value;
  };
  std::vector<Saved> saved_;
};

}  // namespace pcieval
