#include "bench/detail/nccl_session.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <list>
#include <mutex>
#include <optional>

#include "bench/detail/nccl_transport.hpp"
#include "kernels/retired_devices.hpp"
#include "support/deadline_worker.hpp"

namespace pcieval::nccl_session {
namespace {

// How long aborted communicators' kernels get to leave their streams before
// the GPUs are taken for wedged (retired_devices.hpp).
constexpr double kAbortDrainS = 5.0;

// /dev/shm with less free space than this is named when a host-path
// all-reduce cannot be set up: 8 ranks' shared-memory buffers need more than
// a container's default 64 MB, and the failure would read as the GPUs'.
constexpr std::uint64_t kRoomyShmBytes = std::uint64_t{1} << 30;

// NCCL's INFO log, read to tell which transport it chose. Made before the
// library is first loaded: NCCL reads its log settings once per process, at
// its first call (nccl_transport.hpp). Destroyed at exit, which removes the
// file and restores the variables.
NcclDebugCapture& nccl_debug_capture() {
  static NcclDebugCapture capture;
  return capture;
}

// --- What NCCL latched: NCCL_P2P_DISABLE is read at the process's first
// communicator and kept (see nccl_probe.hpp).

std::optional<std::string> env_value(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

struct P2pLatch {
  std::mutex mutex;
  std::optional<bool> p2p_disabled;  // guarded by mutex; set at the first communicator setup
  std::string set_by;                // guarded by mutex: the probe whose setup latched it
};

P2pLatch& p2p_latch() {
  static P2pLatch latch;
  return latch;
}

// Whether NCCL, reading the environment now, would disable P2P, as its
// ncclGetLevel reads it: NCCL_P2P_DISABLE parsed by strtol (base 0) equal to
// 1, else NCCL_P2P_LEVEL=LOC (or its legacy number, 0).
bool environment_disables_p2p() {
  if (auto disable = env_value("NCCL_P2P_DISABLE")) {
    if (std::strtol(disable->c_str(), nullptr, 0) == 1) return true;
  }
  const auto level = env_value("NCCL_P2P_LEVEL");
  return level && (*level == "LOC" || *level == "0");
}

std::string describe_variable(const char* name) {
  const auto value = env_value(name);
  return std::string(name) + (value ? "=" + *value : " unset");
}

// "NCCL_P2P_DISABLE=1, NCCL_NVLS_ENABLE=0, NCCL_SHM_DISABLE=0": the settings
// that decide the transport, as NCCL saw them at setup.
std::string transport_settings() {
  return describe_variable("NCCL_P2P_DISABLE") + ", " + describe_variable("NCCL_P2P_LEVEL") + ", " +
         describe_variable("NCCL_NVLS_ENABLE") + ", " + describe_variable("NCCL_SHM_DISABLE");
}

}  // namespace

// --- Communicators

// Every local GPU's communicator. The destructor destroys them after a clean
// run and aborts them after a failed setup (NCCL's documented cleanup for a
// communicator with an error or unfinished work). Communicators whose setup
// never returned are never put in one: that thread may still use them.
class CommSet {
 public:
  enum class Release { kDestroy, kAbort };

  CommSet(const NcclApi& api, std::vector<NcclComm> comms, Release release)
      : api_(&api), comms_(std::move(comms)), release_(release) {}
  CommSet(const CommSet&) = delete;
  CommSet& operator=(const CommSet&) = delete;
  ~CommSet() {
    for (NcclComm comm : comms_) {
      if (comm == nullptr) continue;
      static_cast<void>(release_ == Release::kDestroy ? api_->comm_destroy(comm) : api_->comm_abort(comm));
    }
  }

  [[nodiscard]] const std::vector<NcclComm>& handles() const { return comms_; }

  // Aborts every communicator now: NCCL's kernels leave their loops and the
  // streams drain.
  void abort_all() {
    for (NcclComm& comm : comms_) {
      if (comm != nullptr) static_cast<void>(api_->comm_abort(comm));
      comm = nullptr;
    }
  }

