// Reads the PCI functions of a host from a sysfs tree (live /sys or a fixture).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/device.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

// The sysfs attributes of a port's negotiated link, which the link sampler
// reads again and again under load.
inline constexpr std::string_view kCurrentLinkSpeed = "current_link_speed";
inline constexpr std::string_view kCurrentLinkWidth = "current_link_width";

// Caveats met while reading that do not fit a Reading<T>: an unreadable vendor
// or class (the function is kept, as kind other), a malformed AER line, a
// directory entry that is not a PCI function.
struct SysfsNotes {
  std::map<PciAddress, std::vector<std::string>> by_function;
  std::vector<std::string> general;
};

// How long one function's attributes may take to read: as long as an NVML
// call may (topology/nvml.hpp), the other source that can hang in the driver.
inline constexpr std::chrono::milliseconds kSysfsReadTimeout{5000};

struct SysfsReadOptions {
  std::chrono::milliseconds timeout = kSysfsReadTimeout;
  // For tests: called on the reading thread with each attribute's path before
  // it is opened; one that blocks stands in for a read hung in the kernel.
  std::function<void(const std::string& path)> before_read;
};

// Reads every function under `<sysfs_root>/bus/pci/devices/`, sorted by
// address. Each entry there is a symlink into `<sysfs_root>/devices/`; the
// directory enclosing the resolved target is the parent bridge, unless its
// name is not a PCI address (a host bridge such as `pci0000:00`).
//
// A function with link attributes also gets its link's `settings` from its
// binary `config` file (topology/pci_config.hpp: payload sizes, ASPM, ACS;
// kSettingsNeedRoot when the file gives 64 bytes, as /sys does to a user who
// is not root), and every function its `iommu` group from the `iommu_group`
// link and `<sysfs_root>/kernel/iommu_groups/N/type`.
//
// A missing or unreadable attribute never fails the whole read: it becomes an
// error Reading that names the file and the reason. The only error is a root
// with no `bus/pci/devices` directory. Port roles are not inferred here (see
// model/pci_tree.hpp). `notes`, when given, receives the caveats above.
//
// No read blocks the caller for long: a name that is not a regular file (a
// FIFO, a device) is an error Reading without being read, and each function
// is read within `options.timeout`. A function whose read does not return in
// time keeps the identity read before the hang, with every later reading an
// error naming the file ("... did not return within 5 s"), so its link is
// unknown. A hang before the identity is known, or a second hung function,
// is an error for the whole read: the tree cannot be judged without them.
[[nodiscard]] Result<std::vector<PciFunction>> read_pci_functions(const std::filesystem::path& sysfs_root,
                                                                  SysfsNotes* notes = nullptr,
                                                                  const SysfsReadOptions& options = {});

// Parsers of single attribute files, exposed for tests. `file` is the
// attribute's name, quoted in every error.

// `max_link_width` / `current_link_width`: "16\n". 0 is a link that is down;
// 63 is the all-ones value of a device that no longer answers config reads.
[[nodiscard]] Reading<int> parse_sysfs_link_width(std::string_view text, std::string_view file);

// `numa_node`: "-1\n" is an error (the firmware reported no affinity).
[[nodiscard]] Reading<int> parse_sysfs_numa_node(std::string_view text, std::string_view file);

// `aer_dev_correctable`, `_fatal`, `_nonfatal`: one "name count" per line, the
// name possibly holding spaces (kernels before 5.x printed "Bad TLP"), and a
// TOTAL_ERR_* line. Lines that do not end in a count are left out and listed
// in `skipped`.
[[nodiscard]] AerCounters parse_aer_counters(std::string_view text, std::vector<std::string>* skipped = nullptr);

}  // namespace pcieval
