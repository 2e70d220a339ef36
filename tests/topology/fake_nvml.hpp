// A fake NVML for the topology tests: the C function table of NvmlApi over
// canned GPUs keyed by the bus id NVML is asked for, so NvmlLibrary and
// NvmlReader run their real code against GPUs that answer, fail, or hang.
//
// Use FakeNvmlTest as the fixture: it owns one FakeNvml per test (the C
// functions reach it through fake_nvml()), gives the whole table or a
// session over it, and at its end opens the gate of any call left hanging
// and waits for the session's stuck calls to come back before the fake goes.
// A test with a fixture of its own declares a ScopedFakeNvml instead.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "topology/nvml.hpp"

namespace pcieval::testing {

struct FakeNvmlGpu {
  // "curr_gen", "max_gen", "gpu_max_gen", "curr_width", "max_width",
  // "replay", "tx", "rx", "utilization"; a field without a value answers
  // NVML_ERROR_NOT_SUPPORTED.
  std::map<std::string, unsigned int> values;
  std::map<std::string, NvmlReturn> failures;  // a field's call returns this instead ("pstate", "name" too)
  int pstate = 0;
  std::string name = "NVIDIA H100 PCIe";
  // nvmlDeviceGetCurrPcieLinkGeneration blocks until the fake's gate opens
  // (a GPU fallen off the bus can make NVML calls hang in the driver).
  bool hangs = false;
  // nvmlDeviceGetP2PStatus with this GPU first blocks the same way.
  bool p2p_hangs = false;
};

// An H100 PCIe at P0 under load, as nvidia-smi -q would show it.
inline FakeNvmlGpu busy_h100() {
  FakeNvmlGpu gpu;
  gpu.values = {{"curr_gen", 5},   {"max_gen", 5}, {"gpu_max_gen", 5}, {"curr_width", 16},
                {"max_width", 16}, {"replay", 3},  {"tx", 12000000},   {"rx", 25000000}};
  gpu.pstate = 0;
  return gpu;
}

struct FakeNvml {
  // Keyed by the exact bus id NVML is asked for ("00000000:17:00.0"); set
  // up before the session reads them (the map is not guarded).
  std::map<std::string, FakeNvmlGpu> gpus;
  NvmlReturn init_code = kNvmlSuccess;
  NvmlReturn lookup_code = kNvmlSuccess;  // forced on every lookup when not success
  NvmlReturn conf_compute_code = kNvmlSuccess;
  unsigned int cc_feature = 0;  // nvmlConfComputeSystemState_t::ccFeature
  // nvmlDeviceGetP2PStatus: the status of (bus id, peer bus id, caps index)
  // where listed, p2p_default_status otherwise; p2p_code forced on every
  // call when not success.
  std::map<std::tuple<std::string, std::string, int>, int> p2p_status;
  int p2p_default_status = kNvmlP2PStatusOk;
  NvmlReturn p2p_code = kNvmlSuccess;
  std::atomic<int> init_calls{0};
  std::atomic<int> shutdown_calls{0};

  // What the calls did, from any thread (the reader's worker threads too).
  std::vector<std::string> looked_up() const {
    const std::lock_guard lock(mutex);
    return looked_up_;
  }
  int calls_for(const std::string& bus_id) const {
    const std::lock_guard lock(mutex);
    const auto it = calls_.find(bus_id);
    return it == calls_.end() ? 0 : it->second;
  }
  void open_gate() {
    {
      const std::lock_guard lock(mutex);
      gate_open = true;
    }
    gate_cv.notify_all();
  }