 private:
  const NcclApi* api_;
  std::vector<NcclComm> comms_;
  Release release_;
};

namespace {

// What the setup thread owns: everything it touches lives here, never in the
// caller's frame, so a setup that returns after its deadline writes into
// memory that is still its own.
struct SetupJob {
  NcclApi api;
  NcclUniqueId id{};
  std::vector<int> ordinals;
  std::vector<int> ranks;  // each ordinal's global rank
  int total_ranks = 0;
  std::vector<NcclComm> comms;
};

// ncclGroupStart; per GPU cudaSetDevice + ncclCommInitRank; ncclGroupEnd (one
// thread sets up every rank, so the ranks must be set up as a group). "" on
// success.
std::string set_up(SetupJob& job) {
  const int ranks = static_cast<int>(job.ordinals.size());
  if (NcclResult code = job.api.group_start(); code != kNcclSuccess) {
    return nccl_error_text(job.api, "ncclGroupStart", code);
  }
  std::string error;
  for (int rank = 0; rank < ranks && error.empty(); ++rank) {
    if (auto used = use_cuda_device(job.ordinals[static_cast<std::size_t>(rank)]); !used) {
      error = used.error().message;
      break;
    }
    const auto at = static_cast<std::size_t>(rank);
    const NcclResult code = job.api.comm_init_rank(&job.comms[at], job.total_ranks, job.id, job.ranks[at]);
    if (code != kNcclSuccess) error = nccl_error_text(job.api, "ncclCommInitRank", code);
  }
  // The group is closed even after an error: an open group would swallow
  // every later NCCL call of the process.
  const NcclResult ended = job.api.group_end();
  if (error.empty() && ended != kNcclSuccess) error = nccl_error_text(job.api, "ncclGroupEnd", ended);
  return error;
}

// Where the host-path all-reduce's ranks meet (NCCL's shared-memory
// transport, in /dev/shm) has little room, the note that says so; empty
// otherwise. Docker gives a container 64 MB, too little for 8 ranks.
std::string small_shm_note() {
  struct statvfs shm {};
  if (::statvfs("/dev/shm", &shm) != 0) return {};
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(shm.f_bavail) * shm.f_frsize;
  if (free_bytes >= kRoomyShmBytes) return {};
  return "; /dev/shm has " + std::to_string(free_bytes >> 20) +
         " MiB free, where NCCL's shared-memory transport puts its buffers (a container's default is 64 MB: run "
         "it with --shm-size=1g or --ipc=host)";
}

// Records in the process-wide latch what NCCL will keep for this
// communicator, and says which transport it gets; an error when a host-path
// all-reduce cannot have one. REQUIRES: the latch's mutex held until the
// communicators are set up.
Result<std::string> latch_transport(P2pLatch& latch, Transport transport, std::string_view who,
                                    const NcclLibrary& library) {
  if (transport == Transport::kHostPath && latch.p2p_disabled && !*latch.p2p_disabled) {
    return make_error("NCCL fixed its peer-to-peer setting (enabled) at this process's first communicator (" +
                      latch.set_by +
                      ") and keeps it: the all-reduce cannot be forced through host memory in this run; run "
                      "pcieval again so that allreduce_nccl_host sets up the first communicator");
  }
  const bool disabled_now = environment_disables_p2p();
  const std::string settings = transport_settings();
  if (!latch.p2p_disabled) {
    latch.p2p_disabled = disabled_now;
    latch.set_by = std::string(who);
  }
  const std::string nccl = library.version().empty() ? "NCCL (version unknown)" : "NCCL " + library.version();
  if (transport == Transport::kHostPath) {
    return nccl + ", transport forced through host memory: " + settings + " (set for the whole run before it started)";
  }
  if (*latch.p2p_disabled && latch.set_by != who) {
    return nccl + " keeps the peer-to-peer setting of this process's first communicator (" + latch.set_by +
           ", P2P disabled): this all-reduce went through host memory too, not over NVLink or peer-to-peer PCIe; "
           "for the normal path run it in a process of its own";
  }
  if (disabled_now) {
    return nccl + ": the environment disables peer-to-peer (" + settings +
           "), so this all-reduce went through host memory; reported as measured, not judged";
  }
  return nccl + ", transport left to NCCL (" + settings + "): it may use NVLink; reported as measured, not judged";
}

}  // namespace

const Result<NcclLibrary>& nccl_library(const std::string& name) {
  static std::mutex mutex;
  // A list: the references handed out stay valid as names are added.
  static auto* loaded = new std::list<std::pair<std::string, Result<NcclLibrary>>>;
  const std::lock_guard lock(mutex);
  for (auto& [loaded_name, library] : *loaded) {
    if (loaded_name == name) return library;
  }
  static_cast<void>(nccl_debug_capture());
  Result<NcclLibrary> library = NcclLibrary::load(name);
  if (library) library.value().keep_loaded();
  loaded->emplace_back(name, std::move(library));
  return loaded->back().second;
}

Result<std::unique_ptr<AllReduceSession>> AllReduceSession::open(const NcclLibrary& library,
                                                                 const Participants& participants,
                                                                 std::vector<AllReduceRank> ranks, Transport transport,
                                                                 std::string_view who, double timeout_s,
                                                                 std::vector<std::string>& warnings) {
  const NcclApi& api = library.api();
  std::unique_ptr<AllReduceSession> session(
      new AllReduceSession(api, participants.total_ranks, timeout_s, std::move(ranks)));
  P2pLatch& latch = p2p_latch();
  const std::lock_guard lock(latch.mutex);
  Result<std::string> transport_note = latch_transport(latch, transport, who, library);
  if (!transport_note) return transport_note.error();
  warnings.push_back(std::move(transport_note).value());

  session->log_mark_ = nccl_debug_capture().mark();
  auto job = std::make_shared<SetupJob>();
  job->api = api;
  job->id = participants.id;
  for (const AllReduceRank& rank : session->ranks_) {
    job->ordinals.push_back(rank.ordinal());
    job->ranks.push_back(rank.rank());
  }
  job->total_ranks = participants.total_ranks;
  job->comms.assign(session->ranks_.size(), nullptr);
  DeadlineWorker worker;
  const auto timeout =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(std::max(timeout_s, 0.0)));
  DeadlineCall<std::string> call = worker.call([job] { return set_up(*job); }, timeout);
  const std::string shm_note = transport == Transport::kHostPath ? small_shm_note() : std::string();
  if (call.outcome != DeadlineOutcome::kReturned) {
    // The setup thread may still be inside NCCL with these communicators
    // and these GPUs' contexts: nothing of them is touched again. Setting up
    // is NCCL's and the host's work (bootstrap sockets, shared memory), not
    // the GPUs': the GPUs are retired as for slow host work, so their
    // verdicts are inconclusive with this reason, never gpu_unresponsive.
    const std::string why = call.outcome == DeadlineOutcome::kTimedOut
                                ? "NCCL communicator setup did not complete within " + format_timeout_s(timeout_s) +
                                      " (NCCL and the host's work, not the GPUs')" + shm_note
                                : std::string("NCCL communicator setup could not be started");
    for (int ordinal : job->ordinals) retire_cuda_device(ordinal, why, RetireCause::kHostWork);
    return make_error(why + "; its GPUs are not used again in this run");
  }
  if (!call.value->empty()) {
    CommSet failed(api, job->comms, CommSet::Release::kAbort);
    return make_error(*call.value + shm_note);
  }
  session->comms_ = std::make_unique<CommSet>(api, job->comms, CommSet::Release::kDestroy);
  return session;
}

Status AllReduceSession::prepare(std::size_t count) {
  for (AllReduceRank& rank : ranks_) {
    if (auto ready = rank.prepare(count, policy()); !ready) {
      return make_error("CUDA device " + std::to_string(rank.ordinal()) + ": " + ready.error().message);
    }
  }
  return ok_status();
}

Result<double> AllReduceSession::trial(std::size_t count) {
  const NcclApi& api = *api_;
  for (AllReduceRank& rank : ranks_) {
    if (auto recorded = rank.events().record_start(rank.stream()); !recorded) return recorded.error();
  }
  if (NcclResult code = api.group_start(); code != kNcclSuccess) {
    return make_error(nccl_error_text(api, "ncclGroupStart", code));
  }
  std::string error;
  for (std::size_t i = 0; i < ranks_.size() && error.empty(); ++i) {
    const NcclResult code = api.all_reduce(ranks_[i].input(), ranks_[i].output(), count, kNcclFloat32, kNcclSum,
                                           comms_->handles()[i], ranks_[i].stream().handle());
    if (code != kNcclSuccess) error = nccl_error_text(api, "ncclAllReduce", code);
  }
  const NcclResult ended = api.group_end();
  if (error.empty() && ended != kNcclSuccess) error = nccl_error_text(api, "ncclGroupEnd", ended);
  if (!error.empty()) {
    // Some ranks' kernels may be queued and waiting for peers that never
    // launched: only an abort gets them out.
    return make_error(error + "; communicators aborted" + abort_and_drain());
  }
  for (AllReduceRank& rank : ranks_) {
    if (auto recorded = rank.events().record_end(rank.stream()); !recorded) return recorded.error();
  }

  // Polled: a stream that never drains, or an error NCCL reports only
  // asynchronously (a peer's failure), ends the wait instead of hanging it.
  const ReadyQuery done = [&]() -> Result<bool> {
    bool all_idle = true;
    for (const AllReduceRank& rank : ranks_) {
      auto idle = rank.idle();
      if (!idle) return idle.error();
      all_idle = all_idle && idle.value();
    }
    for (NcclComm comm : comms_->handles()) {
      NcclResult async = kNcclSuccess;
      if (NcclResult code = api.comm_get_async_error(comm, &async); code != kNcclSuccess) {
        return make_error(nccl_error_text(api, "ncclCommGetAsyncError", code));
      }
      if (async != kNcclSuccess && async != kNcclInProgress) {
        return make_error("NCCL reported an asynchronous error: " + nccl_error_text(api, "the all-reduce", async));
      }
    }
    return all_idle;
  };
  const WaitResult waited = wait_until_ready(done, policy(), "all-reduce");
  if (waited.outcome == WaitOutcome::kTimedOut) {
    return make_error("all-reduce did not complete within " + format_timeout_s(timeout_s_) + "; communicators aborted" +
                      abort_and_drain());
  }
  if (waited.outcome == WaitOutcome::kFailed) {
    return make_error(waited.message + "; communicators aborted" + abort_and_drain());
  }
  double slowest_s = 0;
  for (const AllReduceRank& rank : ranks_) {
    auto seconds = rank.events().elapsed_s(policy(), "all-reduce");
    if (!seconds) return seconds.error();
    slowest_s = std::max(slowest_s, seconds.value());
  }
  return slowest_s;
}

std::string AllReduceSession::transport_chosen() const {
  const NcclDebugCapture& capture = nccl_debug_capture();
  if (!capture.available()) return "transport NCCL chose not known: " + capture.unavailable_reason();
  auto text = capture.read_since(log_mark_);
  if (!text) return "transport NCCL chose not known: its log could not be read: " + text.error().message;
  const NcclTransportSummary summary = summarize_nccl_transports(text.value().text);
  if (summary.nccl_lines == 0) {
    return "transport NCCL chose not known: NCCL wrote nothing to pcieval's copy of its log (" +
           capture.path().string() + ")";
  }
  return "transport NCCL chose (its INFO log): " + summary.summary;
}

std::vector<std::pair<std::size_t, std::string>> AllReduceSession::verify(std::size_t count) const {
  std::vector<std::pair<std::size_t, std::string>> errors;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    auto wrong = ranks_[i].count_mismatches(count, total_ranks_, policy());
    if (!wrong) {
      errors.emplace_back(i, "the all-reduce result could not be checked: " + wrong.error().message);
    } else if (wrong.value() != 0) {
      errors.emplace_back(i, std::to_string(wrong.value()) + " of " + std::to_string(count) +
                                 " floats of the all-reduce result differ from the sum of the " +
                                 std::to_string(total_ranks_) + " inputs");
    }
  }
  return errors;
}

