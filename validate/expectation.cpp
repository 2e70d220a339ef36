#include "validate/expectation.hpp"

#include <algorithm>
#include <array>

#include "validate/link_rules.hpp"

namespace pcieval {
namespace {

struct VirtualPortId {
  PciId id;
  const char* name;
  bool shared_with_hardware;  // an ID real silicon also carries: trusted only in a guest
};

// QEMU: include/hw/pci/pci_ids.h (PCI_VENDOR_ID_REDHAT 0x1b36 with
// PCI_DEVICE_ID_REDHAT_BRIDGE 0x0001, _PCIE_RP 0x000c, _PCIE_BRIDGE 0x000e),
// hw/pci-bridge/ioh3420.c (Intel 0x3420), xio3130_upstream.c and
// xio3130_downstream.c (TI 0x8232, 0x8233). VMware: the "PCI Express Root
// Port" its virtual hardware exposes (15ad:07a0). Hyper-V's vPCI exposes no
// port at all: that case is a guest's device with no port above it.
constexpr std::array<VirtualPortId, 7> kVirtualPorts = {{
    {{0x1b36, 0x000c}, "QEMU pcie-root-port", false},
    {{0x1b36, 0x000e}, "QEMU pcie-pci-bridge", false},
    {{0x1b36, 0x0001}, "QEMU pci-bridge", false},
    {{0x15ad, 0x07a0}, "VMware PCI Express Root Port", false},
    {{0x8086, 0x3420}, "QEMU ioh3420 root port", true},
    {{0x104c, 0x8232}, "QEMU xio3130 switch upstream port", true},
    {{0x104c, 0x8233}, "QEMU xio3130 switch downstream port", true},
}};

bool above(const LinkState& got, const LinkState& can) { return got.gen > can.gen || got.width > can.width; }

std::string port_text(const Link& link, const Evidence& evidence) {
  if (link.upstream_id) {
    if (auto name = virtual_port_name(*link.upstream_id, evidence.host.hypervisor)) return *name;
  }
  return "the port " + to_string(link.upstream);
}

}  // namespace

ExpectationOptions expectation_options(const ThresholdProfile& profile) {
  return ExpectationOptions{profile.defaults.assume_full_link_behind_virtual_port};
}

std::optional<std::string> virtual_port_name(const PciId& id, std::optional<bool> hypervisor) {
  for (const VirtualPortId& port : kVirtualPorts) {
    if (port.id != id) continue;
    if (port.shared_with_hardware && hypervisor != true) return std::nullopt;
    return std::string(port.name) + " [" + to_string(id) + "]";
  }
  return std::nullopt;
}

bool ends_at_virtual_port(const Link& link, const Evidence& evidence) {
  if (link.upstream_id && virtual_port_name(*link.upstream_id, evidence.host.hypervisor)) return true;
  if (evidence.host.hypervisor != true) return false;
  const auto port_can = link.upstream_end.capable();
  const auto device_runs = link.downstream_end.negotiated();
  return port_can && device_runs && above(device_runs.value(), port_can.value());
}

namespace {

// Both ends read but disagree: which one is right is unknown, so the link
// state stays unknown unless the higher of the two settles the verdict.
void settle_disagreement(const Link& link, LinkExpectation& out) {
  const auto ends = link.disagreement();
  if (!ends || !out.expected) return;
  const auto settled = state_despite_disagreement(ends->first, ends->second, out.expected.value());
  if (!settled) return;
  out.negotiated = *settled;
  out.note = disagreement_note(to_string(link.downstream) + " reads " + to_string(ends->first) + ", " +
                               to_string(link.upstream) + " reads " + to_string(ends->second));
}

// The first reading of an end that has link registers but failed to read.
std::optional<std::string> broken_reading(const PortLinkReading& end) {
  if (end.has_no_link()) return std::nullopt;
  if (!end.max_speed) return end.max_speed.error().message;
  if (!end.max_width) return end.max_width.error().message;
  if (!end.current_speed) return end.current_speed.error().message;
  if (!end.current_width) return end.current_width.error().message;
  return std::nullopt;
}

}  // namespace

std::optional<LinkState> state_despite_disagreement(const LinkState& downstream, const LinkState& upstream,
                                                    const LinkState& expected) {
  const LinkState higher{std::max(downstream.gen, upstream.gen), std::max(downstream.width, upstream.width)};
  if (higher == expected) return std::nullopt;
  return higher;
}

std::string disagreement_note(const std::string& readings) {
  return "the two ends disagree (" + readings +
         "); judged by the higher of both, which settles it whichever end is right";
}

LinkExpectation expect_link(const Link& link, const Evidence& evidence, const ExpectationOptions& options) {
  LinkExpectation out;
  if (!ends_at_virtual_port(link, evidence)) {
    out.expected = link.expected();
    out.negotiated = link.negotiated();
    settle_disagreement(link, out);
    return out;
  }
  // The emulated port's registers describe nothing physical: the link is
  // read from the device end alone. They still have to read: an emulated
  // port with link registers that read garbage is a broken reading, not an
  // absent one.
  out.basis = ExpectationBasis::kVirtualPort;
  out.negotiated = link.downstream_end.negotiated();
  if (!out.negotiated) {
    out.negotiated =
        make_error("negotiated state of " + to_string(link.downstream) + " unknown: " + out.negotiated.error().message);
  } else if (const auto broken = broken_reading(link.upstream_end)) {
    out.negotiated = make_error("the emulated port " + to_string(link.upstream) +
                                " has link registers that do not read (" + *broken + ")");
  }
  const std::string port = port_text(link, evidence);
  const auto own = link.downstream_end.capable();
  if (!own) {
    out.expected = own.error();
    out.conclusive = false;
    out.note = "the port above is virtual (" + port + ")";
    return out;
  }
  out.expected = own.value();
  if (options.assume_full_link_behind_virtual_port) {
    out.note = "the port above is virtual (" + port + "); judged against the device's own " + to_string(own.value());
  } else {
    out.conclusive = false;
    out.note = "the port above is virtual (" + port +
               ") and the profile does not assume a full link behind it "
               "(assume_full_link_behind_virtual_port: false)";
  }
  return out;
}

std::optional<int> expected_nvml_generation(const NvmlGpuLink& nvml) {
  if (!nvml.max_gen) {
    if (nvml.gpu_max_gen && nvml.host_max_gen) return std::min(*nvml.gpu_max_gen, *nvml.host_max_gen);
    return std::nullopt;
  }
  // NVML's Max already folds in the port above (PCIE-FACTS 6). A Host Max
  // below it caps the link only when the link does not already run above
  // Host Max: an A100 SXM4 reading Max 4, Current 4, Host Max 3 (corpus
  // nvsmi_a100sxm4_hostmax3_text.txt) sits behind a switch whose uplink is
  // Gen3; its own link is healthy at Gen4.
  if (nvml.host_max_gen && *nvml.host_max_gen < *nvml.max_gen &&
      (!nvml.current_gen || *nvml.current_gen <= *nvml.host_max_gen)) {
    return *nvml.host_max_gen;
  }
  return nvml.max_gen;
}

std::optional<LinkExpectation> expect_unplaced_link(const DeviceRecord& device, const Evidence& evidence,
                                                    const ExpectationOptions& options) {
  if (!device.path.empty()) return std::nullopt;
  const auto& own = device.function.link;
  const NvmlGpuLink* nvml = device.nvml ? &*device.nvml : nullptr;
  const std::optional<int> nvml_gen = nvml != nullptr ? expected_nvml_generation(*nvml) : std::nullopt;
  const bool nvml_max = nvml_gen && nvml->max_width;
  const bool nvml_current = nvml != nullptr && nvml->current_gen && nvml->current_width;
  if (!own && !nvml_max && !nvml_current) return std::nullopt;

  LinkExpectation out;
  // The state: loaded where sampled (a busy capture, the engine's sampler),
  // else the device's own LnkSta, else NVML's current reading.
  if (auto loaded = best_state_under_load(evidence.link_samples, device.function.bdf)) {
    out.negotiated = *loaded;
  } else if (own && own->negotiated()) {
    out.negotiated = own->negotiated();
  } else if (nvml_current) {
    auto gen = gen_from_number(*nvml->current_gen);
    out.negotiated =
        gen ? Reading<LinkState>(LinkState{gen.value(), *nvml->current_width}) : Reading<LinkState>(gen.error());
  } else {
    out.negotiated = own->negotiated();
  }

  if (nvml_max) {
    // "Max possible with this device and system" (nvmlDeviceGetMaxPcieLinkGeneration
    // and ...Width, PCIE-FACTS 6): the port above is already folded in.
    // Set, as nvml_max says; value_or keeps GCC's -Wmaybe-uninitialized quiet.
    const int max_gen = nvml_gen.value_or(0);
    auto gen = gen_from_number(max_gen);
    out.basis = ExpectationBasis::kNvmlMax;
    out.expected = gen ? Reading<LinkState>(LinkState{gen.value(), *nvml->max_width}) : Reading<LinkState>(gen.error());
    out.note = "nvidia-smi/NVML Max, which includes the port above";
    if (nvml->host_max_gen && nvml->gpu_max_gen && *nvml->host_max_gen < *nvml->gpu_max_gen &&
        max_gen == *nvml->host_max_gen) {
      out.note = "nvidia-smi Max capped by the host's Gen" + std::to_string(*nvml->host_max_gen) +
                 " (Host Max; the GPU can do Gen" + std::to_string(*nvml->gpu_max_gen) + ")";
    } else if (nvml->host_max_gen && *nvml->host_max_gen < max_gen) {
      out.note += "; Host Max Gen" + std::to_string(*nvml->host_max_gen) +
                  " is below the link's own state, so it describes a hop above the GPU (a switch's uplink), "
                  "which was not judged";
    }
    return out;
  }
  out.expected = own ? own->capable() : Reading<LinkState>(make_error("no capability of the link was read"));
  if (evidence.host.hypervisor == true && options.assume_full_link_behind_virtual_port) {
    out.basis = ExpectationBasis::kGuestNoPort;
    out.note = "a virtual machine's device with no port above it";
    if (out.expected) out.note += "; judged against its own " + to_string(out.expected.value());
    return out;
  }
  out.basis = ExpectationBasis::kOwnCapability;
  out.conclusive = false;
  out.note = evidence.host.hypervisor == true
                 ? "a virtual machine's device with no port above it, and the profile does not assume a full link "
                   "(assume_full_link_behind_virtual_port: false)"
                 : "the port above it is not in the evidence";
  return out;
}

Result<PathExpectation> expect_path(const DeviceRecord& device, const Evidence& evidence,
                                    const ExpectationOptions& options) {
  const std::string bdf = to_string(device.function.bdf);
  if (device.path.empty()) {
    const auto own = expect_unplaced_link(device, evidence, options);
    if (!own) return make_error("no link of " + bdf + " is in the evidence");
    if (!own->expected) return make_error("the link of " + bdf + " is unknown: " + own->expected.error().message);
    if (!own->conclusive) {
      return make_error("the most the link of " + bdf + " can carry is unknown: " + own->note);
    }
    return PathExpectation{own->expected.value(), own->note};
  }
  std::optional<LinkState> lowest;
  std::string note;
  for (const Link& link : device.path) {
    const LinkExpectation expectation = expect_link(link, evidence, options);
    if (!expectation.expected) {
      return make_error("link " + to_string(link.downstream) + " <-> " + to_string(link.upstream) +
                        " is unknown: " + expectation.expected.error().message);
    }
    if (!expectation.conclusive) return make_error("the budget of " + bdf + " is unknown: " + expectation.note);
    lowest = lowest ? lower_of(*lowest, expectation.expected.value()) : expectation.expected.value();
    if (expectation.basis == ExpectationBasis::kVirtualPort) {
      note = expectation.note;
      break;  // everything above the first emulated port is emulated too
    }
  }
  return PathExpectation{*lowest, note};
}

}  // namespace pcieval
