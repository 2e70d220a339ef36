// Captures turned into the evidence a live run reads: PCI functions placed in
// the tree (roles where the capture names none, each device's path of links,
// model/pci_tree.hpp), nvidia-smi's GPUs merged in by address, kernel events
// in the validator's terms, the bandwidth tools' numbers as measurements.
// Captures are merged by PCI address; the evidence keeps the file and line
// each device and number was read on (evidence.capture_lines), so a verdict
// names the lines it rests on. Pure: no I/O, no judgement.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ingest/captures.hpp"
#include "model/evidence.hpp"

namespace pcieval {

struct CaptureEvidenceOptions {
  // The generation a GPU's link is judged against from its nvidia-smi
  // readings (validate/expectation.hpp, expected_nvml_generation, passed in by
  // app/: ingest/ does not depend on validate/). Where it is the Host Max
  // below the GPU's Device Max, the GPU gets a note that the host caps the
  // link. Unset: no such note.
  std::function<std::optional<int>(const NvmlGpuLink&)> judged_nvml_generation;
};

// All of it, in this order: the lspci captures merged (merge_lspci_captures)
// and placed, a first note naming the inputs and how mixed ones were split,
// nvidia-smi's GPUs, kernel events, the tools' readings
// (tool_evidence.hpp). The evidence carries no host, topology or load of its
// own: captured text says nothing reliable about them.
[[nodiscard]] Evidence evidence_from_captures(Captures captures, const CaptureEvidenceOptions& options = {});

// One (merged) lspci capture as evidence: a device record for every function
// that is not a bridge, its path and its notes (the bridges' notes go to
// evidence.notes), and where each block was read.
[[nodiscard]] Evidence evidence_from_lspci(const LspciCapture& capture);

// Merges nvidia-smi's GPUs into the evidence by address: a GPU lspci did not
// describe becomes a device without a path; one captured busy gives a link
// sample under load for its own port, the evidence the link rules use to
// tell an idle downshift from a downgrade. The first capture of a GPU wins.
void add_nvidia_smi(Evidence& evidence, const std::vector<NvidiaSmiCapture>& captures,
                    const CaptureEvidenceOptions& options = {});

// Kernel events as evidence.captured_events, with notes on what is not judged
// (link bandwidth notifications).
void add_kernel_logs(Evidence& evidence, const std::vector<KernelLogCapture>& captures);

}  // namespace pcieval
