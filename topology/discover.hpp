// Discovery: the evidence record's devices, paths and locality, read from
// sysfs and hwloc without any judgement.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "model/evidence.hpp"
#include "model/result.hpp"
#include "topology/sysfs_reader.hpp"

namespace pcieval {

struct DiscoveryOptions {
  // Where the PCI tree is read; tests and offline runs point it at a fixture.
  std::filesystem::path sysfs_root = "/sys";
  // An `lstopo --of xml` file to take locality from instead of live hwloc.
  std::optional<std::filesystem::path> topology_xml;
  // The sysfs reads' deadline (and the tests' hook into them).
  SysfsReadOptions sysfs_read;
};

// Host name and kernel release (uname). Fields that cannot be read are empty.
[[nodiscard]] HostInfo read_host_info();

// Whether /proc/cpuinfo text shows the x86 `hypervisor` flag (set by every
// hypervisor that follows the CPUID leaf 1 ECX bit 31 convention: KVM, Xen
// HVM, Hyper-V, VMware). nullopt when the text has no `flags` line (another
// architecture, or not cpuinfo at all): unknown, not "bare metal".
[[nodiscard]] std::optional<bool> cpuinfo_hypervisor_flag(std::string_view cpuinfo);

// /proc/cmdline's text as HostInfo::kernel_command_line keeps it: without the
// trailing newline and blanks.
[[nodiscard]] std::string kernel_command_line(std::string_view cmdline);

// Reads every PCI function, infers port roles and builds one DeviceRecord per
// non-bridge function (ordered by address) with its path and locality.
//
// Errors: a sysfs root without bus/pci/devices, and a topology XML that is
// missing or malformed (both are input errors). Live hwloc failing is not an
// error: it becomes a note and `topology` stays nullopt. A sysfs root other
// than /sys without an XML is read without hwloc, since the live machine's
// topology would not describe it; a note says so.
//
// host.hypervisor is read from proc/cpuinfo beside the sysfs root
// (/proc/cpuinfo for /sys; a fixture's NAME/proc/cpuinfo for NAME/sys), and
// host.kernel_command_line from proc/cmdline beside it; each stays nullopt
// where the file is absent.
//
// Device notes record where hwloc and sysfs disagree: a different bridge chain
// above the device, or a different NUMA node.
[[nodiscard]] Result<Evidence> discover(const DiscoveryOptions& options);

}  // namespace pcieval
