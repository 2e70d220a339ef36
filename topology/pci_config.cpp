#include "topology/pci_config.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "model/enum_names.hpp"

namespace pcieval {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kConfigHeaderBytes = 64;   // what unprivileged readers of /sys see
constexpr std::size_t kConfigSpaceBytes = 4096;  // PCIe extended config space
constexpr std::uint16_t kCapabilityPointer = 0x34;
constexpr std::uint16_t kStatusRegister = 0x06;
constexpr std::uint16_t kStatusCapabilityList = 0x0010;
// 48 capabilities of 4 bytes fill the 192 bytes after the header: more hops
// than that is a loop (the kernel's PCI_FIND_CAP_TTL is the same number).
constexpr int kMaxCapabilityHops = 48;
// The smallest extended capability is 8 bytes: (4096 - 256) / 8 of them fill
// the extended space, and more hops than that is a loop (as the kernel's
// pci_find_next_ext_capability counts).
constexpr int kMaxExtendedCapabilityHops = (4096 - 256) / 8;
constexpr std::uint16_t kDevCtlRelaxedOrdering = 0x0010;

std::string hex(unsigned value, int digits) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "0x%0*x", digits, value);
  return buffer;
}

std::uint16_t le16(std::span<const std::uint8_t> bytes, std::size_t offset) {
  return static_cast<std::uint16_t>(bytes[offset] | bytes[offset + 1] << 8);
}

std::uint32_t le32(std::span<const std::uint8_t> bytes, std::size_t offset) {
  return static_cast<std::uint32_t>(le16(bytes, offset)) | static_cast<std::uint32_t>(le16(bytes, offset + 2)) << 16;
}

Error errno_error(const std::string& what, const std::string& path, int error) {
  return make_error(what + " " + path + ": " + std::strerror(error));
}

Reading<LinkState> link_state_of(unsigned speed_code, unsigned width, const char* register_name) {
  auto gen = gen_from_number(static_cast<int>(speed_code));
  if (!gen)
    return make_error(std::string(register_name) + " speed code " + std::to_string(speed_code) +
                      " is not a PCIe generation");
  if (width == 0) return make_error(std::string(register_name) + " width 0: the link is down");
  if (!is_valid_link_width(static_cast<int>(width))) {
    return make_error(std::string(register_name) + " width " + std::to_string(width) + " is not a PCIe link width");
  }
  return LinkState{gen.value(), static_cast<int>(width)};
}

// The Device/Port Type field's values (PCIe Capabilities register, bits 7:4).
constexpr EnumNames<PcieDeviceType, 9> kDeviceTypeNames{{
    {PcieDeviceType::kEndpoint, "Endpoint"},
    {PcieDeviceType::kLegacyEndpoint, "Legacy Endpoint"},
    {PcieDeviceType::kRootPort, "Root Port"},
    {PcieDeviceType::kUpstreamPort, "Upstream Port"},
    {PcieDeviceType::kDownstreamPort, "Downstream Port"},
    {PcieDeviceType::kPcieToPciBridge, "PCIe-to-PCI Bridge"},
    {PcieDeviceType::kPciToPcieBridge, "PCI-to-PCIe Bridge"},
    {PcieDeviceType::kRootComplexIntegratedEndpoint, "Root Complex Integrated Endpoint"},
    {PcieDeviceType::kRootComplexEventCollector, "Root Complex Event Collector"},
}};

}  // namespace

std::string to_string(PcieDeviceType type) {
  const std::string_view name = name_of(kDeviceTypeNames, type, "");
  if (!name.empty()) return std::string(name);
  return "reserved type " + hex(static_cast<unsigned>(type), 1);
}

bool can_retrain_link(PcieDeviceType type) {
  return type == PcieDeviceType::kRootPort || type == PcieDeviceType::kDownstreamPort;
}

Reading<LinkState> PcieLinkRegisters::capable() const {
  return link_state_of(link_capabilities & 0xFU, (link_capabilities >> 4) & 0x3FU, "LnkCap");
}

