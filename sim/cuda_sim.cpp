// libpcieval_sim_cuda.so: the CUDA driver API entry points pcieval loads
// (kernels/cuda_driver.cpp), implemented over the simulated node (node.hpp).
// Memory is this process's: device buffers are host allocations whose
// address is their device address (unified addressing), so copies move real
// bytes and verification is real. pcieval's kernels run as their C++
// equivalents, looked up by the name the PTX module declares. Where the real
// driver returns an error, so does this, and a broken contract (a destroyed
// stream used, an event read before it was recorded, a copy outside any
// allocation, a grid the device cannot run) is also said on stderr
// (contract_violation). Declared here from the driver's C ABI, not from
// pcieval's own declarations, so the two are not made to agree by sharing.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "sim/cuda_hooks.hpp"
#include "sim/cuda_results.hpp"
#include "sim/kernels_sim.hpp"
#include "sim/memory_sim.hpp"
#include "sim/node.hpp"

namespace {

using pcieval::sim::Node;
using pcieval::sim::Worker;
using Clock = std::chrono::steady_clock;
using namespace pcieval::sim::curesult;  // NOLINT: the CUresult values, as cuda.h names them

// The driver this simulates: R535's CUDA 12.2 and the newest PTX ISA it
// compiles. PCIEVAL_SIM_DRIVER_VERSION (12020) and PCIEVAL_SIM_DRIVER_PTX
// (82) change them, to simulate another driver.
int driver_version() {
  const char* value = std::getenv("PCIEVAL_SIM_DRIVER_VERSION");
  return value != nullptr && *value != '\0' ? std::atoi(value) : 12020;
}
int driver_ptx() {
  const char* value = std::getenv("PCIEVAL_SIM_DRIVER_PTX");
  return value != nullptr && *value != '\0' ? std::atoi(value) : 82;
}

std::string& node_error() {
  static std::string* text = new std::string();
  return *text;
}

Node* node() { return Node::get().value(); }

// --- contexts

struct Context {
  int ordinal = 0;
  std::atomic<int> sticky{kSuccess};  // a sticky error: every later call of the context returns it
};

std::mutex g_mutex;  // guards the registries below
std::map<int, Context*> g_contexts;
thread_local Context* g_current = nullptr;

bool known_context(const Context* context) {
  const std::lock_guard lock(g_mutex);
  return std::any_of(g_contexts.begin(), g_contexts.end(),
                     [context](const auto& entry) { return entry.second == context; });
}

// --- memory

pcieval::sim::MemoryMap& memory() { return pcieval::sim::simulated_memory(); }

using pcieval::sim::Range;
using pcieval::sim::Side;

// --- streams

struct Stream {
  Context* context = nullptr;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> ops;
  bool executing = false;
  Worker worker;

  void run() {
    for (;;) {
      std::function<void()> op;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [this] { return !ops.empty(); });
        op = std::move(ops.front());
        executing = true;
      }
      worker.set_running();
      // After a sticky error nothing more of the context runs.
      if (context->sticky.load() == kSuccess) op();
      {
        const std::lock_guard lock(mutex);
        ops.pop_front();
        executing = false;
        worker.set_pending(!ops.empty());
      }
      worker.set_idle();
    }
  }

  void enqueue(std::function<void()> op) {
    {
      const std::lock_guard lock(mutex);
      ops.push_back(std::move(op));
      worker.set_pending(true);
    }
    wake.notify_one();
  }

  bool idle() {
    const std::lock_guard lock(mutex);
    return ops.empty() && !executing;
  }
};
std::set<Stream*> g_streams;  // live streams, guarded by g_mutex

struct Event {
  Context* context = nullptr;
  std::atomic<std::uint64_t> recorded{0};
  std::atomic<std::uint64_t> completed{0};
  std::atomic<std::int64_t> stamp_ns{0};
};
std::set<Event*> g_events;  // live events, guarded by g_mutex

