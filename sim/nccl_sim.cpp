// libpcieval_sim_nccl.so: the NCCL entry points pcieval loads
// (bench/nccl_library.cpp) over the simulated node. Every rank of a
// communicator lives in this process (pcieval's single-node all-reduce, one
// rank per GPU set up in one group). An all-reduce is queued on its rank's
// stream; there it waits for every rank of the same call, sums the ranks'
// real float inputs into its own output (so pcieval's check of the result is
// real), and moves the ring's traffic over its GPU's link: 2(n-1)/n of the
// buffer each way, on the node's timeline. The traffic takes the host path in
// both of pcieval's modes (NCCL_P2P_DISABLE or not); the INFO log pcieval
// reads says SHM or P2P as the mode asks. Declared from NCCL's C ABI.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/cuda_hooks.hpp"
#include "sim/node.hpp"

namespace {

using pcieval::sim::Node;
using pcieval::sim::Worker;

// ncclResult_t values (nccl.h).
constexpr int kSuccess = 0;
constexpr int kUnhandledCudaError = 1;
constexpr int kSystemError = 2;
constexpr int kInvalidArgument = 4;
constexpr int kInvalidUsage = 5;
constexpr int kFloat32 = 7;
constexpr int kSum = 0;
constexpr std::size_t kUniqueIdBytes = 128;

struct UniqueId {
  char internal[kUniqueIdBytes];
};

// One all-reduce call as every rank of a clique sees it.
struct Call {
  std::atomic<int> arrived{0};
  std::atomic<int> left{0};
  std::vector<const float*> inputs;
};

struct Clique {
  int ranks = 0;
  std::vector<int> ordinals;  // each rank's device, as its ncclCommInitRank found it
  std::mutex mutex;
  std::map<std::uint64_t, std::shared_ptr<Call>> calls;  // by the call's sequence number
  bool logged = false;
  // A rank's communicator was aborted: NCCL's kernels leave their loops, so
  // every all-reduce still waiting for a rank ends (without its sum).
  std::atomic<bool> aborted{false};
};

struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  int ordinal = 0;
  std::uint64_t sequence = 0;
};

std::mutex g_mutex;
std::map<std::uint64_t, std::shared_ptr<Clique>> g_cliques;  // by the unique id's key

// Calls between ncclGroupStart and ncclGroupEnd are launched together at the
// end, as NCCL launches a group's kernels: every rank's work reaches its
// stream at once.
thread_local int g_group_depth = 0;
thread_local std::vector<std::pair<void*, std::function<void(Worker&)>>> g_deferred;

bool launch(void* stream, std::function<void(Worker&)> op) {
  if (g_group_depth > 0) {
    g_deferred.emplace_back(stream, std::move(op));
    return true;
  }
  return pcieval::sim::enqueue_on_stream(stream, std::move(op));
}
std::atomic<std::uint64_t> g_next_id{1};

std::uint64_t key_of(const UniqueId& id) {
  std::uint64_t key = 0;
  std::memcpy(&key, id.internal, sizeof key);
  return key;
}