Reading<LinkState> PcieLinkRegisters::negotiated() const {
  return link_state_of(link_status & 0xFU, (link_status >> 4) & 0x3FU, "LnkSta");
}

Result<std::uint16_t> find_capability(std::span<const std::uint8_t> config, std::uint8_t id) {
  if (config.size() < kConfigHeaderBytes) {
    return make_error("config space too short (" + std::to_string(config.size()) + " bytes)");
  }
  if (le16(config, 0) == 0xFFFF) {
    return make_error("config space reads vendor 0xffff: the device does not answer (fell off the bus?)");
  }
  if ((le16(config, kStatusRegister) & kStatusCapabilityList) == 0) return make_error("no capability list");
  // The bottom two bits of every pointer are reserved (PCI 3.0 6.7).
  std::size_t offset = config[kCapabilityPointer] & 0xFCU;
  for (int hops = 0; offset != 0; ++hops) {
    if (hops >= kMaxCapabilityHops) return make_error("capability list loops");
    if (offset < kConfigHeaderBytes)
      return make_error("capability pointer " + hex(static_cast<unsigned>(offset), 2) + " points into the header");
    if (offset + 2 > config.size()) {
      return make_error("capability at " + hex(static_cast<unsigned>(offset), 2) + " lies beyond the " +
                        std::to_string(config.size()) + " readable bytes of config space (the rest needs root)");
    }
    if (config[offset] == id) return static_cast<std::uint16_t>(offset);
    offset = config[offset + 1] & 0xFCU;
  }
  return make_error("no capability with ID " + hex(id, 2));
}

Result<PcieLinkRegisters> parse_pcie_link_registers(std::span<const std::uint8_t> config) {
  auto offset = find_capability(config, kPciExpressCapabilityId);
  if (!offset) return make_error("PCI Express capability: " + offset.error().message);
  const std::size_t cap = offset.value();
  if (cap + kLinkStatusOffset + 2 > config.size()) {
    return make_error("PCI Express capability at " + hex(static_cast<unsigned>(cap), 2) + " is cut off at byte " +
                      std::to_string(config.size()));
  }
  PcieLinkRegisters registers;
  registers.capability_offset = static_cast<std::uint16_t>(cap);
  registers.type = static_cast<PcieDeviceType>((le16(config, cap + 2) >> 4) & 0xFU);
  registers.link_capabilities = le32(config, cap + kLinkCapabilitiesOffset);
  registers.link_control = le16(config, cap + kLinkControlOffset);
  registers.link_status = le16(config, cap + kLinkStatusOffset);
  return registers;
}

Result<std::optional<std::uint16_t>> find_extended_capability(std::span<const std::uint8_t> config, std::uint16_t id) {
  if (config.size() <= kExtendedCapabilitiesStart) {
    return make_error("the extended config space (above 0x100) was not readable: " + std::to_string(config.size()) +
                      " bytes of config space");
  }
  constexpr std::optional<std::uint16_t> kNone;
  std::size_t offset = kExtendedCapabilitiesStart;
  for (int hops = 0;; ++hops) {
    if (hops >= kMaxExtendedCapabilityHops) return make_error("extended capability list loops");
    if (offset < kExtendedCapabilitiesStart) {
      return make_error("extended capability pointer " + hex(static_cast<unsigned>(offset), 3) + " points below 0x100");
    }
    if (offset + 4 > config.size()) {
      return make_error("extended capability at " + hex(static_cast<unsigned>(offset), 3) + " lies beyond the " +
                        std::to_string(config.size()) + " readable bytes of config space");
    }
    const std::uint32_t header = le32(config, offset);
    // No extended capabilities: the first header reads 0 (none implemented)
    // or all ones (a conventional function, or a platform without ECAM).
    if (offset == kExtendedCapabilitiesStart && (header == 0 || header == 0xFFFFFFFFU)) return kNone;
    if ((header & 0xFFFFU) == id) return std::optional<std::uint16_t>(static_cast<std::uint16_t>(offset));
    // The bottom two bits of the pointer are reserved (PCIe Base 7.6.3).
    const std::size_t next = (header >> 20) & 0xFFCU;
    if (next == 0) return kNone;
    offset = next;
  }
}

