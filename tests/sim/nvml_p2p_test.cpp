// The simulated node's answers about peer access, through the two libraries
// pcieval loads (dlopen, as topology/ and kernels/ do): NVML's
// nvmlDeviceGetP2PStatus and CUDA's cuDeviceCanAccessPeer agree on every
// pair, and a pair the scenario lists in no_peer_access has none, both ways.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

// nvml.h's values.
constexpr int kNvmlSuccess = 0;
constexpr int kCapsRead = 0;
constexpr int kCapsWrite = 1;
constexpr int kCapsNvlink = 2;
constexpr int kStatusOk = 0;
constexpr int kStatusNotSupported = 5;

using NvmlInit = int (*)();
using NvmlHandleByBusId = int (*)(const char*, void**);
using NvmlP2pStatus = int (*)(void*, void*, int, int*);
using CuInit = int (*)(unsigned int);
using CuCanAccessPeer = int (*)(int*, int, int);
using CuByBusId = int (*)(int*, const char*);

template <typename T>
T symbol(void* library, const char* name) {
  return reinterpret_cast<T>(dlsym(library, name));
}

TEST(SimulatedPeerAccess, NvmlP2pStatusAndCudaAgreeAndAPairWithoutPeerAccessHasNoneEitherWay) {
  const fs::path scenario = fs::temp_directory_path() / ("pcieval-sim-p2p-" + std::to_string(::getpid()) + ".json");
  std::ofstream(scenario) << R"({"machine": ")" << (fs::path(PCIEVAL_FIXTURES_DIR) / "hgx_a100_8gpu_gen4").string()
                          << R"(", "no_peer_access": [["0000:a4:00.0", "0000:03:00.0"]]})";
  // The node reads these once, at its first use in this process: here.
  ::setenv("PCIEVAL_SIM_SCENARIO", scenario.c_str(), 1);
  ::unsetenv("PCIEVAL_SIM_SYSFS");
  const fs::path sim = fs::path(PCIEVAL_BINARY).parent_path() / "sim";
  void* nvml = dlopen((sim / "libpcieval_sim_nvml.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  void* cuda = dlopen((sim / "libpcieval_sim_cuda.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(nvml, nullptr) << dlerror();
  ASSERT_NE(cuda, nullptr) << dlerror();
  const auto init = symbol<NvmlInit>(nvml, "nvmlInit_v2");
  const auto handle_of = symbol<NvmlHandleByBusId>(nvml, "nvmlDeviceGetHandleByPciBusId_v2");
  const auto p2p_status = symbol<NvmlP2pStatus>(nvml, "nvmlDeviceGetP2PStatus");
  const auto cu_init = symbol<CuInit>(cuda, "cuInit");
  const auto can_access = symbol<CuCanAccessPeer>(cuda, "cuDeviceCanAccessPeer");
  const auto device_of = symbol<CuByBusId>(cuda, "cuDeviceGetByPCIBusId");
  ASSERT_TRUE(init && handle_of && p2p_status && cu_init && can_access && device_of);
  ASSERT_EQ(init(), kNvmlSuccess);
  ASSERT_EQ(cu_init(0), 0);

  const char* gpus[] = {"0000:03:00.0", "0000:04:00.0", "0000:23:00.0", "0000:a4:00.0"};
  for (const char* a : gpus) {
    for (const char* b : gpus) {
      if (std::string(a) == b) continue;
      void* first = nullptr;
      void* second = nullptr;
      ASSERT_EQ(handle_of(a, &first), kNvmlSuccess);
      ASSERT_EQ(handle_of(b, &second), kNvmlSuccess);
      int cuda_a = -1;
      int cuda_b = -1;
      ASSERT_EQ(device_of(&cuda_a, a), 0);
      ASSERT_EQ(device_of(&cuda_b, b), 0);
      int can = -1;
      ASSERT_EQ(can_access(&can, cuda_a, cuda_b), 0);
      const bool listed = (std::string(a) == "0000:03:00.0" && std::string(b) == "0000:a4:00.0") ||
                          (std::string(a) == "0000:a4:00.0" && std::string(b) == "0000:03:00.0");
      EXPECT_EQ(can, listed ? 0 : 1) << a << " " << b;
      for (int caps : {kCapsRead, kCapsWrite}) {
        int status = -1;
        ASSERT_EQ(p2p_status(first, second, caps, &status), kNvmlSuccess);
        EXPECT_EQ(status, can == 1 ? kStatusOk : kStatusNotSupported) << a << " " << b << " caps " << caps;
      }
      int nvlink = -1;
      ASSERT_EQ(p2p_status(first, second, kCapsNvlink, &nvlink), kNvmlSuccess);
      EXPECT_EQ(nvlink, kStatusNotSupported);  // no simulated GPU has NVLink
    }
  }
  fs::remove(scenario);
}

}  // namespace