std::string AllReduceSession::abort_and_drain() {
  comms_->abort_all();
  const ReadyQuery drained = [&]() -> Result<bool> {
    for (const AllReduceRank& rank : ranks_) {
      auto idle = rank.idle();
      if (!idle) return idle.error();
      if (!idle.value()) return false;
    }
    return true;
  };
  const WaitResult waited = wait_until_ready(drained, PollPolicy{kAbortDrainS, kDefaultPollInterval}, "aborted");
  if (waited.outcome == WaitOutcome::kReady) return {};
  // A stream still busy holds a context that may be wedged: freeing its
  // buffers would synchronize with it for ever.
  std::string gpus;
  for (const AllReduceRank& rank : ranks_) {
    retire_cuda_device(rank.ordinal(), "an NCCL all-reduce on it did not complete and did not drain after abort");
    gpus += (gpus.empty() ? "" : ", ") + std::to_string(rank.ordinal());
  }
  return "; CUDA devices " + gpus + " did not drain and are not used again in this run";
}

AllReduceSession::AllReduceSession(const NcclApi& api, int total_ranks, double timeout_s,
                                   std::vector<AllReduceRank> ranks)
    : api_(&api), total_ranks_(total_ranks), timeout_s_(timeout_s), ranks_(std::move(ranks)) {}