  // For the C functions below.
  mutable std::mutex mutex;
  std::condition_variable gate_cv;
  bool gate_open = false;                          // guarded by mutex
  std::vector<std::string> looked_up_;             // guarded by mutex
  std::map<std::string, int> calls_;               // guarded by mutex: calls per bus id, lookups included
  std::map<const FakeNvmlGpu*, std::string> ids_;  // guarded by mutex: the bus id of each handle given out
};

// The fake of the running test (FakeNvmlTest sets it).
inline FakeNvml*& current_fake_nvml() {
  static FakeNvml* current = nullptr;
  return current;
}
inline FakeNvml& fake_nvml() { return *current_fake_nvml(); }

namespace fake_nvml_api {

inline FakeNvmlGpu* gpu_of(NvmlDevice device) { return reinterpret_cast<FakeNvmlGpu*>(device); }

inline void count(NvmlDevice device) {
  FakeNvml& fake = fake_nvml();
  const std::lock_guard lock(fake.mutex);
  ++fake.calls_[fake.ids_[gpu_of(device)]];
}

inline NvmlReturn init() {
  ++fake_nvml().init_calls;
  return fake_nvml().init_code;
}
inline NvmlReturn shutdown() {
  ++fake_nvml().shutdown_calls;
  return kNvmlSuccess;
}
inline const char* error_string(NvmlReturn /*code*/) { return "Fake Error Text"; }
inline NvmlReturn handle(const char* bus_id, NvmlDevice* device) {
  FakeNvml& fake = fake_nvml();
  {
    const std::lock_guard lock(fake.mutex);
    fake.looked_up_.emplace_back(bus_id);
  }
  if (fake.lookup_code != kNvmlSuccess) return fake.lookup_code;
  const auto it = fake.gpus.find(bus_id);
  if (it == fake.gpus.end()) return kNvmlErrorNotFound;
  {
    const std::lock_guard lock(fake.mutex);
    fake.ids_[&it->second] = it->first;
  }
  *device = reinterpret_cast<NvmlDevice>(&it->second);
  count(*device);
  return kNvmlSuccess;
}
// A field's answer, without counting the call.
inline NvmlReturn answer(const FakeNvmlGpu* gpu, const std::string& name, unsigned int* value) {
  if (const auto failure = gpu->failures.find(name); failure != gpu->failures.end()) return failure->second;
  const auto it = gpu->values.find(name);
  if (it == gpu->values.end()) return kNvmlErrorNotSupported;
  *value = it->second;
  return kNvmlSuccess;
}
inline NvmlReturn field(NvmlDevice device, const std::string& name, unsigned int* value) {
  count(device);
  return answer(gpu_of(device), name, value);
}
inline NvmlReturn curr_gen(NvmlDevice device, unsigned int* value) {
  count(device);  // before it blocks: a test sees the call that hangs
  if (gpu_of(device)->hangs) {
    FakeNvml& fake = fake_nvml();
    std::unique_lock lock(fake.mutex);
    fake.gate_cv.wait(lock, [&fake] { return fake.gate_open; });
  }
  return answer(gpu_of(device), "curr_gen", value);
}
inline NvmlReturn max_gen(NvmlDevice d, unsigned int* v) { return field(d, "max_gen", v); }
inline NvmlReturn gpu_max_gen(NvmlDevice d, unsigned int* v) { return field(d, "gpu_max_gen", v); }
inline NvmlReturn curr_width(NvmlDevice d, unsigned int* v) { return field(d, "curr_width", v); }
inline NvmlReturn max_width(NvmlDevice d, unsigned int* v) { return field(d, "max_width", v); }
inline NvmlReturn replay(NvmlDevice d, unsigned int* v) { return field(d, "replay", v); }
inline NvmlReturn throughput(NvmlDevice d, NvmlPcieUtilCounter counter, unsigned int* v) {
  // The real enum values matter: they cross the C ABI.
  if (static_cast<int>(counter) == 0) return field(d, "tx", v);
  if (static_cast<int>(counter) == 1) return field(d, "rx", v);
  return kNvmlErrorInvalidArgument;
}
inline NvmlReturn pstate(NvmlDevice d, int* value) {
  count(d);
  const FakeNvmlGpu* gpu = gpu_of(d);
  if (const auto failure = gpu->failures.find("pstate"); failure != gpu->failures.end()) return failure->second;
  *value = gpu->pstate;
  return kNvmlSuccess;
}
inline NvmlReturn name(NvmlDevice d, char* text, unsigned int length) {
  count(d);
  const FakeNvmlGpu* gpu = gpu_of(d);
  if (const auto failure = gpu->failures.find("name"); failure != gpu->failures.end()) return failure->second;
  if (gpu->name.size() + 1 > length) return kNvmlErrorInsufficientSize;
  std::copy(gpu->name.begin(), gpu->name.end(), text);
  text[gpu->name.size()] = '\0';
  return kNvmlSuccess;
}
inline NvmlReturn utilization(NvmlDevice d, NvmlUtilization* rates) {
  unsigned int gpu = 0;
  if (const NvmlReturn code = field(d, "utilization", &gpu); code != kNvmlSuccess) return code;
  rates->gpu = gpu;
  rates->memory = 0;
  return kNvmlSuccess;
}
inline NvmlReturn mig_mode(NvmlDevice d, unsigned int* current, unsigned int* pending) {
  if (const NvmlReturn code = field(d, "mig_mode", current); code != kNvmlSuccess) return code;
  *pending = *current;
  return kNvmlSuccess;
}
inline NvmlReturn p2p_status(NvmlDevice device, NvmlDevice peer, NvmlP2PCapsIndex index, int* status) {
  count(device);
  FakeNvml& fake = fake_nvml();
  if (gpu_of(device)->p2p_hangs) {
    std::unique_lock lock(fake.mutex);
    fake.gate_cv.wait(lock, [&fake] { return fake.gate_open; });
  }
  if (fake.p2p_code != kNvmlSuccess) return fake.p2p_code;
  std::tuple<std::string, std::string, int> key;
  {
    const std::lock_guard lock(fake.mutex);
    key = {fake.ids_[gpu_of(device)], fake.ids_[gpu_of(peer)], static_cast<int>(index)};
  }
  // Only READ (0) and WRITE (1) are asked; anything else is a bad argument.
  if (std::get<2>(key) != 0 && std::get<2>(key) != 1) return kNvmlErrorInvalidArgument;
  const auto it = fake.p2p_status.find(key);
  *status = it == fake.p2p_status.end() ? fake.p2p_default_status : it->second;
  return kNvmlSuccess;
}
inline NvmlReturn conf_compute(NvmlConfComputeSystemState* state) {
  FakeNvml& fake = fake_nvml();
  if (fake.conf_compute_code != kNvmlSuccess) return fake.conf_compute_code;
  state->environment = 2;  // NVML_CC_SYSTEM_ENVIRONMENT_PROD
  state->cc_feature = fake.cc_feature;
  state->dev_tools_mode = 0;
  return kNvmlSuccess;
}

}  // namespace fake_nvml_api

// Every entry of the table, as a current driver exports them.
inline NvmlApi fake_nvml_table() {
  namespace api = fake_nvml_api;
  NvmlApi table;
  table.init_v2 = api::init;
  table.shutdown = api::shutdown;
  table.error_string = api::error_string;
  table.device_get_handle_by_pci_bus_id_v2 = api::handle;
  table.device_get_curr_pcie_link_generation = api::curr_gen;
  table.device_get_max_pcie_link_generation = api::max_gen;
  table.device_get_gpu_max_pcie_link_generation = api::gpu_max_gen;
  table.device_get_curr_pcie_link_width = api::curr_width;
  table.device_get_max_pcie_link_width = api::max_width;
  table.device_get_pcie_replay_counter = api::replay;
  table.device_get_pcie_throughput = api::throughput;
  table.device_get_performance_state = api::pstate;
  table.device_get_name = api::name;
  table.device_get_utilization_rates = api::utilization;
  table.device_get_mig_mode = api::mig_mode;
  table.system_get_conf_compute_state = api::conf_compute;
  table.device_get_p2p_status = api::p2p_status;
  return table;
}

// A fake for the length of a scope, for a test whose fixture is another
// one (LinkSamplerTest): declare it before the session, which calls
// nvmlShutdown on it as it goes.
class ScopedFakeNvml {
 public:
  ScopedFakeNvml() { current_fake_nvml() = &fake_; }
  ~ScopedFakeNvml() {
    fake_.open_gate();
    current_fake_nvml() = nullptr;
  }
  ScopedFakeNvml(const ScopedFakeNvml&) = delete;
  ScopedFakeNvml& operator=(const ScopedFakeNvml&) = delete;

