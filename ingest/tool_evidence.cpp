#include "ingest/tool_evidence.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "ingest/nccl_tests.hpp"

namespace pcieval {
namespace {

// The CUDA indices a capture's measurements use.
std::set<int> indices_of(const ToolCapture& capture) {
  std::set<int> indices;
  for (const ToolMeasurement& printed : capture.measurements) {
    if (printed.gpu_index) indices.insert(*printed.gpu_index);
    if (printed.peer_index) indices.insert(*printed.peer_index);
  }
  for (const ToolPeerStatus& status : capture.peer_status) {
    indices.insert(status.gpu_index);
    indices.insert(status.peer_index);
  }
  for (const auto& [index, name] : capture.gpu_names) indices.insert(index);
  return indices;
}

// Index -> address from the other captures' GPUs, when the counts agree.
std::map<int, PciAddress> bus_order_addresses(const Evidence& evidence, const std::set<int>& indices) {
  std::vector<PciAddress> gpus;
  for (const DeviceRecord& device : evidence.devices) {
    if (device.function.kind == DeviceKind::kGpu && device.function.bdf.function == 0) {
      gpus.push_back(device.function.bdf);
    }
  }
  std::sort(gpus.begin(), gpus.end());
  std::map<int, PciAddress> addresses;
  if (indices.empty() || gpus.size() != indices.size() || *indices.rbegin() != static_cast<int>(gpus.size()) - 1) {
    return addresses;
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) addresses[static_cast<int>(i)] = gpus[i];
  return addresses;
}

// The capture's peer statuses as evidence, where both GPUs have an
// address; a note counts the others. Never a guessed address.
void add_peer_status(Evidence& evidence, const ToolCapture& capture, const std::map<int, PciAddress>& addresses) {
  std::size_t unnamed = 0;
  for (const ToolPeerStatus& printed : capture.peer_status) {
    const auto gpu = addresses.find(printed.gpu_index);
    const auto peer = addresses.find(printed.peer_index);
    if (gpu == addresses.end() || peer == addresses.end()) {
      ++unnamed;
      continue;
    }
    evidence.peer_status.push_back(
        PeerStatus{gpu->second, peer->second, printed.capability, printed.status, printed.status_from});
  }
  if (unnamed > 0) {
    evidence.notes.push_back(capture.source + ": " + std::to_string(unnamed) + " " + capture.tool +
                             " peer statuses not recorded: they name a GPU by index only, and neither the "
                             "capture's device lines nor the other captures' GPUs (exactly as many, in bus order) "
                             "give it an address");
  }
}

// A note for the device-to-device numbers left without addresses.
void note_unnamed_peer_copies(Evidence& evidence, const ToolCapture& capture) {
  std::size_t unnamed = 0;
  for (const ToolMeasurement& printed : capture.measurements) {
    if (printed.peer_index && printed.measurement.gpus.size() != 2) ++unnamed;
  }
  if (unnamed == 0) return;
  evidence.notes.push_back(capture.source + ": " + std::to_string(unnamed) + " " + capture.tool +
                           " device-to-device numbers name a GPU by CUDA index only (\"GPU 0->GPU 1\"), and "
                           "neither the capture's device lines nor the other captures' GPUs give it an address: kept "
                           "as read, with no GPU path to judge them against");
}

}  // namespace

void add_tool_captures(Evidence& evidence, const std::vector<ToolCapture>& captures) {
  for (ToolCapture capture : captures) {
    evidence.notes.insert(evidence.notes.end(), capture.notes.begin(), capture.notes.end());
    if (capture.skipped_lines > 0) {
      evidence.notes.push_back(capture.source + ": skipped " + std::to_string(capture.skipped_lines) +
                               " lines that are not part of the " + capture.tool + " output");
    }
    if (!capture.nccl_rows.empty()) {
      // The all-reduce's measurements name their GPUs by address or not at all
      // (a collective has no one CUDA index): no bus-order matching.
      evidence.notes.push_back(summarize_nccl(capture));
    } else if (capture.gpu_addresses.empty()) {
      const auto addresses = bus_order_addresses(evidence, indices_of(capture));
      if (!addresses.empty() && (assign_gpu_addresses(capture, addresses) > 0 || !capture.peer_status.empty())) {
        evidence.notes.push_back(capture.source + ": " + capture.tool +
                                 " names GPUs by CUDA index only; matched to the " + std::to_string(addresses.size()) +
                                 " GPUs of the other captures in PCI bus order (CUDA's order on a node of one GPU "
                                 "model, or with CUDA_DEVICE_ORDER=PCI_BUS_ID)");
      }
      add_peer_status(evidence, capture, addresses);
    } else {
      add_peer_status(evidence, capture, capture.gpu_addresses);
    }
    note_unnamed_peer_copies(evidence, capture);
    for (ToolMeasurement& printed : capture.measurements) {
      evidence.capture_lines.push_back(
          CaptureLine{std::nullopt, evidence.measurements.size(), printed.source, printed.line});
      evidence.measurements.push_back(std::move(printed.measurement));
    }
  }
}

}  // namespace pcieval