namespace {

// DevCap, DevCtl and Max_Read_Request fields: 128 << code, codes 0..5
// (128..4096 bytes); 6 and 7 are reserved.
std::optional<int> payload_bytes(unsigned code) {
  constexpr unsigned kLargestCode = 5;
  if (code > kLargestCode) return std::nullopt;
  return 128 << code;
}

}  // namespace

Reading<PortSettings> parse_port_settings(std::span<const std::uint8_t> config) {
  if (config.size() == kConfigHeaderBytes) return make_error(std::string(kSettingsNeedRoot));
  auto offset = find_capability(config, kPciExpressCapabilityId);
  if (!offset) return make_error("PCI Express capability: " + offset.error().message);
  const std::size_t cap = offset.value();
  if (cap + kLinkControlOffset + 2 > config.size()) {
    return make_error("PCI Express capability at " + hex(static_cast<unsigned>(cap), 2) + " is cut off at byte " +
                      std::to_string(config.size()));
  }
  const std::uint32_t device_capabilities = le32(config, cap + kDeviceCapabilitiesOffset);
  const std::uint16_t device_control = le16(config, cap + kDeviceControlOffset);
  const std::uint16_t link_control = le16(config, cap + kLinkControlOffset);

  PortSettings settings;
  settings.max_payload_supported_bytes = payload_bytes(device_capabilities & 0x7U);
  settings.max_payload_bytes = payload_bytes((device_control >> 5) & 0x7U);
  settings.max_read_request_bytes = payload_bytes((device_control >> 12) & 0x7U);
  settings.relaxed_ordering = (device_control & kDevCtlRelaxedOrdering) != 0;
  settings.aspm = static_cast<AspmControl>(link_control & 0x3U);

  auto acs = find_extended_capability(config, kAcsExtendedCapabilityId);
  if (!acs) {
    settings.acs = make_error("ACS not read: " + acs.error().message);
  } else if (!acs.value()) {
    settings.acs = std::optional<AcsRegisters>{};
  } else {
    const std::size_t at = *acs.value();
    if (at + kAcsControlOffset + 2 > config.size()) {
      settings.acs = make_error("ACS capability at " + hex(static_cast<unsigned>(at), 3) + " is cut off at byte " +
                                std::to_string(config.size()));
    } else {
      settings.acs = std::optional<AcsRegisters>{
          AcsRegisters{le16(config, at + kAcsCapabilityOffset), le16(config, at + kAcsControlOffset)}};
    }
  }
  return settings;
}

