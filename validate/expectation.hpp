// What a device's link can be expected to run at, from the evidence at hand:
// the one place that decides what a link reading can prove (DESIGN.md, "A
// verdict says exactly what its evidence proves"). Link, bandwidth, tool and
// collective rules all take their expectation from here. Pure.
#pragma once

#include <optional>
#include <string>

#include "model/evidence.hpp"
#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"
#include "model/thresholds.hpp"

namespace pcieval {

struct ExpectationOptions {
  // ThresholdSet::assume_full_link_behind_virtual_port.
  bool assume_full_link_behind_virtual_port = true;
};

[[nodiscard]] ExpectationOptions expectation_options(const ThresholdProfile& profile);

// The emulated port an ID names ("QEMU pcie-root-port [1b36:000c]"), or
// nullopt for a physical (or unknown) one. Emulated ports report whatever the
// hypervisor chose (QEMU's pcie-root-port: 16 GT/s x32 since machine type
// 4.0, 2.5 GT/s x1 before; ioh3420: 2.5 GT/s x1), never the slot. IDs that
// real hardware shares (ioh3420 is Intel's 5520/X58 root port 0, xio3130
// TI's XIO3130 switch) name an emulated port only when `hypervisor` is true.
[[nodiscard]] std::optional<std::string> virtual_port_name(const PciId& id, std::optional<bool> hypervisor);

// What a link's expectation rests on.
enum class ExpectationBasis {
  kBothEnds,       // the lower of both ends' capabilities: the whole link is known
  kVirtualPort,    // the port above is emulated: the device end's own capability
  kNvmlMax,        // NVML / nvidia-smi Max, which already folds in the port above
  kGuestNoPort,    // a virtual machine's device with no port above it: its own capability
  kOwnCapability,  // no port above in the evidence: the device's own capability bounds the link, nothing more
};

struct LinkExpectation {
  Reading<LinkState> expected = make_error("not judged");
  // The state the link runs at, as far as the evidence tells: an emulated
  // port's own LnkSta is not the link's.
  Reading<LinkState> negotiated = make_error("not read");
  ExpectationBasis basis = ExpectationBasis::kBothEnds;
  // A negotiated state below `expected` is a downgrade. False for
  // kOwnCapability (the port above may allow no more) and for an emulated
  // port the profile does not assume a full link behind.
  bool conclusive = true;
  // The assumption or the gap, for the verdict's reason; empty for kBothEnds
  // unless the two ends disagree (then it names both readings).
  std::string note;
};

// The state to judge a link by whose two ends both read but disagree
// (Link::disagreement): the higher of both readings (speed and width each)
// where that alone settles the verdict whichever end is right: below
// `expected` (a downgrade either way) or above it (one end claims more than
// both can do: the readings are unreliable). nullopt where the higher reading
// is `expected` itself: one end says healthy, the other does not, and the
// link's state is unknown (never a pass, never a downgrade). So it is where
// each end is below `expected` in a different way (Gen3 x16 against Gen4 x8
// of Gen4 x16): a downgrade either way, but of which kind is unknown.
[[nodiscard]] std::optional<LinkState> state_despite_disagreement(const LinkState& downstream,
                                                                  const LinkState& upstream, const LinkState& expected);
// The note of a link judged by state_despite_disagreement; `readings` names
// both ends and what each read.
[[nodiscard]] std::string disagreement_note(const std::string& readings);

// One link of a path, on its own: the expectation and the state, where the
// evidence settles them. A reading missing or broken at an end with link
// registers leaves the state unknown (Link::negotiated); so do ends that
// disagree, unless state_despite_disagreement settles the verdict. Under an
// emulated port the device end's reading alone counts, but a port with link
// registers that do not read leaves it unknown too. Callers stop at the first
// link that ends at an emulated port: the links above it join emulated ports
// only (a hypervisor builds the whole topology above its first emulated port).
[[nodiscard]] LinkExpectation expect_link(const Link& link, const Evidence& evidence,
                                          const ExpectationOptions& options);

// Whether `link`'s upstream end is an emulated port: by its ID, or, in a
// guest, because it claims less than the link already runs at (no physical
// link runs faster or wider than one of its ends can).
[[nodiscard]] bool ends_at_virtual_port(const Link& link, const Evidence& evidence);

// A device with no port above it in the evidence (a single-device capture, an
// nvidia-smi capture, a guest without ports) but a link of its own: its state
// (loaded where sampled) and the most it can reach. nullopt when the device
// has a path, or no reading of its own link at all.
[[nodiscard]] std::optional<LinkExpectation> expect_unplaced_link(const DeviceRecord& device, const Evidence& evidence,
                                                                  const ExpectationOptions& options);

// The state a device's whole path should carry (the lower of every judged
// link's expectation) and what it rests on, for bandwidth budgets. An error,
// saying why, when the evidence cannot give it: no link of the device, a link
// state unknown, the port above not in the evidence, an emulated port the
// profile does not assume a full link behind.
struct PathExpectation {
  LinkState state;
  std::string note;  // the assumption it rests on; empty when every link is known at both ends
};
[[nodiscard]] Result<PathExpectation> expect_path(const DeviceRecord& device, const Evidence& evidence,
                                                  const ExpectationOptions& options);

// The generation nvidia-smi says the GPU's link should train to: its Max
// (NVML folds the host in); Host Max where it is lower and the link does not
// already run above it (above it, Host Max describes a hop behind a switch);
// the lower of Device Max and Host Max where Max is missing.
[[nodiscard]] std::optional<int> expected_nvml_generation(const NvmlGpuLink& nvml);

}  // namespace pcieval
