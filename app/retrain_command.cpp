// `pcieval retrain BDF`: the remedy for a link that trained low, and its
// verification in the same command. By default it only says what it would
// do; --apply sets Retrain Link on the port above the device (PCIE-FACTS
// 4.3), waits for the link to come back and judges the device again, before
// and after side by side as `pcieval compare` shows them.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <utility>

#include "app/commands.hpp"
#include "app/simulate.hpp"
#include "model/pci_tree.hpp"
#include "topology/discover.hpp"
#include "topology/pci_config.hpp"
#include "topology/sysfs_reader.hpp"
#include "validate/compare.hpp"

namespace pcieval::app {
namespace {

std::string hex16(std::uint16_t value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "0x%04x", value);
  return buffer;
}

template <class T>
std::string text_of(const Reading<T>& reading) {
  return reading ? to_string(reading.value()) : "unknown (" + reading.error().message + ")";
}

std::string sysfs_link_text(const PciFunction& function) {
  if (!function.link) return "no link attributes";
  return "capable " + text_of(function.link->capable()) + ", negotiated " + text_of(function.link->negotiated());
}

std::string config_link_text(const PcieLinkRegisters& registers) {
  return "capable " + text_of(registers.capable()) + ", negotiated " + text_of(registers.negotiated()) +
         ", Link Training " + (registers.training() ? "1" : "0") + ", DL Active " +
         (registers.data_link_active() ? "1" : "0") + " (LnkSta " + hex16(registers.link_status) + ")";
}

const PciFunction* find_function(const std::vector<PciFunction>& functions, const PciAddress& address) {
  const auto found =
      std::find_if(functions.begin(), functions.end(), [&](const PciFunction& f) { return f.bdf == address; });
  return found == functions.end() ? nullptr : &*found;
}

// What retrain acts on, resolved and checked before anything is written.
struct Target {
  PciFunction device;
  PciFunction port;
  PcieLinkRegisters port_registers;
  std::vector<PciFunction> functions;
};

// The device, the port above it, and the port's PCI Express registers; an
// error (exit 2) for anything retrain must not touch.
Result<Target> resolve_target(const RetrainCommandOptions& options) {
  auto address = parse_pci_address(options.address);
  if (!address) return address.error();
  auto functions = read_pci_functions(options.sysfs_root);
  if (!functions) return functions.error();
  Target target;
  target.functions = assign_port_roles(std::move(functions).value());
  const std::string name = to_string(address.value());
  const PciFunction* device = find_function(target.functions, address.value());
  if (device == nullptr) {
    return make_error("no PCI function " + name + " in " + options.sysfs_root + "/bus/pci/devices");
  }
  if (device->vendor_id == 0xFFFF) return make_error(name + " reads vendor 0xffff: the device does not answer");
  if (!device->parent)
    return make_error(name + " sits directly under a host bridge: there is no port above it to retrain");
  const PciFunction* port = find_function(target.functions, *device->parent);
  if (port == nullptr) return make_error("the port above " + name + " is not in " + options.sysfs_root);
  auto registers = read_pcie_link_registers(options.sysfs_root, port->bdf);
  if (!registers) return make_error("cannot read the port above " + name + ": " + registers.error().message);
  if (!can_retrain_link(registers->type)) {
    return make_error("the port above " + name + ", " + to_string(port->bdf) + " (" + to_string(registers->type) +
                      "), is not a Root Port or Downstream Port: Retrain Link is reserved there");
  }
  target.device = *device;
  target.port = *port;
  target.port_registers = registers.value();
  return target;
}

void print_plan(const Target& target) {
  const std::uint16_t control = target.port_registers.link_control;
  std::cout << "device " << to_string(target.device.bdf) << " (" << to_string(target.device.kind) << ")\n"
            << "  link (sysfs):         " << sysfs_link_text(target.device) << "\n"
            << "port above: " << to_string(target.port.bdf) << " (" << to_string(target.port_registers.type) << ")\n"
            << "  link (sysfs):         " << sysfs_link_text(target.port) << "\n"
            << "  link (config space):  " << config_link_text(target.port_registers) << "\n"
            << "retrain: set Retrain Link (bit 5) of Link Control at config offset "
            << hex16(static_cast<std::uint16_t>(target.port_registers.capability_offset + kLinkControlOffset)) << " of "
            << to_string(target.port.bdf) << ": " << hex16(control) << " -> "
            << hex16(static_cast<std::uint16_t>(control | kRetrainLinkBit)) << "\n";
}

// Every device below `port`: the link a retrain touches, and nothing else.
void keep_devices_below(Evidence& evidence, const std::vector<PciFunction>& functions, const PciAddress& port) {
  std::erase_if(evidence.devices, [&](const DeviceRecord& device) {
    const std::vector<PciAddress> chain = bridge_chain(functions, device.function.bdf);
    return std::find(chain.begin(), chain.end(), port) == chain.end();
  });
}

// The devices below the port, read (and on the live machine measured) now.
Result<Results> observe(const RetrainCommandOptions& options, const Target& target, bool live,
                        const SimulatedNode* simulated) {
  DiscoveryOptions discovery;
  discovery.sysfs_root = options.sysfs_root;
  if (simulated != nullptr && simulated->sources().topology_xml) {
    discovery.topology_xml = *simulated->sources().topology_xml;
  }
  auto evidence = discover(discovery);
  if (!evidence) return evidence.error();
  Results results;
  results.evidence = std::move(evidence).value();
  if (simulated != nullptr) simulated->label(results.evidence);
  keep_devices_below(results.evidence, target.functions, target.port.bdf);
  if (live) {
    measure(results.evidence, options.probes);
  } else {
    results.evidence.notes.push_back("probes not run: the PCI tree was read from --sysfs-root, not this machine");
  }
  judge(results, std::nullopt);
  return results;
}

int apply(const RetrainCommandOptions& options, const Target& target, const SimulatedNode* simulated) {
  const bool live = options.sysfs_root == "/sys" || simulated != nullptr;
  auto before = observe(options, target, live, simulated);
  if (!before) {
    print_error("before the retrain: " + before.error().message);
    return kExitUsage;
  }
  RetrainOptions retrain;
  retrain.timeout = std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000.0));
  auto outcome = retrain_link(options.sysfs_root, target.port.bdf, retrain);
  if (!outcome) {
    // The target was checked; what fails now is the port itself.
    print_error("retrain of " + to_string(target.port.bdf) + " not done: " + outcome.error().message);
    return kExitInconclusive;
  }
  std::cout << "retrain: wrote Link Control " << hex16(outcome->control_written) << " to " << to_string(target.port.bdf)
            << "; waited " << outcome->waited.count() << " ms\n"
            << "  link before (config space): " << config_link_text(outcome->before) << "\n"
            << "  link after  (config space): " << config_link_text(outcome->after) << "\n";
  if (!outcome->link_came_back) {
    print_error("the link below " + to_string(target.port.bdf) + " was still training after " +
                std::to_string(options.timeout_s) + " s: run pcieval check once it settles");
    return kExitInconclusive;
  }
  auto after = observe(options, target, live, simulated);
  if (!after) {
    print_error("after the retrain: " + after.error().message);
    return kExitInconclusive;
  }
  for (const auto& note : after->evidence.notes) std::cout << "note: " << terminal_text(note) << "\n";
  const Comparison comparison = compare_results(before.value(), after.value(), pcieval::CompareOptions{});
  std::cout << "before -> after:\n";
  for (const SubjectChange& change : comparison.subjects) std::cout << "  " << terminal_text(change.line) << "\n";
  const std::string after_text(to_string(comparison.after_overall));
  if (comparison.any_worse) {
    std::cout << "retrain: something got worse (after: " << after_text << ")\n";
    return kExitFail;
  }
  std::cout << "retrain: nothing got worse; after: " << after_text << " (" << terminal_text(after->summary) << ")\n";
  return exit_code_of(comparison.after_overall);
}

}  // namespace