  FakeNvml& fake() { return fake_; }

 private:
  FakeNvml fake_;
};

class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override { current_fake_nvml() = &fake_; }
  void TearDown() override {
    fake_.open_gate();
    // A call left stuck runs the rest of its closure (more fake calls) once
    // the gate opens; the session's count of stuck calls drops when it is
    // done, and only then may the fake go.
    if (stuck_ != nullptr) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (stuck_->load() != 0 && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      EXPECT_EQ(stuck_->load(), 0) << "an NVML call still stuck when the fake went";
    }
    current_fake_nvml() = nullptr;
  }

  FakeNvml& fake() { return fake_; }

  // A session over the fake (or over `table`); throws when it cannot open.
  NvmlLibrary open_session(const NvmlApi& table = fake_nvml_table()) {
    auto library = open_session_or_error(table);
    if (!library) throw std::runtime_error(library.error().message);
    return std::move(library).value();
  }
  Result<NvmlLibrary> open_session_or_error(const NvmlApi& table = fake_nvml_table()) {
    auto library = NvmlLibrary::from_api(table);
    if (library) stuck_ = library.value().stuck_calls();
    return library;
  }

 private:
  FakeNvml fake_;
  std::shared_ptr<std::atomic<int>> stuck_;
};

}  // namespace pcieval::testing
