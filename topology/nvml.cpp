#include "topology/nvml.hpp"

#include <dlfcn.h>

#include <array>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

#include "topology/deadline_worker.hpp"

namespace pcieval {
namespace {

// Names from nvml.h's nvmlReturn_t; numbers that are not here print as
// NVML_ERROR_<n>.
std::string_view known_return_name(NvmlReturn code) {
  switch (code) {
    case 0:
      return "NVML_SUCCESS";
    case 1:
      return "NVML_ERROR_UNINITIALIZED";
    case 2:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case 3:
      return "NVML_ERROR_NOT_SUPPORTED";
    case 4:
      return "NVML_ERROR_NO_PERMISSION";
    case 5:
      return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6:
      return "NVML_ERROR_NOT_FOUND";
    case 7:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8:
      return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10:
      return "NVML_ERROR_TIMEOUT";
    case 11:
      return "NVML_ERROR_IRQ_ISSUE";
    case 12:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14:
      return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15:
      return "NVML_ERROR_GPU_IS_LOST";
    case 16:
      return "NVML_ERROR_RESET_REQUIRED";
    case 17:
      return "NVML_ERROR_OPERATING_SYSTEM";
    case 18:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19:
      return "NVML_ERROR_IN_USE";
    case 20:
      return "NVML_ERROR_MEMORY";
    case 21:
      return "NVML_ERROR_NO_DATA";
    case 22:
      return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23:
      return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24:
      return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case 25:
      return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26:
      return "NVML_ERROR_DEPRECATED";
    case 27:
      return "NVML_ERROR_NOT_READY";
    case 28:
      return "NVML_ERROR_GPU_NOT_FOUND";
    case 29:
      return "NVML_ERROR_INVALID_STATE";
    case 999:
      return "NVML_ERROR_UNKNOWN";
    default:
      return {};
  }
}

// "NVML_ERROR_NOT_SUPPORTED (3)": the name to search for, the number to
// compare with a driver's own logs.
std::string code_text(NvmlReturn code) { return nvml_return_name(code) + " (" + std::to_string(code) + ")"; }

// What an operator can do about an init failure; empty where NVML's own
// text is as good as anything said here.
std::string_view init_hint(NvmlReturn code) {
  switch (code) {
    case kNvmlErrorDriverNotLoaded:
      return "the NVIDIA kernel driver is not loaded (check `lsmod | grep nvidia` and dmesg)";
    case kNvmlErrorNoPermission:
      return "no permission to open the /dev/nvidia* device files";
    case kNvmlErrorLibRmVersionMismatch:
      return "libnvidia-ml.so.1 and the loaded kernel driver are different versions (reload the driver or reboot)";
    case kNvmlErrorLibraryNotFound:
      return "NVML could not find its own libraries";
    default:
      return {};
  }
}

template <class Fn>
bool bind_symbol(Fn& slot, const char* name, const std::function<void*(const char*)>& lookup) {
  void* address = lookup(name);
  // POSIX guarantees a data pointer from dlsym converts to a function pointer.
  slot = reinterpret_cast<Fn>(address);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  return address != nullptr;
}

// Converts an NVML unsigned value into the model's int, refusing values no
// generation, width or P-state can have (an uninitialised out-parameter in a
// buggy driver would otherwise become a plausible number).
std::optional<int> checked_int(unsigned int value) {
  if (value > static_cast<unsigned int>(INT_MAX)) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

std::string nvml_return_name(NvmlReturn code) {
  const std::string_view name = known_return_name(code);
  if (!name.empty()) return std::string(name);
  return "NVML_ERROR_" + std::to_string(code);
}

Result<NvmlApi> resolve_nvml_api(const std::function<void*(const char* symbol)>& lookup, std::string_view library_name,
                                 std::vector<std::string>* missing_optional) {
  NvmlApi api;
  std::vector<std::string> missing_required;
  std::vector<std::string> missing;
  const auto want = [&](auto& slot, const char* name, bool required) {
    if (bind_symbol(slot, name, lookup)) return;
    (required ? missing_required : missing).emplace_back(name);
  };
  want(api.init_v2, "nvmlInit_v2", true);
  want(api.shutdown, "nvmlShutdown", true);
  want(api.device_get_handle_by_pci_bus_id_v2, "nvmlDeviceGetHandleByPciBusId_v2", true);
  want(api.error_string, "nvmlErrorString", false);
  want(api.device_get_curr_pcie_link_generation, "nvmlDeviceGetCurrPcieLinkGeneration", false);
  want(api.device_get_max_pcie_link_generation, "nvmlDeviceGetMaxPcieLinkGeneration", false);
  // Newer than the others (drivers from about 2021): often absent on old nodes.
  want(api.device_get_gpu_max_pcie_link_generation, "nvmlDeviceGetGpuMaxPcieLinkGeneration", false);
  want(api.device_get_curr_pcie_link_width, "nvmlDeviceGetCurrPcieLinkWidth", false);
  want(api.device_get_max_pcie_link_width, "nvmlDeviceGetMaxPcieLinkWidth", false);
  want(api.device_get_pcie_replay_counter, "nvmlDeviceGetPcieReplayCounter", false);
  want(api.device_get_pcie_throughput, "nvmlDeviceGetPcieThroughput", false);
  want(api.device_get_performance_state, "nvmlDeviceGetPerformanceState", false);
  want(api.device_get_name, "nvmlDeviceGetName", false);
  want(api.device_get_utilization_rates, "nvmlDeviceGetUtilizationRates", false);
  want(api.system_get_conf_compute_state, "nvmlSystemGetConfComputeState", false);
  if (!missing_required.empty()) {
    std::string names;
    for (const auto& name : missing_required) names += (names.empty() ? "" : ", ") + name;
    return make_error(std::string(library_name) + " lacks " + names +
                      ": not an NVML library, or a driver too old for pcieval");
  }
  if (missing_optional != nullptr) *missing_optional = std::move(missing);
  return api;
}

Result<NvmlLibrary> NvmlLibrary::load(std::string_view library_name) {
  const std::string name(library_name);
  ::dlerror();  // clear a stale error so the one read below is ours
  // RTLD_LOCAL: NVML's symbols stay out of the global namespace, where they
  // could satisfy some other library's lookups.
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    const std::string why = reason != nullptr ? reason : "unknown dlopen failure";
    if (why.find("No such file or directory") != std::string::npos) {
      return make_error(name + " not found: NVIDIA driver not installed");
    }
    return make_error(name + " could not be loaded: " + why);
  }
  std::vector<std::string> missing;
  auto api = resolve_nvml_api([handle](const char* symbol) { return ::dlsym(handle, symbol); }, name, &missing);
  // Owning the handle before anything else can fail keeps dlclose in one place.
  NvmlLibrary library(handle, api.ok() ? api.value() : NvmlApi{}, std::move(missing));
  if (!api) return api.error();
  auto status = library.init();
  if (!status) return status.error();
  return library;
}

Result<NvmlLibrary> NvmlLibrary::from_api(const NvmlApi& api, std::vector<std::string> missing_optional) {
  if (api.init_v2 == nullptr || api.shutdown == nullptr || api.device_get_handle_by_pci_bus_id_v2 == nullptr) {
    return make_error("NVML function table lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2");
  }
  NvmlLibrary library(nullptr, api, std::move(missing_optional));
  auto status = library.init();
  if (!status) return status.error();
  return library;
}

Status NvmlLibrary::init() {
  const NvmlReturn code = api_.init_v2();
  if (code == kNvmlSuccess) {
    initialised_ = true;
    return ok_status();
  }
  std::string message = "NVML initialisation (nvmlInit_v2) failed: " + code_text(code);
  const std::string_view hint = init_hint(code);
  if (!hint.empty()) {
    message += ": " + std::string(hint);
  } else if (api_.error_string != nullptr) {
    message += ": " + std::string(api_.error_string(code));
  }
  return make_error(std::move(message));
}

NvmlLibrary::NvmlLibrary(void* handle, const NvmlApi& api, std::vector<std::string> missing_optional)
    : handle_(handle), api_(api), missing_optional_(std::move(missing_optional)) {}

NvmlLibrary::NvmlLibrary(NvmlLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      api_(std::exchange(other.api_, NvmlApi{})),
      missing_optional_(std::move(other.missing_optional_)),
      initialised_(std::exchange(other.initialised_, false)),
      stuck_calls_(std::move(other.stuck_calls_)) {}

NvmlLibrary& NvmlLibrary::operator=(NvmlLibrary&& other) noexcept {
  if (this != &other) {
    release();
    handle_ = std::exchange(other.handle_, nullptr);
    api_ = std::exchange(other.api_, NvmlApi{});
    missing_optional_ = std::move(other.missing_optional_);
    initialised_ = std::exchange(other.initialised_, false);
    stuck_calls_ = std::move(other.stuck_calls_);
  }
  return *this;
}

NvmlLibrary::~NvmlLibrary() { release(); }

void NvmlLibrary::release() noexcept {
  if (stuck_calls_ != nullptr && stuck_calls_->load() > 0) {
    // A call is still inside NVML: nvmlShutdown would wait for it (for ever,
    // if it never returns) and dlclose would unmap the code it runs. Both are
    // left to the process's exit.
    initialised_ = false;
    handle_ = nullptr;
    return;
  }
  // A failed shutdown leaves nothing to undo: the process is letting go of
  // NVML either way, so its code is deliberately not checked.
  if (initialised_ && api_.shutdown != nullptr) static_cast<void>(api_.shutdown());
  initialised_ = false;
  // Shutdown first: its code lives in the library being closed.
  if (handle_ != nullptr) ::dlclose(handle_);
  handle_ = nullptr;
}

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
                      "): " + code_text(code));
  }
  return make_error("NVML could not open the GPU at " + to_string(gpu) + " (" + bus_id + "): " + code_text(code));
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
      note(function, code_text(called.value().first));
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
      note("nvmlDeviceGetPerformanceState", code_text(code));
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
      note("nvmlDeviceGetName", code_text(code));
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
  if (code != kNvmlSuccess) return make_error("nvmlSystemGetConfComputeState: " + code_text(code));
  return state.cc_feature == kNvmlCcSystemFeatureEnabled;
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
  if (code != kNvmlSuccess) return make_error("nvmlDeviceGetUtilizationRates: " + code_text(code));
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
    return make_error("nvmlDeviceGetPcieReplayCounter for " + to_string(gpu) + ": " + code_text(code));
  }
  return std::uint64_t{value};
}

}  // namespace pcieval
