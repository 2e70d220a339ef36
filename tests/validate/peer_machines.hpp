// Hand-built evidence of GPU nodes with the settings of every port on the
// GPUs' paths, for the path-settings and peer rules (issue 28). Each builder
// names the machine it models; the register values are what `sudo lspci
// -vvv` prints on such machines (DevCap/DevCtl MaxPayload, LnkCtl ASPM,
// ACSCap/ACSCtl). Helpers live in their own namespace so that the suite's
// unity build can put these files in one batch with any other.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/evidence.hpp"
#include "model/port_settings.hpp"

namespace pcieval::peer_machines {

inline PciAddress bdf(const std::string& text) { return *parse_pci_address(text); }

// ACSCtl as Linux leaves it on a switch downstream port with the IOMMU on
// (pci_std_enable_acs): "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+
// UpstreamFwd+ EgressCtrl- DirectTrans-".
inline constexpr std::uint16_t kAcsLinuxDefault =
    kAcsSourceValidation | kAcsRequestRedirect | kAcsCompletionRedirect | kAcsUpstreamForwarding;
// ACSCap of a port that implements every bit but egress control.
inline constexpr std::uint16_t kAcsCapability = kAcsSourceValidation | kAcsTranslationBlocking | kAcsRequestRedirect |
                                                kAcsCompletionRedirect | kAcsUpstreamForwarding | kAcsDirectTranslated;

struct Port {
  int supported_bytes = 256;   // DevCap MaxPayload
  int programmed_bytes = 256;  // DevCtl MaxPayload
  int read_request_bytes = 512;
  AspmControl aspm = AspmControl::kDisabled;
  // ACSCtl; nullopt: the port has no ACS capability.
  std::optional<std::uint16_t> acs_control;
};

inline PortSettings settings_of(const Port& port) {
  PortSettings settings;
  settings.max_payload_supported_bytes = port.supported_bytes;
  settings.max_payload_bytes = port.programmed_bytes;
  settings.max_read_request_bytes = port.read_request_bytes;
  settings.relaxed_ordering = true;
  settings.aspm = port.aspm;
  if (port.acs_control) {
    settings.acs = std::optional<AcsRegisters>(AcsRegisters{kAcsCapability, *port.acs_control});
  } else {
    settings.acs = std::optional<AcsRegisters>();
  }
  return settings;
}

// A link trained at `state` at both ends, with both ends' settings.
inline Link hop(const std::string& lower, const Port& lower_port, const std::string& upper, const Port& upper_port,
                LinkState state, LinkPosition position) {
  Link link;
  link.downstream = bdf(lower);
  link.upstream = bdf(upper);
  link.position = position;
  link.downstream_end = PortLinkReading::known(state, state);
  link.upstream_end = PortLinkReading::known(state, state);
  link.downstream_end.settings = settings_of(lower_port);
  link.upstream_end.settings = settings_of(upper_port);
  return link;
}

inline DeviceRecord gpu(const std::string& address, std::uint16_t device_id, PciPath path) {
  DeviceRecord record;
  record.function.bdf = bdf(address);
  record.function.vendor_id = 0x10de;
  record.function.device_id = device_id;
  record.function.class_code = 0x030200;
  record.function.kind = DeviceKind::kGpu;
  if (!path.empty()) record.function.link = path.front().downstream_end;
  record.path = std::move(path);
  return record;
}

// Every end of every GPU's path unread, as an unprivileged live read leaves it.
inline void unread_settings(Evidence& evidence) {
  for (DeviceRecord& device : evidence.devices) {
    for (Link& link : device.path) {
      link.downstream_end.settings = make_error(std::string(kSettingsNeedRoot));
      link.upstream_end.settings = make_error(std::string(kSettingsNeedRoot));
    }
  }
}

// One switch below one root port, two GPUs on two of its downstream ports.
struct SwitchPair {
  std::string root_port;
  std::string upstream_port;
  std::string downstream_ports[2];
  std::string gpus[2];
  LinkState state{PcieGen::kGen4, 16};
  std::uint16_t gpu_device_id = 0x20b0;
  Port root;
  Port upstream;
  Port downstream[2];
  Port gpu_ports[2];
};

inline std::vector<DeviceRecord> switch_pair(const SwitchPair& s) {
  std::vector<DeviceRecord> gpus;
  for (int i = 0; i < 2; ++i) {
    gpus.push_back(
        gpu(s.gpus[i], s.gpu_device_id,
            {hop(s.gpus[i], s.gpu_ports[i], s.downstream_ports[i], s.downstream[i], s.state, LinkPosition::kDeviceLink),
             hop(s.upstream_port, s.upstream, s.root_port, s.root, s.state, LinkPosition::kUplink)}));
  }
  return gpus;
}

// HGX A100 8-GPU baseboard host (DGX A100 class: 2x EPYC 7742, four Broadcom
// PEX88096 Gen4 switches, two A100 SXM4 per switch), laid out as the fixture
// machine hgx_a100_8gpu_gen4 (tests/fixtures/machines.py): root port
// rr:01.1, switch upstream port rr+1:00.0, downstream ports rr+2:00.0 and
// rr+2:08.0, GPUs rr+3:00.0 and rr+4:00.0. DevCap MaxPayload: A100 256,
// PEX88096 2048, EPYC root port 512; programmed 256 everywhere.
// `dsp_acs`: ACSCtl of every switch downstream port (0: clear, as a BIOS
// with ACS off and a kernel without IOMMU leave it); `root_acs`: of every
// root port (Linux's setting with the IOMMU on by default).
inline Evidence hgx_a100(std::uint16_t dsp_acs = 0, std::uint16_t root_acs = kAcsLinuxDefault) {
  Evidence evidence;
  evidence.host.hostname = "hgx-a100";
  for (int root : {0x00, 0x20, 0x80, 0xa0}) {
    const auto at = [&](int bus, int device) {
      char text[16];
      std::snprintf(text, sizeof text, "0000:%02x:%02x.%d", bus, device, device == 0x01 ? 1 : 0);
      return std::string(text);
    };
    SwitchPair s;
    s.root_port = at(root, 0x01);
    s.upstream_port = at(root + 1, 0x00);
    s.downstream_ports[0] = at(root + 2, 0x00);
    s.downstream_ports[1] = at(root + 2, 0x08);
    s.gpus[0] = at(root + 3, 0x00);
    s.gpus[1] = at(root + 4, 0x00);
    s.root = Port{512, 256, 512, AspmControl::kDisabled, root_acs};
    s.upstream = Port{2048, 256, 512, AspmControl::kDisabled, std::nullopt};
    s.downstream[0] = s.downstream[1] = Port{2048, 256, 512, AspmControl::kDisabled, dsp_acs};
    s.gpu_ports[0] = s.gpu_ports[1] = Port{256, 256, 512, AspmControl::kDisabled, std::nullopt};
    for (DeviceRecord& record : switch_pair(s)) evidence.devices.push_back(std::move(record));
  }
  return evidence;
}

// Two-socket Sapphire Rapids node (Supermicro SYS-421GE-TNRT class) with an
// H100 PCIe (Gen5 x16) on a root port of each socket: 0000:18:00.0 under
// 0000:17:01.0, 0000:9a:00.0 under 0000:99:01.0. Intel root ports with ACS
// as Linux sets it with the IOMMU on; DevCap MaxPayload 512 at the root
// ports, 256 at the GPUs; programmed 256.
inline Evidence two_socket_h100() {
  Evidence evidence;
  evidence.host.hostname = "spr-2s";
  const Port root{512, 256, 512, AspmControl::kDisabled, kAcsLinuxDefault};
  const Port card{256, 256, 512, AspmControl::kDisabled, std::nullopt};
  const LinkState gen5x16{PcieGen::kGen5, 16};
  evidence.devices.push_back(gpu(
      "0000:18:00.0", 0x2331, {hop("0000:18:00.0", card, "0000:17:01.0", root, gen5x16, LinkPosition::kDeviceLink)}));
  evidence.devices.push_back(gpu(
      "0000:9a:00.0", 0x2331, {hop("0000:9a:00.0", card, "0000:99:01.0", root, gen5x16, LinkPosition::kDeviceLink)}));
  return evidence;
}

// A Gen3 GPU server with a PLX PEX8747 switch (10b5:8747) carrying two Tesla
// P100 PCIe on root port 0000:00:03.0: upstream port 0000:02:00.0,
// downstream ports 0000:03:08.0 and 0000:03:10.0, GPUs 0000:04:00.0 and
// 0000:05:00.0. `dsp_acs` on both downstream ports (the reported fault:
// ReqRedir+ CmpltRedir+). DevCap MaxPayload: P100 256, PEX8747 256, Xeon
// root port 256.
inline Evidence plx_p100(std::uint16_t dsp_acs) {
  Evidence evidence;
  evidence.host.hostname = "plx-p100";
  SwitchPair s;
  s.root_port = "0000:00:03.0";
  s.upstream_port = "0000:02:00.0";
  s.downstream_ports[0] = "0000:03:08.0";
  s.downstream_ports[1] = "0000:03:10.0";
  s.gpus[0] = "0000:04:00.0";
  s.gpus[1] = "0000:05:00.0";
  s.state = LinkState{PcieGen::kGen3, 16};
  s.gpu_device_id = 0x15f8;
  s.root = Port{256, 256, 512, AspmControl::kDisabled, kAcsLinuxDefault};
  s.upstream = Port{256, 256, 512, AspmControl::kDisabled, std::nullopt};
  s.downstream[0] = s.downstream[1] = Port{256, 256, 512, AspmControl::kDisabled, dsp_acs};
  s.gpu_ports[0] = s.gpu_ports[1] = Port{256, 256, 512, AspmControl::kDisabled, std::nullopt};
  evidence.devices = switch_pair(s);
  return evidence;
}

// A Microchip Switchtec PFX Gen4 switch (11f8:4052) with two A100 PCIe on
// an AMD EPYC root port 0000:40:03.1: upstream port 0000:41:00.0,
// downstream ports 0000:42:00.0 and 0000:42:01.0, GPUs 0000:43:00.0 and
// 0000:44:00.0. The Switchtec downstream ports keep only Source Validation
// on (ACSCtl: SrcValid+ ...), which reroutes nothing.
inline Evidence switchtec_a100() {
  Evidence evidence;
  evidence.host.hostname = "switchtec-a100";
  SwitchPair s;
  s.root_port = "0000:40:03.1";
  s.upstream_port = "0000:41:00.0";
  s.downstream_ports[0] = "0000:42:00.0";
  s.downstream_ports[1] = "0000:42:01.0";
  s.gpus[0] = "0000:43:00.0";
  s.gpus[1] = "0000:44:00.0";
  s.gpu_device_id = 0x20f1;
  s.root = Port{512, 512, 512, AspmControl::kDisabled, kAcsLinuxDefault};
  s.upstream = Port{2048, 512, 512, AspmControl::kDisabled, std::nullopt};
  s.downstream[0] = s.downstream[1] = Port{2048, 512, 512, AspmControl::kDisabled, kAcsSourceValidation};
  s.gpu_ports[0] = s.gpu_ports[1] = Port{256, 256, 512, AspmControl::kDisabled, std::nullopt};
  evidence.devices = switch_pair(s);
  // The ports above are programmed 512, the GPUs 256: every TLP of the GPUs'
  // traffic is 256 bytes, the most the A100 supports: as expected.
  return evidence;
}

// A peer copy between two GPUs, as bench/ records it: gpus[0] moved the
// bytes, subject "SRC->DST".
inline Measurement peer_copy(const std::string& probe, const std::string& source, const std::string& destination,
                             std::vector<double> trials, Aggregation aggregation = Aggregation::kAlone) {
  Measurement m;
  m.probe = probe;
  m.subject = source + "->" + destination;
  m.gpus = {bdf(source), bdf(destination)};
  m.direction = Direction::kDeviceToDevice;
  m.method = probe.ends_with("_sm") ? CopyMethod::kSmKernel : CopyMethod::kCopyEngine;
  m.aggregation = aggregation;
  m.size_bytes = 256u << 20;
  m.bytes_per_trial = m.size_bytes;
  m.trials_gbps = std::move(trials);
  m.stats = summarize_trials(m.trials_gbps);
  m.verified = true;
  return m;
}

// The probe settings of a live `check --p2p`, which also says peer routing
// was asked to be judged.
inline void live_p2p_run(Evidence& evidence) {
  evidence.probe_settings = ProbeSettings{"full", 256u << 20, 1, 5};
  evidence.probes.push_back(ProbeRun{"p2p_write_ce", ProbeStatus::kRan, "", {}, 1.0, {}, false});
}

}  // namespace pcieval::peer_machines
