// PCI configuration space through sysfs (<root>/bus/pci/devices/<bdf>/config):
// the PCI Express capability's link registers, a port's payload sizes, ASPM
// and ACS (issue 28, PCIE-FACTS 2.3), and the one write pcieval ever makes to
// a device, the Retrain Link bit of a port's Link Control (PCIE-FACTS 4.3).
// The decoding works on byte arrays so tests need no files.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/port_settings.hpp"
#include "model/result.hpp"

namespace pcieval {

inline constexpr std::uint8_t kPciExpressCapabilityId = 0x10;

// Offsets from the PCI Express capability and the bits pcieval uses.
inline constexpr std::uint16_t kDeviceCapabilitiesOffset = 0x04;
inline constexpr std::uint16_t kDeviceControlOffset = 0x08;
inline constexpr std::uint16_t kLinkCapabilitiesOffset = 0x0C;
inline constexpr std::uint16_t kLinkControlOffset = 0x10;
inline constexpr std::uint16_t kLinkStatusOffset = 0x12;
inline constexpr std::uint16_t kRetrainLinkBit = 0x0020;   // Link Control bit 5
inline constexpr std::uint16_t kLinkTrainingBit = 0x0800;  // Link Status bit 11
inline constexpr std::uint16_t kDataLinkActiveBit = 0x2000;

// Device/Port Type of the PCI Express Capabilities register (bits 7:4).
enum class PcieDeviceType : std::uint8_t {
  kEndpoint = 0x0,
  kLegacyEndpoint = 0x1,
  kRootPort = 0x4,
  kUpstreamPort = 0x5,
  kDownstreamPort = 0x6,
  kPcieToPciBridge = 0x7,
  kPciToPcieBridge = 0x8,
  kRootComplexIntegratedEndpoint = 0x9,
  kRootComplexEventCollector = 0xA,
};

// "Root Port", "Downstream Port", ...; "reserved type 0xN" for other values.
[[nodiscard]] std::string to_string(PcieDeviceType type);

// Retrain Link acts on the link below a port that faces one: a Root Port or
// a switch Downstream Port. It is reserved on Upstream Ports and Endpoints.
[[nodiscard]] bool can_retrain_link(PcieDeviceType type);

// The link registers of one function's PCI Express capability.
struct PcieLinkRegisters {
  std::uint16_t capability_offset = 0;  // of the PCI Express capability in config space
  PcieDeviceType type = PcieDeviceType::kEndpoint;
  std::uint32_t link_capabilities = 0;
  std::uint16_t link_control = 0;
  std::uint16_t link_status = 0;

  [[nodiscard]] bool training() const { return (link_status & kLinkTrainingBit) != 0; }
  [[nodiscard]] bool data_link_active() const { return (link_status & kDataLinkActiveBit) != 0; }
  // LnkCap max speed and width; an error when either field is not a valid value.
  [[nodiscard]] Reading<LinkState> capable() const;
  // LnkSta current speed and width; an error for width 0 (link down) or a
  // speed code outside 1..7.
  [[nodiscard]] Reading<LinkState> negotiated() const;
};

// Walks the capability list of `config` (at least the 256-byte header space)
// from the pointer at 0x34 to the capability with `id`, and returns its
// offset. Errors: vendor 0xffff (the device no longer answers), no list,
// a pointer outside the bytes given, a loop, or no such capability.
[[nodiscard]] Result<std::uint16_t> find_capability(std::span<const std::uint8_t> config, std::uint8_t id);

// The PCI Express capability's link registers from `config`.
[[nodiscard]] Result<PcieLinkRegisters> parse_pcie_link_registers(std::span<const std::uint8_t> config);

// Extended capabilities live from 0x100 to the end of the 4 KiB config space.
inline constexpr std::uint16_t kExtendedCapabilitiesStart = 0x100;
inline constexpr std::uint16_t kAcsExtendedCapabilityId = 0x000D;
// Offsets from the ACS extended capability's header.
inline constexpr std::uint16_t kAcsCapabilityOffset = 0x04;
inline constexpr std::uint16_t kAcsControlOffset = 0x06;

// Walks the extended capability list of `config` from 0x100 (header: ID in
// bits 15:0, version 19:16, next pointer 31:20) to the capability with `id`.
// nullopt when the list has no such capability, or no list at all (a header
// of 0, or all ones as on a conventional PCI device behind a PCIe bridge).
// Errors: 256 bytes or fewer (the extended space was not readable), a next
// pointer below 0x100 or beyond the bytes given, a loop.
[[nodiscard]] Result<std::optional<std::uint16_t>> find_extended_capability(std::span<const std::uint8_t> config,
                                                                            std::uint16_t id);

// The settings issue 28 judges, from one function's config space:
// Max_Payload_Size supported (DevCap 2:0) and programmed (DevCtl 7:5),
// Max_Read_Request_Size (DevCtl 14:12), Relaxed Ordering (DevCtl 4), ASPM
// Control (LnkCtl 1:0), and the ACS capability and control registers.
//
// How much is read depends on how much config space the reader got:
//   64 bytes (an unprivileged reader of a live /sys): an error whose message
//     is exactly kSettingsNeedRoot. Never "off".
//   256 bytes (conventional config space): DevCap, DevCtl and LnkCtl; `acs`
//     an error saying the extended config space was not readable.
//   4096 bytes: everything; `acs` nullopt when the function has no ACS
//     capability.
// A payload or read-request field holding a reserved encoding (6 or 7) is
// left nullopt. Errors: the device does not answer (vendor 0xffff), no PCI
// Express capability, or one cut off by the end of the bytes.
[[nodiscard]] Reading<PortSettings> parse_port_settings(std::span<const std::uint8_t> config);

// One function's config file, open for the life of this object. Move-only.
class PciConfigFile {
 public:
  enum class Mode { kRead, kReadWrite };

