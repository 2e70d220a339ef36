// pcieval-copy-reference: a deliberately plain host<->device copy benchmark,
// the yardstick for pcieval's h2d_ce and d2h_ce (issue 17). It shares no code
// with pcieval's engine on purpose: one pinned buffer from cudaHostAlloc, one
// device buffer, N cudaMemcpyAsync back to back between two events on one
// stream, no latch, no verification, GB/s = 1e9 bytes per second. What it
// measures is what the copy engine gives a naive program; pcieval's numbers
// (latched, event-timed, verified) must reach at least 0.97 of it, or the
// engine's own machinery costs bandwidth.
//
// --register pins the buffer as pcieval does instead: anonymous memory
// (4 KiB pages where the kernel gives them) registered with cudaHostRegister,
// so the ratio measures pcieval's machinery, not allocation and placement.
// Where the buffer lives is the caller's: gpu-check runs it under numactl,
// bound to the GPU's NUMA node, as pcieval binds its buffers.
//
//   pcieval-copy-reference [--device N] [--size-bytes B] [--copies N] [--trials N] [--warmup N] [--register]
//
// Prints one JSON object on stdout (the medians and every trial). Exit codes:
// 0 measured, 2 bad arguments, 3 no usable GPU or a CUDA error (stderr says
// which), as pcieval's own "inconclusive".
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitNoMeasurement = 3;

struct Options {
  int device = 0;
  std::size_t size_bytes = std::size_t{256} << 20;  // pcieval's verdict size
  int copies = 4;
  int trials = 5;
  int warmup = 1;
  bool register_host = false;  // --register: mmap + cudaHostRegister, as pcieval
};

// A CUDA failure, carried to main as a value.
struct Failure {
  std::string call;
  cudaError_t code = cudaSuccess;
};

// RAII for the four handles the benchmark owns.
struct HostFree {
  void operator()(void* p) const { static_cast<void>(cudaFreeHost(p)); }
};
// A registered anonymous mapping: unregistered, then unmapped.
struct MappedRegistration {
  MappedRegistration() = default;
  MappedRegistration(const MappedRegistration&) = delete;
  MappedRegistration& operator=(const MappedRegistration&) = delete;
  ~MappedRegistration() {
    if (registered) static_cast<void>(cudaHostUnregister(data));
    if (data != nullptr) munmap(data, bytes);
  }
  void* data = nullptr;
  std::size_t bytes = 0;
  bool registered = false;
};
struct DeviceFree {
  void operator()(void* p) const { static_cast<void>(cudaFree(p)); }
};
struct StreamDestroy {
  void operator()(CUstream_st* s) const { static_cast<void>(cudaStreamDestroy(s)); }
};
struct EventDestroy {
  void operator()(CUevent_st* e) const { static_cast<void>(cudaEventDestroy(e)); }
};
using HostBuffer = std::unique_ptr<void, HostFree>;
using DeviceMemory = std::unique_ptr<void, DeviceFree>;
using StreamHandle = std::unique_ptr<CUstream_st, StreamDestroy>;
using EventHandle = std::unique_ptr<CUevent_st, EventDestroy>;