// NCCL's INFO lines for the ring's connections, where pcieval reads them
// (NCCL_DEBUG_FILE, "%h" the host, "%p" the pid, "%%" a percent sign).
void log_channels(const Clique& clique, const std::vector<int>& ordinals) {
  const char* debug = std::getenv("NCCL_DEBUG");
  const char* file = std::getenv("NCCL_DEBUG_FILE");
  if (debug == nullptr || std::string(debug) != "INFO" || file == nullptr) return;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string path;
  for (const char* c = file; *c != '\0'; ++c) {
    if (*c == '%' && c[1] == '%') {
      path += '%';
      ++c;
    } else if (*c == '%' && c[1] == 'h') {
      path += host;
      ++c;
    } else if (*c == '%' && c[1] == 'p') {
      path += std::to_string(::getpid());
      ++c;
    } else {
      path += *c;
    }
  }
  const char* p2p_disable = std::getenv("NCCL_P2P_DISABLE");
  const bool host_path = p2p_disable != nullptr && std::string(p2p_disable) == "1";
  std::ofstream out(path, std::ios::app);
  for (int rank = 0; rank < clique.ranks; ++rank) {
    const int next = (rank + 1) % clique.ranks;
    out << host << ":" << ::getpid() << ":" << ::getpid() << " [" << ordinals[static_cast<std::size_t>(rank)]
        << "] NCCL INFO Channel 00/0 : " << rank << "[" << ordinals[static_cast<std::size_t>(rank)] << "] -> " << next
        << "[" << ordinals[static_cast<std::size_t>(next)] << "] via "
        << (host_path ? "SHM/direct/direct" : "P2P/CUMEM/read") << "\n";
  }
  out << host << ":" << ::getpid() << ":" << ::getpid() << " [0] NCCL INFO Connected all rings\n";
}

}  // namespace