  // Opens <sysfs_root>/bus/pci/devices/<bdf>/config. The path is built from
  // the parsed address, never from text a user typed.
  [[nodiscard]] static Result<PciConfigFile> open(const std::filesystem::path& sysfs_root, const PciAddress& bdf,
                                                  Mode mode);

  PciConfigFile(PciConfigFile&& other) noexcept;
  PciConfigFile& operator=(PciConfigFile&& other) noexcept;
  PciConfigFile(const PciConfigFile&) = delete;
  PciConfigFile& operator=(const PciConfigFile&) = delete;
  ~PciConfigFile();

  // Up to 4096 bytes from offset 0, as many as the file gives. Unprivileged
  // readers of a live /sys get only the first 64 bytes.
  [[nodiscard]] Result<std::vector<std::uint8_t>> read_all() const;
  [[nodiscard]] Result<std::uint16_t> read16(std::uint16_t offset) const;
  // Writes exactly these two bytes (little-endian, as config space is).
  [[nodiscard]] Status write16(std::uint16_t offset, std::uint16_t value) const;

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  PciConfigFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// Reads `bdf`'s config file and decodes its PCI Express link registers.
[[nodiscard]] Result<PcieLinkRegisters> read_pcie_link_registers(const std::filesystem::path& sysfs_root,
                                                                 const PciAddress& bdf);

// Whether this process may write config space: effective uid 0.
[[nodiscard]] bool running_as_root();

struct RetrainOptions {
  // How long the link may take to finish training (Linux allows 1 s:
  // PCIE_LINK_RETRAIN_TIMEOUT_MS), both before and after the request.
  std::chrono::milliseconds timeout{1000};
  std::chrono::milliseconds poll_interval{1};
  // Asked before anything is written. A parameter, not a global, so a test can
  // check the refusal while running as root.
  bool (*is_privileged)() = running_as_root;
};

struct RetrainOutcome {
  PcieLinkRegisters before;
  PcieLinkRegisters after;  // read once training ended or the wait ran out
  std::uint16_t control_written = 0;
  bool link_came_back = false;  // Link Training cleared within the timeout
  std::chrono::milliseconds waited{0};
};

// Sets Retrain Link on `port`, as pcie_retrain_link() does: waits for any
// training in progress to end, reads Link Control, writes it back with bit 5
// set (that 16-bit register only), then polls Link Status until Link Training
// clears or the timeout passes. Refuses (an error, nothing written) when not
// privileged or when the port is not a Root Port or Downstream Port.
// A link still training at the end is an outcome (link_came_back false), not
// an error.
[[nodiscard]] Result<RetrainOutcome> retrain_link(const std::filesystem::path& sysfs_root, const PciAddress& port,
                                                  const RetrainOptions& options);

}  // namespace pcieval