struct Module {
  Context* context = nullptr;
  std::string image;
};
struct Function {
  Module* module = nullptr;
  pcieval::sim::Kernel kernel = pcieval::sim::Kernel::kPoison;
};
std::set<Function*> g_functions;  // guarded by g_mutex

int contract(const std::string& what, int code) {
  pcieval::sim::contract_violation(what);
  return code;
}

Stream* live_stream(void* handle) {
  auto* stream = static_cast<Stream*>(handle);
  const std::lock_guard lock(g_mutex);
  return g_streams.count(stream) != 0 ? stream : nullptr;
}

Event* live_event(void* handle) {
  auto* event = static_cast<Event*>(handle);
  const std::lock_guard lock(g_mutex);
  return g_events.count(event) != 0 ? event : nullptr;
}

// The checks every stream operation makes: a live stream, and for a kernel
// launch one of the current context (CUDA's rule: copies, events and waits
// may go to a stream of another device than the current one; launches may
// not). Returns the stream, or null with `code` set.
Stream* stream_for_call(void* handle, const char* call, int& code, bool current_context_only = false) {
  if (g_current == nullptr) {
    code = contract(std::string(call) + " with no current context", kInvalidContext);
    return nullptr;
  }
  Stream* stream = live_stream(handle);
  if (stream == nullptr) {
    code = contract(std::string(call) + " on a stream that does not exist or was destroyed", kInvalidHandle);
    return nullptr;
  }
  if (current_context_only && stream->context != g_current) {
    code = contract(std::string(call) + " on a stream of device " + std::to_string(stream->context->ordinal) +
                        " while device " + std::to_string(g_current->ordinal) + "'s context is current",
                    kInvalidContext);
    return nullptr;
  }
  code = stream->context->sticky.load();
  return code == kSuccess ? stream : nullptr;
}

// Moves `bytes` as a copy of device `ordinal` in `to_device`'s direction on
// the timeline (stream worker's thread), after the bytes themselves.
void timed_transfer(Stream& stream, bool to_device, double bytes, double efficiency) {
  Node* sim = node();
  auto flow = sim->start_flow(stream.context->ordinal, to_device, bytes, efficiency);
  sim->wait(stream.worker, [flow] { return flow->done.load(std::memory_order_acquire); });
}

void corrupt_if_faulty(int ordinal, void* destination, std::size_t bytes) {
  // Bulk copies only: a corrupted 8-byte readback would garble the count of
  // the corruption itself.
  if (bytes >= 4096 && node()->has_fault(ordinal, pcieval::sim::FaultKind::kCorruptCopy)) {
    static_cast<std::uint32_t*>(destination)[bytes / 8] ^= 0x00010000U;
  }
}