AllReduceSession::~AllReduceSession() = default;

void force_host_path(ScopedEnvironment& environment) {
  environment.set("NCCL_P2P_DISABLE", "1");
  environment.set("NCCL_NVLS_ENABLE", "0");
  environment.set("NCCL_SHM_DISABLE", "0");
}

namespace {

struct PreparedEnvironment {
  std::mutex mutex;
  bool prepared = false;   // guarded by mutex
  bool host_path = false;  // guarded by mutex
  // Never destroyed before exit: the variables stay for NCCL's last read.
  ScopedEnvironment environment;
};

PreparedEnvironment& prepared_environment() {
  static PreparedEnvironment instance;
  return instance;
}

}  // namespace

void prepare_environment(bool host_path) {
  PreparedEnvironment& prepared = prepared_environment();
  const std::lock_guard lock(prepared.mutex);
  if (prepared.prepared) return;
  static_cast<void>(nccl_debug_capture());
  if (host_path) force_host_path(prepared.environment);
  prepared.prepared = true;
  prepared.host_path = host_path;
}

bool host_path_environment_prepared() {
  PreparedEnvironment& prepared = prepared_environment();
  const std::lock_guard lock(prepared.mutex);
  return prepared.prepared && prepared.host_path;
}

}  // namespace pcieval::nccl_session
