// What pcieval reads through NVML (nvml_library.hpp loads it): each GPU's
// link as the GPU itself reports it, its replay counter, utilisation and the
// system's confidential-computing mode, every call bounded by a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci_address.hpp"
#include "model/port_settings.hpp"
#include "model/result.hpp"
#include "model/samples.hpp"
#include "topology/nvml_library.hpp"

namespace pcieval {

// How long one NVML call may take before the reader gives up on it. NVML
// answers in microseconds to milliseconds; a call still running after
// seconds is stuck in the driver (a GPU that fell off the bus, a wedged
// driver), not slow.
inline constexpr std::chrono::milliseconds kNvmlCallTimeout{5000};

// NVML's own bus-id form: "%08X:%02X:%02X.%X" ("00000000:17:00.0"), the way
// nvmlPciInfo_t.busId prints it. NVML accepts it back; sysfs uses "0000:17:00.0".
[[nodiscard]] std::string format_nvml_bus_id(const PciAddress& address);

// Reads a bus id as NVML prints it (8-digit uppercase domain, or the legacy
// 4-digit busIdLegacy) into the address every other stage joins on.
[[nodiscard]] Result<PciAddress> parse_nvml_bus_id(std::string_view bus_id);

// nvmlGpuP2PStatus_t as the word PeerStatus::status holds ("ok",
// "topology_not_supported", ...); an error for a value NVML does not define.
[[nodiscard]] Result<std::string> peer_status_word(int nvml_status);

// A GPU's negotiated link as NVML reports it; nullopt where a call failed.
struct NvmlCurrentLink {
  std::optional<int> gen;
  std::optional<int> width;
};

class DeadlineWorker;

// Reads GPUs' links through an initialised session. Every NVML call runs on
// the reader's worker thread (support/deadline_worker.hpp) and is waited for
// until `call_timeout`: a call that does not return by then is an error
// ("nvmlDeviceGetCurrPcieLinkGeneration on 0000:17:00.0 did not return within
// 5 s"), and that GPU is not queried through NVML again by this reader; the
// other GPUs still are. Thread-safe (NVML is, and the reader's own state is
// locked), so one reader may serve the sampler thread and the caller at once.
// The library must outlive the reader. Move-only.
class NvmlReader {
 public:
  explicit NvmlReader(const NvmlLibrary& library, std::chrono::milliseconds call_timeout = kNvmlCallTimeout);
  NvmlReader(NvmlReader&&) noexcept;
  NvmlReader& operator=(NvmlReader&&) noexcept;
  NvmlReader(const NvmlReader&) = delete;
  NvmlReader& operator=(const NvmlReader&) = delete;
  ~NvmlReader();

  // The handle of the GPU at `gpu`. Errors name the address: "no GPU at
  // 0000:17:00.0 known to NVML (...)" for NOT_FOUND, the NVML code otherwise.
  [[nodiscard]] Result<NvmlDevice> find_gpu(const PciAddress& gpu) const;

  // Every field of NvmlGpuLink. A field whose call failed (NOT_SUPPORTED on
  // this GPU, a symbol the driver lacks) stays nullopt, and `notes`, when
  // given, says which and why. under_load is left false: only the caller
  // knows whether copies were running.
  [[nodiscard]] Result<NvmlGpuLink> read(const PciAddress& gpu, std::vector<std::string>* notes = nullptr) const;

  // Current generation and width only, for the sampler's rounds: two calls,
  // each on the worker. A call that failed, missed its deadline, or was not
  // made (the GPU was given up on) leaves its field nullopt.
  [[nodiscard]] NvmlCurrentLink read_current_link(NvmlDevice device) const noexcept;

  // nvmlDeviceGetPcieReplayCounter, for the before/after counters.
  [[nodiscard]] Result<std::uint64_t> read_replay_counter(const PciAddress& gpu) const;

  // nvmlDeviceGetUtilizationRates' gpu percent, read before the probes: a GPU
  // running someone else's kernels shares its link with them.
  [[nodiscard]] Result<int> read_utilization_gpu_percent(const PciAddress& gpu) const;

  // nvmlDeviceGetPcieThroughput's TX + RX (KB/s over 20 ms each), read
  // before the probes: a GPU another job copies through moves GB/s while its
  // SM utilisation reads 0. An error when the driver lacks the call, a
  // direction's call failed, or it did not return.
  [[nodiscard]] Result<std::uint64_t> read_pcie_traffic_kbps(const PciAddress& gpu) const;

  // Whether MIG mode is on for the GPU at `gpu` (nvmlDeviceGetMigMode's
  // current mode), read before the probes: CUDA then sees a MIG slice at the
  // GPU's address, whose copy engines are a fraction of the GPU's, so its
  // copies do not measure the link. False on a GPU without MIG (NVML answers
  // NOT_SUPPORTED there); an error when the driver lacks the call or it
  // failed otherwise.
  [[nodiscard]] Result<bool> read_mig_enabled(const PciAddress& gpu) const;

  // Whether the system runs in confidential-computing mode
  // (nvmlSystemGetConfComputeState's ccFeature), read before the probes: in
  // CC mode host memory cannot be registered or mapped for a GPU, so the
  // pinned probes are skipped. An error when the driver lacks the call,
  // refuses it (NOT_SUPPORTED on GPUs without CC), or it did not return.
  [[nodiscard]] Result<bool> read_confidential_computing() const;

  // Whether each GPU may read from and write to each other GPU's memory, as
  // nvmlDeviceGetP2PStatus says: one PeerStatus per ordered pair of `gpus`
  // (addresses as sysfs spells them) and capability (read, then write),
  // source "nvml", with NVML's status as a word of peer_status_words().
  // What cannot be asked is left out and said in `notes`: a driver without
  // the symbol (nothing is asked: one note, no error), a GPU NVML does not
  // know, a call that fails or answers a status NVML does not define, a
  // GPU given up on after a call that did not return.
  [[nodiscard]] std::vector<PeerStatus> read_peer_status(const std::vector<PciAddress>& gpus,
                                                         std::vector<std::string>* notes = nullptr) const;

  // The GPUs given up on, each with the call that did not return ("... did
  // not return within 5 s"), in the order it happened: for notes in the
  // evidence.
  [[nodiscard]] std::vector<std::string> timeouts() const;

  struct State;  // defined in nvml.cpp

 private:
  std::unique_ptr<State> state_;
};

}  // namespace pcieval
