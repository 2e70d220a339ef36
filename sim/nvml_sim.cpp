// libpcieval_sim_nvml.so: the NVML entry points pcieval loads
// (topology/nvml_library.cpp), answering from the simulated node (node.hpp):
// the link each GPU runs at this moment (its idle link when idle, the
// scenario's fault once it fired: the same the node writes into its sysfs
// tree), utilisation, MIG mode, P-state. Declared from NVML's C ABI.
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/node.hpp"

namespace {

using pcieval::sim::FaultKind;
using pcieval::sim::Node;

// nvmlReturn_t values (nvml.h).
constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotFound = 6;
constexpr int kInsufficientSize = 7;
constexpr int kDriverNotLoaded = 9;
constexpr int kGpuIsLost = 15;

struct Handle {
  int ordinal = 0;
};

Handle* handles() {
  static Handle* all = [] {
    auto* made = new Handle[64];
    for (int i = 0; i < 64; ++i) made[i].ordinal = i;
    return made;
  }();
  return all;
}

Node* g_node = nullptr;

// The node, and whether the GPU behind `device` still answers.
int gpu_of(void* device, int& ordinal) {
  if (g_node == nullptr) return kUninitialized;
  if (device == nullptr) return kInvalidArgument;
  ordinal = static_cast<Handle*>(device)->ordinal;
  if (ordinal < 0 || ordinal >= static_cast<int>(g_node->devices().size())) return kInvalidArgument;
  return g_node->lost(ordinal) ? kGpuIsLost : kSuccess;
}

const pcieval::sim::Device& device_of(int ordinal) { return g_node->devices()[static_cast<std::size_t>(ordinal)]; }

// One unsigned reading of a GPU, after NVML's checks: a live handle and
// somewhere to write it.
template <typename Reading>
int answer(void* device, unsigned int* value, Reading reading) {
  int ordinal = 0;
  if (const int code = gpu_of(device, ordinal); code != kSuccess) return code;
  if (value == nullptr) return kInvalidArgument;
  *value = static_cast<unsigned int>(reading(ordinal));
  return kSuccess;
}

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
struct ConfComputeState {
  unsigned int environment;
  unsigned int cc_feature;
  unsigned int dev_tools_mode;
};

}  // namespace

extern "C" {

int nvmlInit_v2() {
  auto node = Node::get();
  if (!node) {
    std::fprintf(stderr, "pcieval-sim: NVML: %s\n", node.error().message.c_str());
    return kDriverNotLoaded;
  }
  g_node = node.value();
  return kSuccess;
}

int nvmlShutdown() { return kSuccess; }

const char* nvmlErrorString(int code) {
  switch (code) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    case kGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (g_node == nullptr) return kUninitialized;
  if (bus_id == nullptr || device == nullptr) return kInvalidArgument;
  // NVML's form has an 8-digit domain: "00000000:17:00.0".
  std::string text(bus_id);
  if (text.size() > 12 && text.find(':') == 8) text = text.substr(4);
  auto address = pcieval::parse_pci_address(text);
  if (!address) return kInvalidArgument;
  for (const auto& simulated : g_node->devices()) {
    if (simulated.address == address.value()) {
      *device = &handles()[simulated.ordinal];
      return kSuccess;
    }
  }
  return kNotFound;
}

int nvmlDeviceGetCurrPcieLinkGeneration(void* device, unsigned int* value) {
  return answer(device, value,
                [](int ordinal) { return pcieval::generation_number(g_node->current_link(ordinal).gen); });
}

int nvmlDeviceGetCurrPcieLinkWidth(void* device, unsigned int* value) {
  return answer(device, value, [](int ordinal) { return g_node->current_link(ordinal).width; });
}

int nvmlDeviceGetMaxPcieLinkGeneration(void* device, unsigned int* value) {
  return answer(device, value,
                [](int ordinal) { return pcieval::generation_number(device_of(ordinal).system_max_link.gen); });
}

int nvmlDeviceGetGpuMaxPcieLinkGeneration(void* device, unsigned int* value) {
  return answer(device, value, [](int ordinal) { return pcieval::generation_number(device_of(ordinal).max_link.gen); });
}

int nvmlDeviceGetMaxPcieLinkWidth(void* device, unsigned int* value) {
  return answer(device, value, [](int ordinal) { return device_of(ordinal).system_max_link.width; });
}

int nvmlDeviceGetPcieReplayCounter(void* device, unsigned int* value) {
  return answer(device, value, [](int /*ordinal*/) { return 0; });
}

int nvmlDeviceGetPcieThroughput(void* device, int counter, unsigned int* value) {
  int ordinal = 0;
  if (const int code = gpu_of(device, ordinal); code != kSuccess) return code;
  if (counter != 0 && counter != 1) return kInvalidArgument;
  *value = 560;  // an idle GPU's driver chatter, KB/s
  return kSuccess;
}

int nvmlDeviceGetPerformanceState(void* device, int* state) {
  int ordinal = 0;
  if (const int code = gpu_of(device, ordinal); code != kSuccess) return code;
  *state = g_node->recently_busy(ordinal) ? 0 : 8;
  return kSuccess;
}

int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  int ordinal = 0;
  if (const int code = gpu_of(device, ordinal); code != kSuccess) return code;
  const std::string& text = device_of(ordinal).name;
  if (text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(name, text.c_str(), text.size() + 1);
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(void* device, Utilization* utilization) {
  int ordinal = 0;
  if (const int code = gpu_of(device, ordinal); code != kSuccess) return code;
  utilization->gpu = static_cast<unsigned int>(g_node->busy_percent(ordinal));
  utilization->memory = 0;
  return kSuccess;
}

int nvmlDeviceGetMigMode(void* device, unsigned int* current, unsigned int* pending) {
  int ordinal = 0;
  if (const int code = gpu_of(device, ordinal); code != kSuccess) return code;
  *current = g_node->has_fault(ordinal, FaultKind::kMig) ? 1U : 0U;
  *pending = *current;
  return kSuccess;
}

// nvmlDeviceGetP2PStatus(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t,
// nvmlGpuP2PStatus_t*): the answer CUDA gives (cuDeviceCanAccessPeer), so
// the two never disagree. Caps: READ 0, WRITE 1, NVLINK 2, ATOMICS 3, PROP
// (PCI) 4; status: OK 0 ... NOT_SUPPORTED 5, UNKNOWN 6. No simulated GPU has
// NVLink, and PCIe atomics between peers are not modelled: not supported.
int nvmlDeviceGetP2PStatus(void* device, void* peer, int caps_index, int* status) {
  constexpr int kP2pStatusOk = 0;
  constexpr int kP2pStatusNotSupported = 5;
  int ordinal = 0;
  int peer_ordinal = 0;
  if (const int code = gpu_of(device, ordinal); code != kSuccess) return code;
  if (const int code = gpu_of(peer, peer_ordinal); code != kSuccess) return code;
  if (status == nullptr || caps_index < 0 || caps_index > 5) return kInvalidArgument;
  const bool pcie_capability = caps_index == 0 || caps_index == 1 || caps_index == 4;
  *status = pcie_capability && g_node->peer_access(ordinal, peer_ordinal) ? kP2pStatusOk : kP2pStatusNotSupported;
  return kSuccess;
}

int nvmlSystemGetConfComputeState(ConfComputeState* state) {
  if (g_node == nullptr) return kUninitialized;
  *state = ConfComputeState{0, 0, 0};
  return kSuccess;
}

}  // extern "C"