extern "C" {

int ncclGetVersion(int* version) {
  if (version == nullptr) return kInvalidArgument;
  *version = 21903;  // 2.19.3, of the CUDA 12.2 era
  return kSuccess;
}

int ncclGetUniqueId(UniqueId* id) {
  if (id == nullptr) return kInvalidArgument;
  std::memset(id->internal, 0, kUniqueIdBytes);
  const std::uint64_t key = g_next_id.fetch_add(1);
  std::memcpy(id->internal, &key, sizeof key);
  return kSuccess;
}

int ncclGroupStart() {
  ++g_group_depth;
  return kSuccess;
}

int ncclGroupEnd() {
  if (g_group_depth == 0) return kInvalidUsage;
  if (--g_group_depth > 0) return kSuccess;
  bool launched = true;
  for (auto& [stream, op] : g_deferred) launched = pcieval::sim::enqueue_on_stream(stream, std::move(op)) && launched;
  g_deferred.clear();
  return launched ? kSuccess : kInvalidUsage;
}

int ncclCommInitRank(void** comm, int ranks, UniqueId id, int rank) {
  if (comm == nullptr || ranks < 1 || rank < 0 || rank >= ranks) return kInvalidArgument;
  const int ordinal = pcieval::sim::current_device();
  if (ordinal < 0) return kUnhandledCudaError;  // no current device: NCCL's cudaGetDevice fails
  if (auto node = Node::get(); node && node.value()->has_fault(ordinal, pcieval::sim::FaultKind::kNcclSetupHang)) {
    // A bootstrap that never completes (a peer that never connects).
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (auto node = Node::get(); node && node.value()->has_fault(ordinal, pcieval::sim::FaultKind::kNcclSetupFail)) {
    return kSystemError;  // a bootstrap whose socket or shared memory could not be set up
  }
  const std::lock_guard lock(g_mutex);
  std::shared_ptr<Clique>& clique = g_cliques[key_of(id)];
  if (!clique) {
    clique = std::make_shared<Clique>();
    clique->ranks = ranks;
  }
  if (clique->ranks != ranks) return kInvalidUsage;
  clique->ordinals.resize(static_cast<std::size_t>(ranks), ordinal);
  clique->ordinals[static_cast<std::size_t>(rank)] = ordinal;
  auto* made = new Comm{clique, rank, ordinal, 0};  // freed by destroy or abort
  *comm = made;
  return kSuccess;
}

int ncclAllReduce(const void* input, void* output, std::size_t count, int type, int op, void* comm_handle,
                  void* stream) {
  auto* comm = static_cast<Comm*>(comm_handle);
  if (comm == nullptr || input == nullptr || output == nullptr) return kInvalidArgument;
  if (type != kFloat32 || op != kSum) return kInvalidArgument;  // what pcieval runs
  if (pcieval::sim::stream_device(stream) != comm->ordinal) return kInvalidUsage;
  auto node = Node::get();
  if (!node) return kUnhandledCudaError;
  std::shared_ptr<Clique> clique = comm->clique;
  std::shared_ptr<Call> call;
  {
    const std::lock_guard lock(clique->mutex);
    std::shared_ptr<Call>& made = clique->calls[comm->sequence];
    if (!made) {
      made = std::make_shared<Call>();
      made->inputs.assign(static_cast<std::size_t>(clique->ranks), nullptr);
    }
    call = made;
    call->inputs[static_cast<std::size_t>(comm->rank)] = static_cast<const float*>(input);
  }
  const std::uint64_t sequence = comm->sequence++;
  const int ranks = clique->ranks;
  const int ordinal = comm->ordinal;
  auto* sim = node.value();
  const bool stalls = sim->has_fault(ordinal, pcieval::sim::FaultKind::kNcclAllReduceHang);
  const bool queued =
      launch(stream, [sim, clique, call, sequence, ranks, ordinal, count, output, stalls](Worker& worker) {
        // NCCL's kernel runs from here to the end of the call (a waiting one too).
        sim->kernel_started(ordinal);
        struct Running {
          Node* sim;
          int ordinal;
          ~Running() { sim->kernel_ended(ordinal); }
        } running{sim, ordinal};
        // A rank that never joins stalls the ring: every rank's kernel spins
        // until its communicator is aborted.
        if (!stalls) call->arrived.fetch_add(1);
        sim->wait(worker, [call, ranks, clique] { return call->arrived.load() == ranks || clique->aborted.load(); });
        if (clique->aborted.load()) return;
        {
          const std::lock_guard lock(clique->mutex);
          if (!clique->logged) {
            clique->logged = true;
            log_channels(*clique, clique->ordinals);
          }
        }
        // Rank by rank over the whole buffer: per element the same additions
        // in the same order (0 + rank 0 + rank 1 ...), which vectorise;
        // element by element over the ranks they do not.
        auto* sums = static_cast<float*>(output);
        std::fill(sums, sums + count, 0.0F);
        for (const float* in : call->inputs) {
          for (std::size_t i = 0; i < count; ++i) sums[i] += in[i];
        }
        // A ring all-reduce sends and receives 2(n-1)/n of the buffer.
        const double bytes = static_cast<double>(count) * 4 * 2 * (ranks - 1) / ranks;
        const double efficiency = sim->devices()[static_cast<std::size_t>(ordinal)].spec.copy_efficiency;
        auto up = sim->start_flow(ordinal, false, bytes, efficiency);
        auto down = sim->start_flow(ordinal, true, bytes, efficiency);
        sim->wait(worker, [up, down] {
          return up->done.load(std::memory_order_acquire) && down->done.load(std::memory_order_acquire);
        });
        if (call->left.fetch_add(1) + 1 == ranks) {
          const std::lock_guard lock(clique->mutex);
          clique->calls.erase(sequence);
        }
      });
  return queued ? kSuccess : kInvalidUsage;
}

int ncclCommGetAsyncError(void* comm, int* error) {
  if (comm == nullptr || error == nullptr) return kInvalidArgument;
  *error = kSuccess;
  return kSuccess;
}

int ncclCommAbort(void* comm) {
  if (comm != nullptr) static_cast<Comm*>(comm)->clique->aborted.store(true);
  delete static_cast<Comm*>(comm);
  return kSuccess;
}

int ncclCommDestroy(void* comm) {
  delete static_cast<Comm*>(comm);
  return kSuccess;
}

const char* ncclGetErrorString(int code) {
  switch (code) {
    case kSuccess:
      return "no error";
    case kUnhandledCudaError:
      return "unhandled cuda error";
    case kSystemError:
      return "unhandled system error";
    case kInvalidArgument:
      return "invalid argument";
    case kInvalidUsage:
      return "invalid usage";
    default:
      return "unknown result code";
  }
}

}  // extern "C"
