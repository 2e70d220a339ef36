#include "topology/nvml.hpp"

#include <array>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

#include "support/deadline_worker.hpp"

namespace pcieval {
namespace {

// Converts an NVML unsigned value into the model's int, refusing values no
// generation, width or P-state can have (an uninitialised out-parameter in a
// buggy driver would otherwise become a plausible number).
std::optional<int> checked_int(unsigned int value) {
  if (value > static_cast<unsigned int>(INT_MAX)) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

std::string format_nvml_bus_id(const PciAddress& address) {
  std::array<char, 32> buffer{};  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
  std::snprintf(buffer.data(), buffer.size(), "%08X:%02X:%02X.%X", address.domain, address.bus, address.device,
                address.function);
  return buffer.data();
}

Result<PciAddress> parse_nvml_bus_id(std::string_view bus_id) {
  // parse_pci_address takes any domain width and either case, which covers
  // both busId ("%08X") and busIdLegacy ("%04X").
  auto address = parse_pci_address(bus_id);
  if (!address) return make_error("NVML bus id: " + address.error().message);
  return address;
}

Result<std::string> peer_status_word(int nvml_status) {
  const auto& words = peer_status_words();
  if (nvml_status < 0 || static_cast<std::size_t>(nvml_status) >= words.size()) {
    return make_error("nvmlGpuP2PStatus " + std::to_string(nvml_status) + " is not a status NVML defines");
  }
  return std::string(words[static_cast<std::size_t>(nvml_status)]);
}

// --- NvmlReader

namespace {

// "5 s", "0.1 s".
std::string seconds_text(std::chrono::milliseconds duration) {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%g s", static_cast<double>(duration.count()) / 1000.0);
  return text.data();
}

}  // namespace

// The worker every NVML call of the reader runs on, and the GPUs it gave up
// on. The API is copied: its function pointers stay valid while the library
// is loaded, and a stuck call keeps it loaded (NvmlLibrary::release).
struct NvmlReader::State {
  State(const NvmlLibrary& library, std::chrono::milliseconds timeout)
      : api(library.api()), call_timeout(timeout), worker(library.stuck_calls()) {}

  // Why `gpu` is not queried, when it was given up on.
  std::optional<std::string> refusal(const PciAddress& gpu) {
    const std::lock_guard lock(mutex);
    const auto it = given_up.find(gpu);
    if (it == given_up.end()) return std::nullopt;
    return "NVML is not queried again for " + to_string(gpu) + " in this run: " + it->second;
  }

  void give_up(const PciAddress& gpu, const std::string& reason) {
    const std::lock_guard lock(mutex);
    if (given_up.emplace(gpu, reason).second) timeouts.push_back(reason);
  }

  // Runs fn (which makes NVML call `function` about `gpu`) on the worker.
  // Errors: the GPU was given up on, the call missed its deadline (the GPU
  // is then given up on), or the worker refused.
  template <class Fn>
  Result<std::invoke_result_t<Fn&>> guarded(const PciAddress& gpu, std::string_view function, Fn fn) {
    if (auto refused = refusal(gpu)) return make_error(*refused);
    auto call = worker.call(std::move(fn), call_timeout);
    if (call.outcome == DeadlineOutcome::kReturned) return std::move(*call.value);
    if (call.outcome == DeadlineOutcome::kRefused) {
      return make_error(std::string(function) + " on " + to_string(gpu) +
                        " not called: " + std::to_string(worker.abandoned_threads()) +
                        " earlier NVML calls did not return, so NVML is no longer queried in this run");
    }
    std::string message =
        std::string(function) + " on " + to_string(gpu) + " did not return within " + seconds_text(call_timeout);
    give_up(gpu, message);
    return make_error(std::move(message));
  }

  NvmlApi api;
  std::chrono::milliseconds call_timeout;
  DeadlineWorker worker;
  std::mutex mutex;
  std::map<PciAddress, std::string> given_up;  // guarded by mutex: the call that did not return
  std::vector<std::string> timeouts;           // guarded by mutex: given_up's reasons in order
  std::map<NvmlDevice, PciAddress> addresses;  // guarded by mutex: the handles find_gpu returned
};

NvmlReader::NvmlReader(const NvmlLibrary& library, std::chrono::milliseconds call_timeout)
    : state_(std::make_unique<State>(library, call_timeout)) {}
NvmlReader::NvmlReader(NvmlReader&&) noexcept = default;
NvmlReader& NvmlReader::operator=(NvmlReader&&) noexcept = default;
NvmlReader::~NvmlReader() = default;

std::vector<std::string> NvmlReader::timeouts() const {
  const std::lock_guard lock(state_->mutex);
  return state_->timeouts;
}

Result<NvmlDevice> NvmlReader::find_gpu(const PciAddress& gpu) const {
  const std::string bus_id = format_nvml_bus_id(gpu);
  auto looked_up = state_->guarded(gpu, "nvmlDeviceGetHandleByPciBusId_v2",
                                   [lookup = state_->api.device_get_handle_by_pci_bus_id_v2, bus_id] {
                                     NvmlDevice device = nullptr;
                                     const NvmlReturn code = lookup(bus_id.c_str(), &device);
                                     return std::pair<NvmlReturn, NvmlDevice>{code, device};
                                   });
  if (!looked_up) return looked_up.error();
  const auto [code, device] = looked_up.value();
  if (code == kNvmlSuccess) {
    const std::lock_guard lock(state_->mutex);
    state_->addresses.insert_or_assign(device, gpu);
    return device;
  }
  if (code == kNvmlErrorNotFound) {
    return make_error("no GPU at " + to_string(gpu) + " known to NVML (looked up as " + bus_id +
                      "): " + nvml_return_text(code));
  }
  return make_error("NVML could not open the GPU at " + to_string(gpu) + " (" + bus_id +
                    "): " + nvml_return_text(code));
}

Result<NvmlGpuLink> NvmlReader::read(const PciAddress& gpu, std::vector<std::string>* notes) const {
  auto found = find_gpu(gpu);
  if (!found) return found.error();
  const NvmlDevice device = found.value();

  // One field: nullopt, with the reason in `notes`, when the symbol is absent
  // or the call fails; NOT_SUPPORTED is the common case (vGPU guests, old
  // boards) and is no fault of the link. A call that did not return ends the
  // read: the GPU is given up on, and the read is that error.
  const auto note = [&](const char* function, const std::string& why) {
    if (notes != nullptr) notes->push_back(std::string(function) + ": " + why);
  };
  std::optional<Error> stuck;
  const auto read_uint = [&](auto fn, const char* function, auto... extra) -> std::optional<unsigned int> {
    if (stuck) return std::nullopt;
    if (fn == nullptr) {
      note(function, "not exported by this driver");
      return std::nullopt;
    }
    auto called = state_->guarded(gpu, function, [fn, device, extra...] {
      unsigned int value = 0;
      const NvmlReturn code = fn(device, extra..., &value);
      return std::pair<NvmlReturn, unsigned int>{code, value};
    });
    if (!called) {
      stuck = called.error();
      return std::nullopt;
    }
    if (called.value().first != kNvmlSuccess) {
      note(function, nvml_return_text(called.value().first));
      return std::nullopt;
    }
    return called.value().second;
  };
  const auto as_int = [](std::optional<unsigned int> value) -> std::optional<int> {
    return value ? checked_int(*value) : std::nullopt;
  };
  const NvmlApi& api = state_->api;

  NvmlGpuLink link;
  link.current_gen = as_int(read_uint(api.device_get_curr_pcie_link_generation, "nvmlDeviceGetCurrPcieLinkGeneration"));
  link.max_gen = as_int(read_uint(api.device_get_max_pcie_link_generation, "nvmlDeviceGetMaxPcieLinkGeneration"));
  link.gpu_max_gen =
      as_int(read_uint(api.device_get_gpu_max_pcie_link_generation, "nvmlDeviceGetGpuMaxPcieLinkGeneration"));
  link.current_width = as_int(read_uint(api.device_get_curr_pcie_link_width, "nvmlDeviceGetCurrPcieLinkWidth"));
  link.max_width = as_int(read_uint(api.device_get_max_pcie_link_width, "nvmlDeviceGetMaxPcieLinkWidth"));
  if (auto replay = read_uint(api.device_get_pcie_replay_counter, "nvmlDeviceGetPcieReplayCounter")) {
    link.replay_counter = *replay;
  }
  if (auto tx = read_uint(api.device_get_pcie_throughput, "nvmlDeviceGetPcieThroughput(TX_BYTES)",
                          NvmlPcieUtilCounter::kTxBytes)) {
    link.tx_kbps = *tx;
  }
  if (auto rx = read_uint(api.device_get_pcie_throughput, "nvmlDeviceGetPcieThroughput(RX_BYTES)",
                          NvmlPcieUtilCounter::kRxBytes)) {
    link.rx_kbps = *rx;
  }
  if (stuck) return *stuck;
  if (api.device_get_performance_state == nullptr) {
    note("nvmlDeviceGetPerformanceState", "not exported by this driver");
  } else {
    auto called =
        state_->guarded(gpu, "nvmlDeviceGetPerformanceState", [fn = api.device_get_performance_state, device] {
          int pstate = kNvmlPstateUnknown;
          const NvmlReturn code = fn(device, &pstate);
          return std::pair<NvmlReturn, int>{code, pstate};
        });
    if (!called) return called.error();
    const auto [code, pstate] = called.value();
    if (code != kNvmlSuccess) {
      note("nvmlDeviceGetPerformanceState", nvml_return_text(code));
    } else if (pstate < 0 || pstate > 15) {
      // NVML_PSTATE_UNKNOWN (32) says nothing about the link's power state.
      note("nvmlDeviceGetPerformanceState", "unknown P-state " + std::to_string(pstate));
    } else {
      link.pstate = pstate;
    }
  }
  if (api.device_get_name == nullptr) {
    note("nvmlDeviceGetName", "not exported by this driver");
  } else {
    using NameBuffer = std::array<char, kNvmlDeviceNameBufferSize>;
    auto called = state_->guarded(gpu, "nvmlDeviceGetName", [fn = api.device_get_name, device] {
      NameBuffer name{};
      const NvmlReturn code = fn(device, name.data(), kNvmlDeviceNameBufferSize);
      return std::pair<NvmlReturn, NameBuffer>{code, name};
    });
    if (!called) return called.error();
    auto& [code, name] = called.value();
    if (code != kNvmlSuccess) {
      note("nvmlDeviceGetName", nvml_return_text(code));
    } else {
      name.back() = '\0';  // NVML terminates it; a broken driver must not make us read past the buffer
      link.name = std::string(name.data());
    }
  }
  return link;
}

Result<bool> NvmlReader::read_confidential_computing() const {
  const auto get = state_->api.system_get_conf_compute_state;
  if (get == nullptr) return make_error("nvmlSystemGetConfComputeState: not exported by this driver");
  // A system call, not a GPU's: no GPU is given up on if it hangs, but the
  // worker still bounds the wait.
  auto call = state_->worker.call(
      [get] {
        NvmlConfComputeSystemState state;
        const NvmlReturn code = get(&state);
        return std::pair<NvmlReturn, NvmlConfComputeSystemState>{code, state};
      },
      state_->call_timeout);
  if (call.outcome != DeadlineOutcome::kReturned) {
    return make_error("nvmlSystemGetConfComputeState did not return within " + seconds_text(state_->call_timeout));
  }
  const auto [code, state] = *call.value;
  if (code != kNvmlSuccess) return make_error("nvmlSystemGetConfComputeState: " + nvml_return_text(code));
  return state.cc_feature == kNvmlCcSystemFeatureEnabled;
}

Result<std::uint64_t> NvmlReader::read_pcie_traffic_kbps(const PciAddress& gpu) const {
  const auto get = state_->api.device_get_pcie_throughput;
  if (get == nullptr) return make_error("nvmlDeviceGetPcieThroughput: not exported by this driver");
  auto found = find_gpu(gpu);
  if (!found) return found.error();
  // Both directions in one hand-off: each call samples for 20 ms.
  auto called = state_->guarded(gpu, "nvmlDeviceGetPcieThroughput", [get, device = found.value()] {
    unsigned int tx = 0;
    unsigned int rx = 0;
    NvmlReturn code = get(device, NvmlPcieUtilCounter::kTxBytes, &tx);
    if (code == kNvmlSuccess) code = get(device, NvmlPcieUtilCounter::kRxBytes, &rx);
    return std::pair<NvmlReturn, std::uint64_t>{code, std::uint64_t{tx} + std::uint64_t{rx}};
  });
  if (!called) return called.error();
  const auto [code, traffic_kbps] = called.value();
  if (code != kNvmlSuccess) return make_error("nvmlDeviceGetPcieThroughput: " + nvml_return_text(code));
  return traffic_kbps;
}

Result<bool> NvmlReader::read_mig_enabled(const PciAddress& gpu) const {
  const auto get = state_->api.device_get_mig_mode;
  if (get == nullptr) return make_error("nvmlDeviceGetMigMode: not exported by this driver");
  auto found = find_gpu(gpu);
  if (!found) return found.error();
  auto called = state_->guarded(gpu, "nvmlDeviceGetMigMode", [get, device = found.value()] {
    unsigned int current = 0;
    unsigned int pending = 0;
    const NvmlReturn code = get(device, &current, &pending);
    return std::pair<NvmlReturn, unsigned int>{code, current};
  });
  if (!called) return called.error();
  const auto [code, current] = called.value();
  // A GPU without MIG (anything before A100/H100, the PCIe cards of most
  // generations) answers NOT_SUPPORTED: MIG cannot be on there.
  if (code == kNvmlErrorNotSupported) return false;
  if (code != kNvmlSuccess) return make_error("nvmlDeviceGetMigMode: " + nvml_return_text(code));
  return current == kNvmlDeviceMigEnable;
}

Result<int> NvmlReader::read_utilization_gpu_percent(const PciAddress& gpu) const {
  const auto get = state_->api.device_get_utilization_rates;
  if (get == nullptr) return make_error("nvmlDeviceGetUtilizationRates: not exported by this driver");
  auto found = find_gpu(gpu);
  if (!found) return found.error();
  auto called = state_->guarded(gpu, "nvmlDeviceGetUtilizationRates", [get, device = found.value()] {
    NvmlUtilization utilization;
    const NvmlReturn code = get(device, &utilization);
    return std::pair<NvmlReturn, NvmlUtilization>{code, utilization};
  });
  if (!called) return called.error();
  const auto [code, utilization] = called.value();
  if (code != kNvmlSuccess) return make_error("nvmlDeviceGetUtilizationRates: " + nvml_return_text(code));
  if (utilization.gpu > 100) {
    return make_error("nvmlDeviceGetUtilizationRates: " + std::to_string(utilization.gpu) + "% is not a percentage");
  }
  return static_cast<int>(utilization.gpu);
}

NvmlCurrentLink NvmlReader::read_current_link(NvmlDevice device) const noexcept {
  NvmlCurrentLink link;
  try {
    std::optional<PciAddress> gpu;
    {
      const std::lock_guard lock(state_->mutex);
      if (const auto it = state_->addresses.find(device); it != state_->addresses.end()) gpu = it->second;
    }
    // A handle this reader did not look up cannot be named in an error or
    // given up on: it is not read.
    if (!gpu) return link;
    // Both calls in one hand-off to the worker: the sampler makes this read
    // for every GPU in every round, and the hand-off costs more than the
    // calls.
    struct Answers {
      NvmlReturn gen_code = kNvmlErrorFunctionNotFound;
      unsigned int gen = 0;
      NvmlReturn width_code = kNvmlErrorFunctionNotFound;
      unsigned int width = 0;
    };
    auto called = state_->guarded(*gpu, "nvmlDeviceGetCurrPcieLinkGeneration/Width",
                                  [get_gen = state_->api.device_get_curr_pcie_link_generation,
                                   get_width = state_->api.device_get_curr_pcie_link_width, device] {
                                    Answers answers;
                                    if (get_gen != nullptr) answers.gen_code = get_gen(device, &answers.gen);
                                    if (get_width != nullptr) answers.width_code = get_width(device, &answers.width);
                                    return answers;
                                  });
    if (!called) return link;
    const Answers& answers = called.value();
    if (answers.gen_code == kNvmlSuccess) link.gen = checked_int(answers.gen);
    if (answers.width_code == kNvmlSuccess) link.width = checked_int(answers.width);
  } catch (...) {
    // Only an allocation failure gets here; a sample with nothing read is
    // what the sampler records for any failed read.
    return NvmlCurrentLink{};
  }
  return link;
}

std::vector<PeerStatus> NvmlReader::read_peer_status(const std::vector<PciAddress>& gpus,
                                                     std::vector<std::string>* notes) const {
  std::vector<PeerStatus> statuses;
  const auto note = [notes](std::string text) {
    if (notes != nullptr) notes->push_back(std::move(text));
  };
  const auto get = state_->api.device_get_p2p_status;
  if (get == nullptr) {
    note("nvmlDeviceGetP2PStatus: not exported by this driver: GPU peer-to-peer status not read");
    return statuses;
  }
  std::vector<std::pair<PciAddress, NvmlDevice>> handles;
  for (const PciAddress& gpu : gpus) {
    auto found = find_gpu(gpu);
    if (!found) {
      note("nvmlDeviceGetP2PStatus: peer status of " + to_string(gpu) + " not read: " + found.error().message);
      continue;
    }
    handles.emplace_back(gpu, found.value());
  }

  // A driver that refuses the call refuses it for every pair: one note per
  // answer, with how many pairs gave it, rather than one per pair.
  struct Refusals {
    int count = 0;
    std::string first;
  };
  std::map<std::string, Refusals> refused;
  int asked = 0;
  constexpr std::array<std::pair<NvmlP2PCapsIndex, PeerCapability>, 2> kCapabilities = {{
      {NvmlP2PCapsIndex::kRead, PeerCapability::kRead},
      {NvmlP2PCapsIndex::kWrite, PeerCapability::kWrite},
  }};
  for (const auto& [gpu, device] : handles) {
    for (const auto& [peer, peer_device] : handles) {
      if (gpu == peer) continue;
      for (const auto& [index, capability] : kCapabilities) {
        // A GPU given up on is not handed to NVML again, on either side.
        if (state_->refusal(gpu) || state_->refusal(peer)) continue;
        ++asked;
        const std::string call = "nvmlDeviceGetP2PStatus(" + to_string(gpu) + ", " + to_string(peer) + ", " +
                                 std::string(to_string(capability)) + ")";
        auto called = state_->guarded(gpu, "nvmlDeviceGetP2PStatus", [get, device, peer_device, index] {
          int status = kNvmlP2PStatusUnknown;
          const NvmlReturn code = get(device, peer_device, index, &status);
          return std::pair<NvmlReturn, int>{code, status};
        });
        if (!called) {
          note(called.error().message);
          continue;
        }
        const auto [code, status] = called.value();
        if (code != kNvmlSuccess) {
          Refusals& seen = refused[nvml_return_text(code)];
          if (seen.count++ == 0) seen.first = call;
          continue;
        }
        auto word = peer_status_word(status);
        if (!word) {
          note(call + ": " + word.error().message);
          continue;
        }
        statuses.push_back(PeerStatus{gpu, peer, capability, std::move(word).value(), "nvml"});
      }
    }
  }
  for (const auto& [answer, seen] : refused) {
    note("nvmlDeviceGetP2PStatus answered " + answer + " for " + std::to_string(seen.count) + " of " +
         std::to_string(asked) + " GPU pairs and capabilities (first " + seen.first +
         "): their peer status is unknown");
  }
  return statuses;
}

Result<std::uint64_t> NvmlReader::read_replay_counter(const PciAddress& gpu) const {
  const auto get = state_->api.device_get_pcie_replay_counter;
  if (get == nullptr) return make_error("nvmlDeviceGetPcieReplayCounter is not exported by this driver");
  auto found = find_gpu(gpu);
  if (!found) return found.error();
  auto called = state_->guarded(gpu, "nvmlDeviceGetPcieReplayCounter", [get, device = found.value()] {
    unsigned int value = 0;
    const NvmlReturn code = get(device, &value);
    return std::pair<NvmlReturn, unsigned int>{code, value};
  });
  if (!called) return called.error();
  const auto [code, value] = called.value();
  if (code != kNvmlSuccess) {
    return make_error("nvmlDeviceGetPcieReplayCounter for " + to_string(gpu) + ": " + nvml_return_text(code));
  }
  return std::uint64_t{value};
}

}  // namespace pcieval
