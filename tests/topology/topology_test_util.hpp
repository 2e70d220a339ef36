// Helpers shared by the topology tests: fixture locations and small sysfs
// trees built by hand in a temporary directory.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/device.hpp"
#include "model/pci_address.hpp"

namespace pcieval::testing {

inline std::filesystem::path fixture(const std::string& machine) {
  return std::filesystem::path(PCIEVAL_FIXTURES_DIR) / machine;
}
inline std::filesystem::path fixture_sysfs(const std::string& machine) { return fixture(machine) / "sys"; }
inline std::filesystem::path fixture_xml(const std::string& machine) { return fixture(machine) / "topology.xml"; }

inline PciAddress bdf(const std::string& text) {
  auto address = parse_pci_address(text);
  if (!address) throw std::invalid_argument(address.error().message);
  return address.value();
}

inline const PciFunction* find(const std::vector<PciFunction>& functions, const std::string& text) {
  const PciAddress address = bdf(text);
  const auto it = std::find_if(functions.begin(), functions.end(),
                               [&](const PciFunction& function) { return function.bdf == address; });
  return it == functions.end() ? nullptr : &*it;
}

// A directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pcieval-topology-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A hand-built sysfs tree: functions are directories under
// <root>/devices/pci0000:00/..., linked from <root>/bus/pci/devices.
class SysfsTree {
 public:
  explicit SysfsTree(const std::filesystem::path& root) : root_(root) {
    std::filesystem::create_directories(root_ / "bus" / "pci" / "devices");
  }

  // `parent_dir` is relative to <root>/devices ("pci0000:00" or
  // "pci0000:00/0000:00:01.0"). Returns the function's directory.
  std::filesystem::path add(const std::string& parent_dir, const std::string& name, const std::string& vendor,
                            const std::string& class_code) {
    auto dir = root_ / "devices" / parent_dir / name;
    std::filesystem::create_directories(dir);
    write_file(dir / "vendor", vendor + "\n");
    write_file(dir / "device", "0x1234\n");
    write_file(dir / "class", class_code + "\n");
    write_file(dir / "numa_node", "0\n");
    write_file(dir / "local_cpulist", "0-3\n");
    std::filesystem::create_directory_symlink(std::filesystem::path("../../../devices") / parent_dir / name,
                                              root_ / "bus" / "pci" / "devices" / name);
    return dir;
  }

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace pcieval::testing
