// Captured `nvidia-smi -q` text (and, through nvidia_smi_xml.hpp, `-q -x`
// XML) turned into per-GPU NVML link readings: what an engineer pastes into a
// ticket next to lspci.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci_address.hpp"
#include "model/result.hpp"
#include "model/samples.hpp"

namespace pcieval {

// One GPU of the capture. nvml holds what NvmlGpuLink has a field for; the
// rest of the PCI block (rollovers, ids) sits beside it.
struct NvidiaSmiGpu {
  PciAddress bdf;        // normalised to sysfs form: 00000000:17:00.0 -> 0000:17:00.0
  std::string source;    // name of the capture
  std::size_t line = 0;  // 1-based line of the GPU's header ("GPU 00000000:17:00.0" / <gpu id=...>)
  // Line of the current link generation, where a verdict on the GPU's link
  // rests; the header line when the capture has none.
  std::size_t link_line = 0;
  // Host Max / <max_host_link_gen> goes to nvml.host_max_gen. under_load is
  // left false: the caller decides from captured_busy().
  NvmlGpuLink nvml;
  std::optional<std::uint64_t> replay_rollovers;
  // From "Device Id : 0x233010DE" (device high, vendor low). Some drivers
  // print ids that name no vendor (an A10G's "000000DE"): settle_gpu_ids
  // then takes the GPU for NVIDIA's by its class or product name.
  std::optional<std::uint16_t> vendor_id;
  std::optional<std::uint16_t> device_id;
  // "Base Classcode : 0x3" and "Sub Classcode : 0x2" -> 0x0302 (text only;
  // drivers since about 2022 print them, the XML does not).
  std::optional<std::uint16_t> class_code;
  std::vector<std::string> notes;
};

struct NvidiaSmiCapture {
  std::string source;
  std::vector<NvidiaSmiGpu> gpus;  // in capture order
  std::vector<std::string> notes;
  // Non-blank lines that are neither part of a GPU block nor the log's
  // header: prompts, markdown, other commands' output pasted around it.
  std::size_t skipped_lines = 0;
};

// Whether the GPU is NVIDIA's when its Device Id says another vendor: a
// display or 3D controller class (0x03xx), or a product name of NVIDIA's
// ("NVIDIA A10G", "Tesla T4", "Quadro", "GeForce", "TITAN") makes it one.
// Then vendor_id becomes 0x10de, the implausible device id is dropped and a
// note quotes what was printed; otherwise the ids stay as printed. Called by
// both parsers on every GPU once its block is read.
void settle_gpu_ids(NvidiaSmiGpu& gpu);

// "0x3" / "3" / "02" (Base/Sub Classcode, <pci_base_class>): one hex byte.
[[nodiscard]] std::optional<std::uint8_t> parse_smi_class_byte(std::string_view text);
// Sets the base (high) or sub (low) byte of gpu.class_code.
void set_class_byte(NvidiaSmiGpu& gpu, bool base, std::uint8_t byte);

// True when the text holds nvidia-smi -q's banner ("==NVSMI LOG==") or a
// "GPU 00000000:17:00.0" header followed by an indented "Product Name" or
// "PCI" line.
[[nodiscard]] bool looks_like_nvidia_smi(std::string_view text);

// Parses `nvidia-smi -q` text of any driver since 2016: fields are split on
// the first " : " (the name column's width changes between drivers), names
// compared case-insensitively ("Replays since reset" in old drivers), "N/A"
// and unparseable values left unknown with a note. Indentation decides which
// block a field belongs to, so "Max"/"Current" under "PCIe Generation" and
// under "Link Width" are told apart. Errors only when no GPU block is found.
[[nodiscard]] Result<NvidiaSmiCapture> parse_nvidia_smi(std::string_view text, std::string_view source = "input");

// nvidia-smi's bus id ("00000000:17:00.0", "0000:06:00.0", any case) as the
// sysfs address.
[[nodiscard]] Result<PciAddress> parse_nvidia_smi_bus_id(std::string_view text);

// Value parsers shared by the text and XML readers; nullopt for "N/A",
// "[N/A]", "Unknown Error" and anything malformed.
[[nodiscard]] std::optional<int> parse_smi_generation(std::string_view text);       // "4"
[[nodiscard]] std::optional<int> parse_smi_width(std::string_view text);            // "16x"
[[nodiscard]] std::optional<int> parse_smi_pstate(std::string_view text);           // "P8" -> 8
[[nodiscard]] std::optional<int> parse_smi_percent(std::string_view text);          // "37 %" -> 37
[[nodiscard]] std::optional<std::uint64_t> parse_smi_kbps(std::string_view text);   // "567 KB/s"
[[nodiscard]] std::optional<std::uint64_t> parse_smi_count(std::string_view text);  // "7"

// How busy the GPU was when it was captured, from its performance state,
// utilisation and PCIe traffic. Idle NVIDIA GPUs lower their link speed on
// purpose (PCIE-FACTS 6.1: P8 reads Gen1 of Gen4), so only a capture taken
// while the GPU worked says what its link trains to.
enum class CapturedLoad {
  kIdle,     // P8 or a higher-numbered state, 0 % utilisation, no traffic
  kBusy,     // P0..P2 and utilisation above 0 % or PCIe traffic
  kUnclear,  // anything else (P0 at 0 % without traffic, fields missing)
};
[[nodiscard]] CapturedLoad captured_load(const NvmlGpuLink& nvml);
[[nodiscard]] std::string_view to_string(CapturedLoad load);

// PCIe traffic that counts as load: more than an idle GPU's driver chatter
// (an idle H100 at P0 shows 567 KB/s Tx, 559 KB/s Rx) and far below any copy
// (a Gen3 x1 link carries about 985 000 KB/s).
inline constexpr std::uint64_t kBusyTrafficKbps = 10'000;

}  // namespace pcieval
