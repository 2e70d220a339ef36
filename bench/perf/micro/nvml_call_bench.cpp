// Google Benchmark suite for the cost of running NVML calls under a deadline
// (support/deadline_worker.hpp): the hand-off of one call to the reader's
// worker thread and back, against the same call made directly. The NVML
// functions are a fake that answers at once, so what is measured is the
// deadline machinery alone; a real NVML call adds its own microseconds to
// both. Claim checked: the link sampler's read of one GPU costs tens of
// microseconds, not milliseconds, so a 50 ms round on 8 GPUs spends well
// under 1 ms in it.
#include <benchmark/benchmark.h>

#include <chrono>
#include <optional>

#include "support/deadline_worker.hpp"
#include "topology/nvml.hpp"

namespace {

using pcieval::NvmlDevice;
using pcieval::NvmlReturn;

// One device handle; the fake never looks at it.
int fake_device_storage = 0;

NvmlReturn fake_init() { return pcieval::kNvmlSuccess; }
NvmlReturn fake_shutdown() { return pcieval::kNvmlSuccess; }
NvmlReturn fake_handle(const char* /*bus_id*/, NvmlDevice* device) {
  *device = reinterpret_cast<NvmlDevice>(&fake_device_storage);
  return pcieval::kNvmlSuccess;
}
NvmlReturn fake_gen(NvmlDevice /*device*/, unsigned int* value) {
  *value = 5;
  return pcieval::kNvmlSuccess;
}
NvmlReturn fake_width(NvmlDevice /*device*/, unsigned int* value) {
  *value = 16;
  return pcieval::kNvmlSuccess;
}

pcieval::NvmlApi fake_api() {
  pcieval::NvmlApi api;
  api.init_v2 = fake_init;
  api.shutdown = fake_shutdown;
  api.device_get_handle_by_pci_bus_id_v2 = fake_handle;
  api.device_get_curr_pcie_link_generation = fake_gen;
  api.device_get_curr_pcie_link_width = fake_width;
  return api;
}

// The baseline: the two calls of a sampler read, made on this thread.
void bm_nvml_current_link_direct(benchmark::State& state) {
  NvmlDevice device = nullptr;
  fake_handle("", &device);
  auto gen = fake_gen;
  auto width = fake_width;
  benchmark::DoNotOptimize(gen);
  benchmark::DoNotOptimize(width);
  for (auto _ : state) {
    unsigned int value = 0;
    benchmark::DoNotOptimize(gen(device, &value));
    benchmark::DoNotOptimize(width(device, &value));
    benchmark::DoNotOptimize(value);
  }
}
BENCHMARK(bm_nvml_current_link_direct);

// One trivial call through the worker: the hand-off's own cost.
void bm_deadline_worker_call(benchmark::State& state) {
  pcieval::DeadlineWorker worker;
  int value = 0;
  for (auto _ : state) {
    auto result = worker.call([value] { return value + 1; }, std::chrono::seconds(5));
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(bm_deadline_worker_call);

// What the link sampler pays per GPU per round: read_current_link, two NVML
// calls in one hand-off to the reader's worker, under the 5 s deadline.
void bm_nvml_reader_current_link(benchmark::State& state) {
  auto library = pcieval::NvmlLibrary::from_api(fake_api());
  if (!library) {
    state.SkipWithError(library.error().message.c_str());
    return;
  }
  const pcieval::NvmlReader reader(library.value());
  auto address = pcieval::parse_pci_address("0000:17:00.0");
  auto device = reader.find_gpu(address.value());
  if (!device) {
    state.SkipWithError(device.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    const pcieval::NvmlCurrentLink link = reader.read_current_link(device.value());
    benchmark::DoNotOptimize(link);
  }
}
BENCHMARK(bm_nvml_reader_current_link);

}  // namespace
