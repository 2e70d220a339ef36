#include "model/port_settings.hpp"

#include <array>
#include <utility>

#include "model/enum_names.hpp"

namespace pcieval {
namespace {

constexpr std::array<std::pair<std::uint16_t, std::string_view>, 7> kAcsBitNames = {{
    {kAcsSourceValidation, "SrcValid"},
    {kAcsTranslationBlocking, "TransBlk"},
    {kAcsRequestRedirect, "ReqRedir"},
    {kAcsCompletionRedirect, "CmpltRedir"},
    {kAcsUpstreamForwarding, "UpstreamFwd"},
    {kAcsEgressControl, "EgressCtrl"},
    {kAcsDirectTranslated, "DirectTrans"},
}};

constexpr EnumNames<AspmControl, 4> kAspmNames{{
    {AspmControl::kDisabled, "disabled"},
    {AspmControl::kL0s, "l0s"},
    {AspmControl::kL1, "l1"},
    {AspmControl::kL0sL1, "l0s_l1"},
}};
static_assert(names_every_value_in_order(kAspmNames));

constexpr EnumNames<AspmControl, 4> kAspmLspciWords{{
    {AspmControl::kDisabled, "Disabled"},
    {AspmControl::kL0s, "L0s Enabled"},
    {AspmControl::kL1, "L1 Enabled"},
    {AspmControl::kL0sL1, "L0s L1 Enabled"},
}};

constexpr EnumNames<PeerCapability, 3> kPeerCapabilityNames{{
    {PeerCapability::kRead, "read"},
    {PeerCapability::kWrite, "write"},
    {PeerCapability::kAccess, "access"},
}};
static_assert(names_every_value_in_order(kPeerCapabilityNames));

}  // namespace

std::string acs_bits_text(std::uint16_t bits) {
  std::string text;
  for (const auto& [bit, name] : kAcsBitNames) {
    if (!text.empty()) text += ' ';
    text += name;
    text += (bits & bit) != 0 ? '+' : '-';
  }
  return text;
}

std::string_view to_string(AspmControl aspm) { return name_of(kAspmNames, aspm); }

Result<AspmControl> aspm_from_string(std::string_view text) { return value_of(kAspmNames, text, "ASPM setting"); }

std::string_view lspci_text(AspmControl aspm) { return name_of(kAspmLspciWords, aspm); }

std::string_view to_string(PeerCapability capability) { return name_of(kPeerCapabilityNames, capability); }

Result<PeerCapability> peer_capability_from_string(std::string_view text) {
  return value_of(kPeerCapabilityNames, text, "peer capability");
}

const std::vector<std::string_view>& peer_status_words() {
  static const std::vector<std::string_view> words = {"ok",
                                                      "chipset_not_supported",
                                                      "gpu_not_supported",
                                                      "topology_not_supported",
                                                      "disabled_by_regkey",
                                                      "not_supported",
                                                      "unknown"};
  return words;
}

}  // namespace pcieval