int copy(void* destination, const void* source, std::size_t bytes, void* stream_handle, bool to_device,
         const char* call) {
  int code = kSuccess;
  Stream* stream = stream_for_call(stream_handle, call, code);
  if (stream == nullptr) return code;
  const int ordinal = stream->context->ordinal;
  const auto device_side = reinterpret_cast<std::uintptr_t>(to_device ? destination : source);
  const auto host_side = reinterpret_cast<std::uintptr_t>(to_device ? source : destination);
  if (memory().side_of(ordinal, device_side, bytes) != Side::kDevice) {
    return contract(std::string(call) + ": " + std::to_string(bytes) + " bytes at the device address are not device " +
                        std::to_string(ordinal) + "'s memory",
                    kInvalidValue);
  }
  const double efficiency = node()->devices()[static_cast<std::size_t>(ordinal)].spec.copy_efficiency;
  if (memory().side_of(ordinal, host_side, bytes) == Side::kPinnedHost) {
    stream->enqueue([stream, destination, source, bytes, to_device, ordinal, efficiency] {
      std::memcpy(destination, source, bytes);
      corrupt_if_faulty(ordinal, destination, bytes);
      timed_transfer(*stream, to_device, static_cast<double>(bytes), efficiency);
    });
    return kSuccess;
  }
  // Pageable host memory: the driver stages it through its own pinned
  // buffers and the call returns when the data has moved; the host times it.
  while (!stream->idle()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  const auto started = Clock::now();
  std::memcpy(destination, source, bytes);
  corrupt_if_faulty(ordinal, destination, bytes);
  const double seconds = node()->pageable_seconds(ordinal, to_device, static_cast<double>(bytes));
  std::this_thread::sleep_until(started +
                                std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
  return kSuccess;
}

bool valid_device(int device) {
  auto sim = Node::get();
  return sim && device >= 0 && device < static_cast<int>(sim.value()->devices().size());
}

}  // namespace

namespace pcieval::sim {

int current_device() { return g_current == nullptr ? -1 : g_current->ordinal; }

int stream_device(void* stream) {
  Stream* live = live_stream(stream);
  return live == nullptr ? -1 : live->context->ordinal;
}

bool enqueue_on_stream(void* stream, std::function<void(Worker&)> op) {
  Stream* live = live_stream(stream);
  if (live == nullptr) return false;
  live->enqueue([live, op = std::move(op)] { op(live->worker); });
  return true;
}

int context_device(void* context) {
  auto* known = static_cast<Context*>(context);
  return known_context(known) ? known->ordinal : -1;
}

MemoryMap& simulated_memory() {
  static auto* map = new MemoryMap();  // never destroyed: workers may use it at exit
  return *map;
}

}  // namespace pcieval::sim

extern "C" {

int cuInit(unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  auto sim = Node::get();
  if (!sim) {
    node_error() = sim.error().message;
    return kNoDevice;
  }
  return kSuccess;
}

int cuDriverGetVersion(int* version) {
  if (version == nullptr) return kInvalidValue;
  *version = driver_version();
  return kSuccess;
}

int cuGetErrorName(int code, const char** name) {
  const pcieval::sim::ErrorText* known = pcieval::sim::error_text(code);
  if (name == nullptr || known == nullptr) return kInvalidValue;
  *name = known->name;
  return kSuccess;
}

int cuGetErrorString(int code, const char** text) {
  const pcieval::sim::ErrorText* known = pcieval::sim::error_text(code);
  if (text == nullptr || known == nullptr) return kInvalidValue;
  if (code == kNoDevice) {
    // The simulator says why it has no device: the scenario's error.
    static std::string* no_device = new std::string();
    *no_device = std::string(known->text) + " (simulator: " + node_error() + ")";
    *text = no_device->c_str();
    return kSuccess;
  }
  *text = known->text;
  return kSuccess;
}

int cuDeviceGetCount(int* count) {
  if (count == nullptr) return kInvalidValue;
  auto sim = Node::get();
  if (!sim) return kNotInitialized;
  *count = static_cast<int>(sim.value()->devices().size());
  return kSuccess;
}

int cuDeviceGet(int* device, int ordinal) {
  if (device == nullptr) return kInvalidValue;
  if (!valid_device(ordinal)) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

int cuDeviceGetName(char* name, int length, int device) {
  if (name == nullptr || length <= 0) return kInvalidValue;
  if (!valid_device(device)) return kInvalidDevice;
  std::snprintf(name, static_cast<std::size_t>(length), "%s",
                node()->devices()[static_cast<std::size_t>(device)].name.c_str());
  return kSuccess;
}

int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (value == nullptr) return kInvalidValue;
  if (!valid_device(device)) return kInvalidDevice;
  switch (attribute) {
    case 16:  // MULTIPROCESSOR_COUNT: an H100 SXM's
      *value = 132;
      return kSuccess;
    case 39:  // MAX_THREADS_PER_MULTIPROCESSOR
      *value = 2048;
      return kSuccess;
    case 75:  // COMPUTE_CAPABILITY_MAJOR
      *value = 9;
      return kSuccess;
    case 76:  // COMPUTE_CAPABILITY_MINOR
      *value = 0;
      return kSuccess;
    default:
      return contract("cuDeviceGetAttribute of attribute " + std::to_string(attribute) + ", which the simulator lacks",
                      kInvalidValue);
  }
}

int cuDeviceGetByPCIBusId(int* device, const char* bus_id) {
  if (device == nullptr || bus_id == nullptr) return kInvalidValue;
  auto address = pcieval::parse_pci_address(bus_id);
  auto sim = Node::get();
  if (!address || !sim) return kInvalidValue;
  for (const auto& simulated : sim.value()->devices()) {
    if (simulated.address == address.value()) {
      *device = simulated.ordinal;
      return kSuccess;
    }
  }
  return kInvalidDevice;
}

int cuDeviceGetPCIBusId(char* bus_id, int length, int device) {
  if (bus_id == nullptr || length <= 0) return kInvalidValue;
  if (!valid_device(device)) return kInvalidDevice;
  std::snprintf(bus_id, static_cast<std::size_t>(length), "%s",
                pcieval::to_string(node()->devices()[static_cast<std::size_t>(device)].address).c_str());
  return kSuccess;
}

int cuDevicePrimaryCtxRetain(void** context, int device) {
  if (context == nullptr) return kInvalidValue;
  if (!valid_device(device)) return kInvalidDevice;
  const std::lock_guard lock(g_mutex);
  Context*& made = g_contexts[device];
  if (made == nullptr) {
    made = new Context();
    made->ordinal = device;
  }
  *context = made;
  return kSuccess;
}

int cuCtxSetCurrent(void* context) {
  auto* chosen = static_cast<Context*>(context);
  if (chosen != nullptr && !known_context(chosen))
    return contract("cuCtxSetCurrent of an unknown context", kInvalidContext);
  g_current = chosen;
  return kSuccess;
}

int cuStreamCreate(void** handle, unsigned int flags) {
  if (handle == nullptr || flags > 1) return kInvalidValue;
  if (g_current == nullptr) return contract("cuStreamCreate with no current context", kInvalidContext);
  auto* stream = new Stream();  // never freed: its worker and the timeline keep pointers to it
  stream->context = g_current;
  node()->add_worker(&stream->worker);
  std::thread([stream] { stream->run(); }).detach();
  {
    const std::lock_guard lock(g_mutex);
    g_streams.insert(stream);
  }
  *handle = stream;
  return kSuccess;
}

int cuStreamDestroy_v2(void* handle) {
  const std::lock_guard lock(g_mutex);
  if (g_streams.erase(static_cast<Stream*>(handle)) == 0) {
    return contract("cuStreamDestroy of a stream that does not exist or was destroyed", kInvalidHandle);
  }
  return kSuccess;  // queued work still runs, as the driver's does
}

int cuStreamQuery(void* handle) {
  Stream* stream = live_stream(handle);
  if (stream == nullptr)
    return contract("cuStreamQuery on a stream that does not exist or was destroyed", kInvalidHandle);
  if (const int sticky = stream->context->sticky.load(); sticky != kSuccess) return sticky;
  return stream->idle() ? kSuccess : kNotReady;
}

int cuStreamWaitEvent(void* stream_handle, void* event_handle, unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  int code = kSuccess;
  Stream* stream = stream_for_call(stream_handle, "cuStreamWaitEvent", code);
  if (stream == nullptr) return code;
  Event* event = live_event(event_handle);
  if (event == nullptr)
    return contract("cuStreamWaitEvent on an event that does not exist or was destroyed", kInvalidHandle);
  // Waits for the event's latest record, as it stands now (events of any
  // device); an event never recorded is no wait at all.
  const std::uint64_t generation = event->recorded.load();
  if (generation == 0) return kSuccess;
  stream->enqueue([stream, event, generation] {
    node()->wait(stream->worker, [event, generation] { return event->completed.load() >= generation; });
  });
  return kSuccess;
}

int cuEventCreate(void** handle, unsigned int flags) {
  if (handle == nullptr || flags != 0) return kInvalidValue;
  if (g_current == nullptr) return contract("cuEventCreate with no current context", kInvalidContext);
  auto* event = new Event();  // never freed: a queued record may still stamp it
  event->context = g_current;
  const std::lock_guard lock(g_mutex);
  g_events.insert(event);
  *handle = event;
  return kSuccess;
}

int cuEventDestroy_v2(void* handle) {
  const std::lock_guard lock(g_mutex);
  if (g_events.erase(static_cast<Event*>(handle)) == 0) {
    return contract("cuEventDestroy of an event that does not exist or was destroyed", kInvalidHandle);
  }
  return kSuccess;
}

int cuEventRecord(void* event_handle, void* stream_handle) {
  int code = kSuccess;
  Stream* stream = stream_for_call(stream_handle, "cuEventRecord", code);
  if (stream == nullptr) return code;
  Event* event = live_event(event_handle);
  if (event == nullptr)
    return contract("cuEventRecord of an event that does not exist or was destroyed", kInvalidHandle);
  if (event->context != stream->context) {
    return contract("cuEventRecord of an event of another device's context", kInvalidHandle);
  }
  const std::uint64_t generation = event->recorded.fetch_add(1) + 1;
  stream->enqueue([event, generation] {
    event->stamp_ns.store(node()->now_ns());
    event->completed.store(generation);
  });
  return kSuccess;
}

int cuEventQuery(void* handle) {
  Event* event = live_event(handle);
  if (event == nullptr)
    return contract("cuEventQuery of an event that does not exist or was destroyed", kInvalidHandle);
  if (event->recorded.load() == 0) return contract("cuEventQuery of an event never recorded", kInvalidHandle);
  if (const int sticky = event->context->sticky.load(); sticky != kSuccess) return sticky;
  return event->completed.load() >= event->recorded.load() ? kSuccess : kNotReady;
}

int cuEventElapsedTime(float* milliseconds, void* start_handle, void* end_handle) {
  if (milliseconds == nullptr) return kInvalidValue;
  Event* start = live_event(start_handle);
  Event* end = live_event(end_handle);
  if (start == nullptr || end == nullptr) {
    return contract("cuEventElapsedTime of an event that does not exist or was destroyed", kInvalidHandle);
  }
  if (start->recorded.load() == 0 || end->recorded.load() == 0) {
    return contract("cuEventElapsedTime of an event never recorded", kInvalidHandle);
  }
  if (start->completed.load() < start->recorded.load() || end->completed.load() < end->recorded.load()) {
    return kNotReady;
  }
  *milliseconds = static_cast<float>(static_cast<double>(end->stamp_ns.load() - start->stamp_ns.load()) / 1e6);
  return kSuccess;
}

int cuMemAlloc_v2(std::uint64_t* pointer, std::size_t bytes) {
  if (pointer == nullptr || bytes == 0) return kInvalidValue;
  if (g_current == nullptr) return contract("cuMemAlloc with no current context", kInvalidContext);
  void* allocated = memory().allocate(Range::Kind::kDevice, g_current->ordinal, bytes);
  if (allocated == nullptr) return kOutOfMemory;
  *pointer = reinterpret_cast<std::uintptr_t>(allocated);
  return kSuccess;
}

int cuMemFree_v2(std::uint64_t pointer) {
  if (!memory().free(static_cast<std::uintptr_t>(pointer), Range::Kind::kDevice)) {
    return contract("cuMemFree of an address no cuMemAlloc returned, or freed twice", kInvalidValue);
  }
  return kSuccess;
}

int cuMemHostAlloc(void** pointer, std::size_t bytes, unsigned int /*flags*/) {
  if (pointer == nullptr || bytes == 0) return kInvalidValue;
  if (g_current == nullptr) return contract("cuMemHostAlloc with no current context", kInvalidContext);
  *pointer = memory().allocate(Range::Kind::kHostAlloc, g_current->ordinal, bytes);
  return *pointer == nullptr ? kOutOfMemory : kSuccess;
}

int cuMemFreeHost(void* pointer) {
  if (!memory().free(reinterpret_cast<std::uintptr_t>(pointer), Range::Kind::kHostAlloc)) {
    return contract("cuMemFreeHost of an address no cuMemHostAlloc returned, or freed twice", kInvalidValue);
  }
  return kSuccess;
}

int cuMemHostRegister_v2(void* pointer, std::size_t bytes, unsigned int /*flags*/) {
  if (pointer == nullptr || bytes == 0) return kInvalidValue;
  if (g_current == nullptr) return contract("cuMemHostRegister with no current context", kInvalidContext);
  if (!memory().add_registration(reinterpret_cast<std::uintptr_t>(pointer), bytes, g_current->ordinal)) {
    return contract("cuMemHostRegister of a range that overlaps registered or CUDA memory",
                    kHostMemoryAlreadyRegistered);
  }
  return kSuccess;
}

int cuMemHostUnregister(void* pointer) {
  if (!memory().remove_registration(reinterpret_cast<std::uintptr_t>(pointer))) {
    return contract("cuMemHostUnregister of an address no cuMemHostRegister began", kHostMemoryNotRegistered);
  }
  return kSuccess;
}

int cuMemHostGetDevicePointer_v2(std::uint64_t* device_pointer, void* pointer, unsigned int flags) {
  if (device_pointer == nullptr || flags != 0) return kInvalidValue;
  if (memory().side_of(-1, reinterpret_cast<std::uintptr_t>(pointer), 1) != Side::kPinnedHost) {
    return contract("cuMemHostGetDevicePointer of host memory that is not pinned", kInvalidValue);
  }
  *device_pointer = reinterpret_cast<std::uintptr_t>(pointer);  // unified addressing: the same address
  return kSuccess;
}

int cuMemcpyHtoDAsync_v2(std::uint64_t destination, const void* source, std::size_t bytes, void* stream) {
  return copy(reinterpret_cast<void*>(destination), source, bytes, stream, true, "cuMemcpyHtoDAsync");
}

int cuMemcpyDtoHAsync_v2(void* destination, std::uint64_t source, std::size_t bytes, void* stream) {
  return copy(destination, reinterpret_cast<const void*>(source), bytes, stream, false, "cuMemcpyDtoHAsync");
}

int cuMemsetD32Async(std::uint64_t destination, unsigned int value, std::size_t count, void* stream_handle) {
  int code = kSuccess;
  Stream* stream = stream_for_call(stream_handle, "cuMemsetD32Async", code);
  if (stream == nullptr) return code;
  if (memory().side_of(stream->context->ordinal, destination, count * 4) != Side::kDevice) {
    return contract("cuMemsetD32Async outside the device's memory", kInvalidValue);
  }
  stream->enqueue([destination, value, count] {
    auto* words = reinterpret_cast<std::uint32_t*>(destination);
    std::fill(words, words + count, value);
  });
  return kSuccess;
}

int cuModuleLoadData(void** handle, const void* image) {
  if (handle == nullptr || image == nullptr) return kInvalidValue;
  if (g_current == nullptr) return contract("cuModuleLoadData with no current context", kInvalidContext);
  const std::string text(static_cast<const char*>(image));
  const auto at = text.find("\n.version ");
  if (at == std::string::npos) return kInvalidImage;
  int major = 0;
  int minor = 0;
  if (std::sscanf(text.c_str() + at, "\n.version %d.%d", &major, &minor) != 2) return kInvalidImage;
  if (major * 10 + minor > driver_ptx()) return kUnsupportedPtxVersion;
  auto* module = new Module();  // never freed, as pcieval never unloads
  module->context = g_current;
  module->image = text;
  *handle = module;
  return kSuccess;
}

int cuModuleGetFunction(void** handle, void* module_handle, const char* name) {
  if (handle == nullptr || module_handle == nullptr || name == nullptr) return kInvalidValue;
  auto* module = static_cast<Module*>(module_handle);
  const auto known = pcieval::sim::kernel_named(name);
  if (!known || module->image.find(".entry " + std::string(name) + "(") == std::string::npos) return kNotFound;
  auto* function = new Function{module, *known};
  const std::lock_guard lock(g_mutex);
  g_functions.insert(function);
  *handle = function;
  return kSuccess;
}

int cuLaunchKernel(void* function_handle, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                   unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,
                   void* stream_handle, void** arguments, void** extra) {
  auto* function = static_cast<Function*>(function_handle);
  {
    const std::lock_guard lock(g_mutex);
    if (g_functions.count(function) == 0) return contract("cuLaunchKernel of an unknown function", kInvalidHandle);
  }
  int code = kSuccess;
  Stream* stream = stream_for_call(stream_handle, "cuLaunchKernel", code, true);
  if (stream == nullptr) return code;
  if (function->module->context != stream->context) {
    return contract("cuLaunchKernel of a function loaded in another device's context", kInvalidHandle);
  }
  const unsigned long long threads = static_cast<unsigned long long>(block_x) * block_y * block_z;
  if (grid_x == 0 || grid_y == 0 || grid_z == 0 || threads == 0 || threads > 1024 || grid_y > 65535 || grid_z > 65535 ||
      grid_x > 2147483647U || shared_bytes > 49152) {
    return contract("cuLaunchKernel with a grid or block the device cannot run", kInvalidValue);
  }
  if (arguments == nullptr || extra != nullptr) return kInvalidValue;
  const pcieval::sim::Kernel kernel = function->kernel;
  std::vector<unsigned char> packed = pcieval::sim::pack_arguments(kernel, arguments);
  stream->enqueue([stream, kernel, packed = std::move(packed)] {
    const int ordinal = stream->context->ordinal;
    pcieval::sim::KernelDevice device;
    // Another device's memory is reachable once peer access to it is on.
    device.peer_of = [ordinal](std::uintptr_t pointer, std::size_t bytes) {
      const int owner = memory().device_of(pointer, bytes);
      return owner >= 0 && owner != ordinal ? owner : -1;
    };
    device.reaches = [ordinal, &device](std::uintptr_t pointer, std::size_t bytes) {
      const int peer = device.peer_of(pointer, bytes);
      return memory().reaches(ordinal, pointer, bytes) ||
             (peer >= 0 && pcieval::sim::peer_access_enabled(ordinal, peer));
    };
    device.peer_transfer = [stream, ordinal](int peer, bool to_peer, double bytes) {
      Node* sim = node();
      auto flow = sim->start_peer_flow(ordinal, to_peer ? ordinal : peer, to_peer ? peer : ordinal, bytes,
                                       sim->devices()[static_cast<std::size_t>(ordinal)].spec.sm_efficiency, true);
      sim->wait(stream->worker, [flow] { return flow->done.load(std::memory_order_acquire); });
    };
    device.pinned_host = [ordinal](std::uintptr_t pointer, std::size_t bytes) {
      return memory().side_of(ordinal, pointer, bytes) == Side::kPinnedHost;
    };
    device.landed = [ordinal](void* destination, std::size_t bytes) { corrupt_if_faulty(ordinal, destination, bytes); };
    device.transfer = [stream, ordinal](bool to_device, double bytes) {
      timed_transfer(*stream, to_device, bytes,
                     node()->devices()[static_cast<std::size_t>(ordinal)].spec.sm_efficiency);
    };
    device.wait = [stream](const std::function<bool()>& ready) { node()->wait(stream->worker, ready); };
    // An address the device cannot reach is CUDA's sticky illegal address.
    if (!pcieval::sim::run_kernel(kernel, packed, device)) stream->context->sticky.store(kIllegalAddress);
  });
  return kSuccess;
}

// Not a CUDA entry point: pcieval's soak says each round's start
// (tell_simulator_round), which arms the faults set for that round.
void pcieval_sim_begin_round(int round) {
  if (auto sim = Node::get()) sim.value()->begin_round(round);
}

int cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, void* function, int block_size, std::size_t shared) {
  if (blocks == nullptr || function == nullptr || block_size <= 0 || shared > 49152) return kInvalidValue;
  *blocks = std::min(32, 2048 / block_size);
  return kSuccess;
}

}  // extern "C"