int run_retrain(const RetrainCommandOptions& given) {
  RetrainCommandOptions options = given;
  // First, before any thread starts: the simulator is chosen by setenv. Its
  // scratch tree is this process's to write, so no root is needed.
  std::unique_ptr<SimulatedNode> simulated;
  if (options.simulate) {
    auto prepared = SimulatedNode::prepare_instead_of(*options.simulate, options.sysfs_root != "/sys", "--sysfs-root");
    if (!prepared) {
      print_error(prepared.error().message);
      return kExitUsage;
    }
    simulated = std::move(prepared).value();
    options.sysfs_root = simulated->sources().sysfs_root;
  }
  // Checked first: an unprivileged --apply learns nothing else about the port.
  if (options.apply && !simulated && !running_as_root()) {
    print_error("retrain --apply writes PCI config space: run it as root (without --apply it only shows the plan)");
    return kExitUsage;
  }
  // The command line checks this too (main.cpp); options built any other way
  // meet the same bounds.
  if (!(options.timeout_s >= 0.01) || options.timeout_s > 60.0) {
    print_error("--timeout-s must be between 0.01 s and 60 s");
    return kExitUsage;
  }
  auto target = resolve_target(options);
  if (!target) {
    print_error("retrain: " + target.error().message);
    return kExitUsage;
  }
  print_plan(target.value());
  if (!options.apply) {
    std::cout << "dry run: nothing written; run again with --apply (as root) to retrain and verify\n";
    return kExitPass;
  }
  return apply(options, target.value(), simulated.get());
}

}  // namespace pcieval::app
