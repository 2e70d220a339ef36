// Helpers shared by the lspci tests: the capture fixtures, and device blocks
// written in lspci's own layout with the indentation and flags chosen per test.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingest/lspci.hpp"
#include "model/pci_address.hpp"

namespace pcieval::testing {

inline std::filesystem::path capture_path(const std::string& name) {
  return std::filesystem::path(PCIEVAL_SOURCE_DIR) / "tests" / "fixtures" / "captures" / name;
}

// The shared corpus of real captures, beside the checkout (as
// tests/cli/corpus_test.cpp finds it); tests skip where it is not there.
inline std::filesystem::path corpus_path(const std::string& name) {
  return std::filesystem::path(PCIEVAL_SOURCE_DIR).parent_path() / "shared" / "corpus" / name;
}

inline std::string read_capture(const std::string& name) {
  std::ifstream in(capture_path(name), std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline constexpr const char* kEscFull = "lspci_esc8000a_e12_idle_gpus_highpoint_x1.txt";
inline constexpr const char* kIcelakePlx = "lspci_icelake_plx_a100_uplink_gen3_pciutils36.txt";
inline constexpr const char* kEscGpu41 = "lspci_esc8000a_e12_gpu_41_only.txt";
inline constexpr const char* kEscRootPort40 = "lspci_esc8000a_e12_root_port_40_01_1.txt";

inline PciAddress bdf(const std::string& text) {
  auto address = parse_pci_address(text);
  if (!address) throw std::invalid_argument(address.error().message);
  return address.value();
}

inline const LspciDevice* find(const LspciCapture& capture, const std::string& address) {
  const PciAddress wanted = bdf(address);
  const auto it = std::find_if(capture.devices.begin(), capture.devices.end(),
                               [&](const LspciDevice& d) { return d.function.bdf == wanted; });
  return it == capture.devices.end() ? nullptr : &*it;
}

// One device block as lspci prints it. `indent` is one level ("\t" for raw
// output, eight spaces for a markdown paste); nested lines get two or three.
struct BlockSpec {
  std::string header;                // "41:00.0 VGA compatible controller: NVIDIA Corporation ..."
  std::string express;               // "Legacy Endpoint"; empty for none
  std::string lnkcap;                // text after "LnkCap:\t"; empty for none
  std::string lnksta;                // text after "LnkSta:\t"; empty for none
  std::string bus;                   // "primary=40, secondary=41, subordinate=41"; empty for none
  std::vector<std::string> details;  // more level-one lines, verbatim
  std::string indent = "\t";
};

inline std::string render(const BlockSpec& spec) {
  const std::string i1 = spec.indent;
  const std::string i2 = i1 + i1;
  const std::string i3 = i2 + i1;
  const std::string sep = spec.indent == "\t" ? "\t" : " ";
  std::string text = spec.header + "\n";
  text += i1 + "Control: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B-\n";
  text += i1 + "Status: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR-\n";
  for (const auto& line : spec.details) text += i1 + line + "\n";
  if (!spec.bus.empty()) text += i1 + "Bus: " + spec.bus + ", sec-latency=0\n";
  text += i1 + "Capabilities: [40] Power Management version 3\n";
  text += i2 + "Status: D0 NoSoftRst+ PME-Enable- DSel=0 DScale=0 PME-\n";
  if (!spec.express.empty()) {
    text += i1 + "Capabilities: [60] Express (v2) " + spec.express + ", MSI 00\n";
    text += i2 + "DevCap:" + sep + "MaxPayload 256 bytes, PhantFunc 0\n";
    if (!spec.lnkcap.empty()) {
      text += i2 + "LnkCap:" + sep + spec.lnkcap + "\n";
      text += i3 + "ClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+\n";
    }
    if (!spec.lnksta.empty()) {
      text += i2 + "LnkSta:" + sep + spec.lnksta + "\n";
      text += i3 + "TrErr- Train- SlotClk+ DLActive+ BWMgmt- ABWMgmt-\n";
    }
    text += i2 + "LnkCap2: Supported Link Speeds: 2.5-16GT/s, Crosslink- Retimer+ 2Retimers+ DRS-\n";
  }
  text += i1 + "Capabilities: [900 v1] Secondary PCI Express\n";
  text += i1 + "Kernel driver in use: pcieport\n";
  return text + "\n";
}

inline std::string gpu_block(const std::string& slot, const std::string& lnksta, const std::string& indent = "\t") {
  BlockSpec spec;
  spec.header = slot +
                " VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] (rev a1) (prog-if 00 "
                "[VGA controller])";
  spec.express = "Legacy Endpoint";
  spec.lnkcap = "Port #0, Speed 16GT/s, Width x16, ASPM L1, Exit Latency L1 <4us";
  spec.lnksta = lnksta;
  spec.details = {"NUMA node: 0"};
  spec.indent = indent;
  return render(spec);
}

inline std::string bridge_block(const std::string& slot, const std::string& express, const std::string& bus,
                                const std::string& lnkcap = "Port #0, Speed 32GT/s, Width x16, ASPM L1",
                                const std::string& lnksta = "Speed 16GT/s, Width x16") {
  BlockSpec spec;
  spec.header = slot + " PCI bridge: Advanced Micro Devices, Inc. [AMD] Device 14ab (prog-if 00 [Normal decode])";
  spec.express = express;
  spec.lnkcap = lnkcap;
  spec.lnksta = lnksta;
  spec.bus = bus;
  return render(spec);
}

// Parses `text` and fails the test on an error.
inline LspciCapture parse_ok(const std::string& text, const std::string& source = "test") {
  auto parsed = parse_lspci(text, source);
  if (!parsed) throw std::runtime_error("parse failed: " + parsed.error().message);
  return std::move(parsed).value();
}

// Every byte of every note and error reading is printable ASCII (valid
// UTF-8, one line), whatever the capture held.
inline bool printable(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 && byte < 0x7f;
  });
}

}  // namespace pcieval::testing
