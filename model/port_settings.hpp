// The settings of a port that cost bandwidth or reroute traffic on a link
// that trained at full Gen and width (issue 28): payload and read-request
// sizes as programmed, ASPM, and Access Control Services. Read from config
// space (topology/, as root) or from `lspci -vvv` (ingest/); judged in
// validate/path_settings_rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

// ACS Capability and Control bits (PCIe Base 6.0 7.7.11.2/3), named as lspci
// prints them. The same bit positions in both registers.
enum AcsBit : std::uint16_t {
  kAcsSourceValidation = 0x0001,     // SrcValid
  kAcsTranslationBlocking = 0x0002,  // TransBlk
  kAcsRequestRedirect = 0x0004,      // ReqRedir: peer requests go up to the root complex
  kAcsCompletionRedirect = 0x0008,   // CmpltRedir: peer completions go up too
  kAcsUpstreamForwarding = 0x0010,   // UpstreamFwd
  kAcsEgressControl = 0x0020,        // EgressCtrl
  kAcsDirectTranslated = 0x0040,     // DirectTrans: ATS-translated requests may still go peer to peer
};

// "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-":
// lspci's order and words, for reasons a reader can grep against lspci -vvv.
[[nodiscard]] std::string acs_bits_text(std::uint16_t bits);

struct AcsRegisters {
  std::uint16_t capability = 0;  // ACSCap (the low 16 bits of the capability register)
  std::uint16_t control = 0;     // ACSCtl

  // Request or completion redirect enabled: a switch downstream port then
  // sends peer-to-peer requests (or their completions) from the device below
  // it up to the root complex instead of across the switch.
  [[nodiscard]] bool redirects_peer_traffic() const {
    return (control & (kAcsRequestRedirect | kAcsCompletionRedirect)) != 0;
  }
  bool operator==(const AcsRegisters&) const = default;
};

// LnkCtl bits 1:0, ASPM Control.
enum class AspmControl : std::uint8_t { kDisabled = 0, kL0s = 1, kL1 = 2, kL0sL1 = 3 };

// "disabled", "l0s", "l1", "l0s_l1" (the document's names).
[[nodiscard]] std::string_view to_string(AspmControl aspm);
[[nodiscard]] Result<AspmControl> aspm_from_string(std::string_view text);
// lspci's words: "Disabled", "L0s Enabled", "L1 Enabled", "L0s L1 Enabled".
[[nodiscard]] std::string_view lspci_text(AspmControl aspm);

// What one port's config space (or lspci -vvv block) says. Each field is
// nullopt when the source did not give it; `acs` is an error when the
// extended config space was not readable (256 bytes or fewer: the ACS
// capability lives above 0x100), and nullopt when the port has no ACS
// capability at all.
struct PortSettings {
  std::optional<int> max_payload_supported_bytes;  // DevCap bits 2:0, 128 << v
  std::optional<int> max_payload_bytes;            // DevCtl bits 7:5, as programmed
  std::optional<int> max_read_request_bytes;       // DevCtl bits 14:12
  std::optional<bool> relaxed_ordering;            // DevCtl bit 4
  std::optional<AspmControl> aspm;                 // LnkCtl bits 1:0
  Reading<std::optional<AcsRegisters>> acs = make_error("not read");
};

// The words every settings reading of an unprivileged live read carries:
// /sys gives the first 64 bytes of config space to a user who is not root,
// which hold none of these registers. Never read as "off".
inline constexpr std::string_view kSettingsNeedRoot =
    "not read: needs root (config space gives 64 bytes to an unprivileged reader)";

// A device's IOMMU group as sysfs shows it (/sys/bus/pci/devices/B/iommu_group
// and /sys/kernel/iommu_groups/N/type).
struct IommuReading {
  std::optional<int> group;  // nullopt: the device has no IOMMU group (IOMMU off)
  // "DMA", "DMA-FQ" (translated), "identity" (passthrough, iommu=pt),
  // "unmanaged", "blocked"; nullopt where the type file is absent (kernels
  // before 5.11) or the device has no group.
  std::optional<std::string> type;

  bool operator==(const IommuReading&) const = default;
  // DMA or DMA-FQ: every DMA of the device goes through IOMMU translation.
  [[nodiscard]] bool translated() const { return type && (*type == "DMA" || *type == "DMA-FQ"); }
};

// Whether one GPU may reach another's memory directly, and how, as a source
// reported it: NVML's nvmlDeviceGetP2PStatus, `nvidia-smi topo -p2p r|w`,
// CUDA's cuDeviceCanAccessPeer, or p2pBandwidthLatencyTest's "CAN/CANNOT
// Access Peer" lines.
enum class PeerCapability : std::uint8_t { kRead, kWrite, kAccess };

// "read", "write", "access".
[[nodiscard]] std::string_view to_string(PeerCapability capability);
[[nodiscard]] Result<PeerCapability> peer_capability_from_string(std::string_view text);

// The status words follow NVML's nvmlGpuP2PStatus_t (and nvidia-smi topo's
// legend): "ok", "chipset_not_supported" (CNS), "gpu_not_supported" (GNS),
// "topology_not_supported" (TNS), "disabled_by_regkey", "not_supported" (NS),
// "unknown" (U).
struct PeerStatus {
  PciAddress gpu;
  PciAddress peer;
  PeerCapability capability = PeerCapability::kAccess;
  std::string status;
  std::string source;  // "nvml", "cuda", "nvidia-smi topo -p2p r", "p2pBandwidthLatencyTest"

  bool operator==(const PeerStatus&) const = default;
  [[nodiscard]] bool ok() const { return status == "ok"; }
};

// Every status word PeerStatus::status may hold, in NVML's order.
[[nodiscard]] const std::vector<std::string_view>& peer_status_words();

}  // namespace pcieval