Result<PciConfigFile> PciConfigFile::open(const fs::path& sysfs_root, const PciAddress& bdf, Mode mode) {
  const fs::path path = sysfs_root / "bus" / "pci" / "devices" / to_string(bdf) / "config";
  const int flags = (mode == Mode::kReadWrite ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return errno_error("cannot open", path.string(), errno);
  return PciConfigFile(fd, path.string());
}

PciConfigFile::PciConfigFile(PciConfigFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

PciConfigFile& PciConfigFile::operator=(PciConfigFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

PciConfigFile::~PciConfigFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::vector<std::uint8_t>> PciConfigFile::read_all() const {
  std::vector<std::uint8_t> bytes(kConfigSpaceBytes);
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t n = ::pread(fd_, bytes.data() + filled, bytes.size() - filled, static_cast<off_t>(filled));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error("cannot read", path_, errno);
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  bytes.resize(filled);
  return bytes;
}

Result<std::uint16_t> PciConfigFile::read16(std::uint16_t offset) const {
  std::array<std::uint8_t, 2> bytes{};
  ssize_t n = 0;
  do {
    n = ::pread(fd_, bytes.data(), bytes.size(), offset);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno_error("cannot read", path_, errno);
  if (n != 2) return make_error("cannot read " + path_ + ": offset " + hex(offset, 3) + " is beyond its end");
  return le16(bytes, 0);
}

Status PciConfigFile::write16(std::uint16_t offset, std::uint16_t value) const {
  const std::array<std::uint8_t, 2> bytes{static_cast<std::uint8_t>(value & 0xFFU),
                                          static_cast<std::uint8_t>(value >> 8)};
  ssize_t n = 0;
  do {
    n = ::pwrite(fd_, bytes.data(), bytes.size(), offset);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno_error("cannot write", path_, errno);
  if (n != 2) return make_error("short write to " + path_ + " at offset " + hex(offset, 3));
  return ok_status();
}

Result<PcieLinkRegisters> read_pcie_link_registers(const fs::path& sysfs_root, const PciAddress& bdf) {
  auto file = PciConfigFile::open(sysfs_root, bdf, PciConfigFile::Mode::kRead);
  if (!file) return file.error();
  auto bytes = file->read_all();
  if (!bytes) return bytes.error();
  auto registers = parse_pcie_link_registers(bytes.value());
  if (!registers) return make_error(to_string(bdf) + ": " + registers.error().message);
  return registers;
}

bool running_as_root() { return ::geteuid() == 0; }

namespace {

// Polls Link Status until Link Training is clear; false when `timeout` passed first.
Result<bool> wait_until_trained(const PciConfigFile& file, std::uint16_t status_offset, const RetrainOptions& options,
                                std::uint16_t& last_status) {
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  while (true) {
    auto status = file.read16(status_offset);
    if (!status) return status.error();
    last_status = status.value();
    if (last_status == 0xFFFF) return make_error("Link Status reads 0xffff: the port no longer answers");
    if ((last_status & kLinkTrainingBit) == 0) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(options.poll_interval);
  }
}

}  // namespace

Result<RetrainOutcome> retrain_link(const fs::path& sysfs_root, const PciAddress& port, const RetrainOptions& options) {
  const std::string name = to_string(port);
  if (options.is_privileged == nullptr || !options.is_privileged()) {
    return make_error("retraining " + name + " writes PCI config space: run as root");
  }
  auto file = PciConfigFile::open(sysfs_root, port, PciConfigFile::Mode::kReadWrite);
  if (!file) return file.error();
  auto bytes = file->read_all();
  if (!bytes) return bytes.error();
  auto registers = parse_pcie_link_registers(bytes.value());
  if (!registers) return make_error(name + ": " + registers.error().message);
  if (!can_retrain_link(registers->type)) {
    return make_error(name + " (" + to_string(registers->type) +
                      ") is not a Root Port or Downstream Port: Retrain Link is reserved there");
  }

  RetrainOutcome outcome;
  outcome.before = registers.value();
  const auto control_offset = static_cast<std::uint16_t>(outcome.before.capability_offset + kLinkControlOffset);
  const auto status_offset = static_cast<std::uint16_t>(outcome.before.capability_offset + kLinkStatusOffset);
  const auto started = std::chrono::steady_clock::now();

  // A retrain requested mid-training may be lost; Linux waits the same way.
  std::uint16_t status = outcome.before.link_status;
  auto idle = wait_until_trained(file.value(), status_offset, options, status);
  if (!idle) return idle.error();
  if (!idle.value())
    return make_error(name + " is still training after " + std::to_string(options.timeout.count()) +
                      " ms: nothing written");

  // Read again right before the write: Link Control is the only register
  // touched, and every bit but Retrain Link goes back as it was.
  auto control = file->read16(control_offset);
  if (!control) return control.error();
  outcome.control_written = static_cast<std::uint16_t>(control.value() | kRetrainLinkBit);
  if (Status written = file->write16(control_offset, outcome.control_written); !written) return written.error();

  auto trained = wait_until_trained(file.value(), status_offset, options, status);
  if (!trained) return trained.error();
  outcome.link_came_back = trained.value();
  outcome.waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  outcome.after = outcome.before;
  outcome.after.link_status = status;
  if (auto control_after = file->read16(control_offset)) outcome.after.link_control = control_after.value();
  return outcome;
}

}  // namespace pcieval