#define REFERENCE_TRY(call)                     \
  do {                                          \
    const cudaError_t reference_code = (call);  \
    if (reference_code != cudaSuccess) {        \
      failure = Failure{#call, reference_code}; \
      return false;                             \
    }                                           \
  } while (false)

struct Bench {
  MappedRegistration mapped;  // --register
  HostBuffer host;            // otherwise
  void* host_data = nullptr;
  DeviceMemory device;
  StreamHandle stream;
  EventHandle start;
  EventHandle stop;
  Failure failure;

  bool set_up(const Options& options) {
    REFERENCE_TRY(cudaSetDevice(options.device));
    if (options.register_host) {
      void* m = mmap(nullptr, options.size_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) {
        failure = Failure{"mmap", cudaErrorMemoryAllocation};
        return false;
      }
      mapped.data = m;
      mapped.bytes = options.size_bytes;
      // Touched first, so the pages exist (on the node numactl binds to)
      // before they are pinned, as pcieval's buffers are.
      std::memset(m, 0x5a, options.size_bytes);
      REFERENCE_TRY(cudaHostRegister(m, options.size_bytes, cudaHostRegisterDefault));
      mapped.registered = true;
      host_data = m;
    } else {
      void* h = nullptr;
      REFERENCE_TRY(cudaHostAlloc(&h, options.size_bytes, cudaHostAllocDefault));
      host.reset(h);
      std::memset(h, 0x5a, options.size_bytes);  // touch every page before timing
      host_data = h;
    }
    void* d = nullptr;
    REFERENCE_TRY(cudaMalloc(&d, options.size_bytes));
    device.reset(d);
    cudaStream_t s = nullptr;
    REFERENCE_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    stream.reset(s);
    cudaEvent_t e0 = nullptr;
    REFERENCE_TRY(cudaEventCreate(&e0));
    start.reset(e0);
    cudaEvent_t e1 = nullptr;
    REFERENCE_TRY(cudaEventCreate(&e1));
    stop.reset(e1);
    return true;
  }

  // One trial: `copies` copies between the two events; GB/s or false.
  bool trial(const Options& options, bool to_device, double& gbps) {
    void* destination = to_device ? device.get() : host_data;
    const void* source = to_device ? host_data : device.get();
    const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    REFERENCE_TRY(cudaEventRecord(start.get(), stream.get()));
    for (int i = 0; i < options.copies; ++i) {
      REFERENCE_TRY(cudaMemcpyAsync(destination, source, options.size_bytes, kind, stream.get()));
    }
    REFERENCE_TRY(cudaEventRecord(stop.get(), stream.get()));
    REFERENCE_TRY(cudaEventSynchronize(stop.get()));
    float ms = 0;
    REFERENCE_TRY(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    if (!(ms > 0)) {
      failure = Failure{"cudaEventElapsedTime (the timer did not advance)", cudaErrorUnknown};
      return false;
    }
    gbps = static_cast<double>(options.size_bytes) * options.copies / (static_cast<double>(ms) * 1e-3) / 1e9;
    return true;
  }
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool parse_int(const char* text, long long min, long long& out) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < min) return false;
  out = value;
  return true;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "pcieval-copy-reference: %s\nusage: pcieval-copy-reference [--device N] [--size-bytes B] "
               "[--copies N] [--trials N] [--warmup N] [--register]\n",
               why);
  return kExitUsage;
}

void print_trials(const char* name, const std::vector<double>& trials) {
  std::printf("  \"%s\": [", name);
  for (std::size_t i = 0; i < trials.size(); ++i) std::printf("%s%.4f", i == 0 ? "" : ", ", trials[i]);
  std::printf("],\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--register") {
      options.register_host = true;
      continue;
    }
    if (i + 1 >= argc) return usage(("missing value after " + flag).c_str());
    long long value = 0;
    if (!parse_int(argv[++i], flag == "--device" || flag == "--warmup" ? 0 : 1, value)) {
      return usage(("bad value for " + flag).c_str());
    }
    if (flag == "--device") {
      options.device = static_cast<int>(value);
    } else if (flag == "--size-bytes") {
      options.size_bytes = static_cast<std::size_t>(value);
    } else if (flag == "--copies") {
      options.copies = static_cast<int>(value);
    } else if (flag == "--trials") {
      options.trials = static_cast<int>(value);
    } else if (flag == "--warmup") {
      options.warmup = static_cast<int>(value);
    } else {
      return usage(("unknown flag " + flag).c_str());
    }
  }

  Bench bench;
  std::vector<double> h2d;
  std::vector<double> d2h;
  bool ok = bench.set_up(options);
  for (int t = 0; ok && t < options.warmup + options.trials; ++t) {
    double up = 0;
    double down = 0;
    ok = bench.trial(options, true, up) && bench.trial(options, false, down);
    if (ok && t >= options.warmup) {
      h2d.push_back(up);
      d2h.push_back(down);
    }
  }
  if (!ok) {
    std::fprintf(stderr, "pcieval-copy-reference: %s failed: %s (%s)\n", bench.failure.call.c_str(),
                 cudaGetErrorName(bench.failure.code), cudaGetErrorString(bench.failure.code));
    return kExitNoMeasurement;
  }

  char bus_id[32] = {};
  cudaDeviceProp properties{};
  const bool named = cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), options.device) == cudaSuccess &&
                     cudaGetDeviceProperties(&properties, options.device) == cudaSuccess;
  std::printf("{\n  \"tool\": \"pcieval-copy-reference\",\n");
  std::printf("  \"device\": %d,\n  \"pci_bus_id\": \"%s\",\n  \"name\": \"%s\",\n", options.device,
              named ? bus_id : "", named ? properties.name : "");
  std::printf("  \"host_memory\": \"%s\",\n", options.register_host ? "registered" : "host_alloc");
  std::printf("  \"size_bytes\": %zu,\n  \"copies_per_trial\": %d,\n", options.size_bytes, options.copies);
  print_trials("h2d_trials_gbps", h2d);
  print_trials("d2h_trials_gbps", d2h);
  std::printf("  \"h2d_median_gbps\": %.4f,\n  \"d2h_median_gbps\": %.4f\n}\n", median(h2d), median(d2h));
  return 0;
}
