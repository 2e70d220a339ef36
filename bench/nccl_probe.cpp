#include "bench/nccl_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/gpu_groups.hpp"
#include "bench/gpu_probe_parts.hpp"
#include "bench/nccl_transport.hpp"
#include "bench/trials.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/deadline_wait.hpp"
#include "kernels/nccl_rank.hpp"
#include "kernels/retired_devices.hpp"
#include "topology/deadline_worker.hpp"

namespace pcieval {
namespace {

using gpu_probe_parts::GpuTarget;

constexpr std::string_view kHostKey = "allreduce_nccl_host";
constexpr std::string_view kNormalKey = "allreduce_nccl";
// Who set up a fleet all-reduce's communicators, as the P2P latch names it.
constexpr std::string_view kFleetKey = "the fleet all-reduce";

// How long aborted communicators' kernels get to leave their streams before
// the GPUs are taken for wedged (retired_devices.hpp).
constexpr double kAbortDrainS = 5.0;

// --- The library, once per process

// Loaded at the first use and never unloaded: NCCL leaves proxy threads and
// exit handlers behind, and a communicator abandoned mid-setup still runs
// inside it. Never destroyed (reached through a static pointer) for the same
// reason.
// NCCL's INFO log, read to tell which transport it chose. Made before the
// library is first loaded: NCCL reads its log settings once per process, at
// its first call (nccl_transport.hpp). Destroyed at exit, which removes the
// file and restores the variables.
NcclDebugCapture& nccl_debug_capture() {
  static NcclDebugCapture capture;
  return capture;
}

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

// --- One all-reduce, set up once and run many times

// Whether NCCL should be kept off peer-to-peer for this communicator.
enum class Transport { kHostPath, kNcclChoice };

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
    return nccl + ", transport forced through host memory: " + settings + " (set by this probe while it runs)";
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

// Who takes part: this process's GPUs are ranks first_rank, first_rank + 1,
// ... of total_ranks, every one set up with the same unique id.
struct Participants {
  NcclUniqueId id{};
  int first_rank = 0;
  int total_ranks = 0;
};

// The buffers and communicators of this process's ranks. Ranks are declared
// before the communicators, so the communicators go first.
class AllReduceSession {
 public:
  // Sets up one communicator per rank (a group of ncclCommInitRank under the
  // deadline). `ranks` hold their global rank and their buffers already.
  static Result<std::unique_ptr<AllReduceSession>> open(const NcclLibrary& library, const Participants& participants,
                                                        std::vector<AllReduceRank> ranks, Transport transport,
                                                        std::string_view who, double timeout_s,
                                                        std::vector<std::string>& warnings);

  // Fills every rank's input and poisons its output.
  [[nodiscard]] Status prepare(std::size_t count);
  // One all-reduce of `count` floats on every rank, timed by each rank's
  // events: the slowest rank's seconds.
  [[nodiscard]] Result<double> trial(std::size_t count);
  // Which transport NCCL chose for these communicators, from what its log
  // gained since they were set up (read after a collective: since NCCL 2.22
  // the connections are made at the first one), or why that is not known.
  [[nodiscard]] std::string transport_chosen() const;
  // Per local rank (its index) whose output is not the exact sum, why;
  // empty when all are.
  [[nodiscard]] std::vector<std::pair<std::size_t, std::string>> verify(std::size_t count) const;

 private:
  AllReduceSession(const NcclApi& api, int total_ranks, double timeout_s, std::vector<AllReduceRank> ranks)
      : api_(&api), total_ranks_(total_ranks), timeout_s_(timeout_s), ranks_(std::move(ranks)) {}

  [[nodiscard]] PollPolicy policy() const { return PollPolicy{timeout_s_, kDefaultPollInterval}; }
  // After a failed or timed-out all-reduce: abort every communicator, give
  // the streams kAbortDrainS to drain, and retire the GPUs of any that do not.
  // Returns what to add to the error ("" when they drained).
  [[nodiscard]] std::string abort_and_drain();

  const NcclApi* api_;
  int total_ranks_;
  double timeout_s_;
  std::uint64_t log_mark_ = 0;  // NCCL's log before these communicators
  std::vector<AllReduceRank> ranks_;
  std::unique_ptr<CommSet> comms_;
};

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
  if (call.outcome != DeadlineOutcome::kReturned) {
    // The setup thread may still be inside NCCL with these communicators
    // and these GPUs' contexts: nothing of them is touched again.
    const std::string why = call.outcome == DeadlineOutcome::kTimedOut
                                ? "NCCL communicator setup did not complete within " + format_timeout_s(timeout_s)
                                : std::string("NCCL communicator setup could not be started");
    for (int ordinal : job->ordinals) retire_cuda_device(ordinal, why);
    return make_error(why + "; its GPUs are not used again in this run");
  }
  if (!call.value->empty()) {
    CommSet failed(api, job->comms, CommSet::Release::kAbort);
    return make_error(*call.value);
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

// The settings of a host-path all-reduce, held while its communicators live:
// since NCCL 2.22 the transports connect at the first collective, and some
// variables are read then.
void force_host_path(ScopedEnvironment& environment) {
  environment.set("NCCL_P2P_DISABLE", "1");
  environment.set("NCCL_NVLS_ENABLE", "0");
  environment.set("NCCL_SHM_DISABLE", "0");
}

// --- The probe

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0) {
    return std::to_string(bytes >> 30) + " GiB";
  }
  if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= (std::uint64_t{1} << 10) && bytes % (std::uint64_t{1} << 10) == 0) {
    return std::to_string(bytes >> 10) + " KiB";
  }
  return std::to_string(bytes) + " bytes";
}

class NcclAllReduceProbe final : public Probe {
 public:
  enum class Mode { kHostPath, kNormal };

  NcclAllReduceProbe(Mode mode, NcclProbeOptions options) : mode_(mode), options_(std::move(options)) {}

  [[nodiscard]] std::string_view key() const override { return mode_ == Mode::kHostPath ? kHostKey : kNormalKey; }
  [[nodiscard]] std::string_view description() const override;
  [[nodiscard]] bool in_quick() const override { return mode_ == Mode::kHostPath; }

  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext& context) const override {
    const std::size_t gpus = gpus_of(context.evidence).size();
    if (gpus < 2) return "all-reduce needs 2 or more GPUs (found " + std::to_string(gpus) + ")";
    if (!built_with_cuda()) return std::string(kBuiltWithoutCudaMessage);
    const Result<NcclLibrary>& library = nccl_library(options_.library_name);
    if (!library) return "NCCL not loadable: " + library.error().message;
    if (auto count = cuda_device_count(); !count) return "no usable CUDA device: " + count.error().message;
    return std::nullopt;
  }

  [[nodiscard]] ProbeOutput run(const ProbeContext& context) const override;

 private:
  // Ascending sweep sizes (--full), then the verdict size.
  [[nodiscard]] static std::vector<std::uint64_t> sizes(const RunConfig& config);

  Mode mode_;
  NcclProbeOptions options_;
};

constexpr std::string_view kHostDescription =
    "NCCL all-reduce (sum of floats) over every local GPU at once, one communicator per GPU in one process, with "
    "peer-to-peer disabled (NCCL_P2P_DISABLE=1, NCCL_NVLS_ENABLE=0, NCCL_SHM_DISABLE=0): NCCL moves every byte "
    "through host memory, so each GPU's PCIe link carries the bus bandwidth in both directions at once. One "
    "measurement at the verdict size (and, with --full, 8 KiB to 1 GiB), subject \"N GPUs\", aggregation "
    "bus_bandwidth: nccl-tests' busbw = algbw x 2(n-1)/n, GB = 1e9; bytes_per_trial is size x 2(n-1)/n, what each "
    "GPU sent. Each result is checked against the exact sum on every GPU. Judged against the narrowest GPU link's "
    "budget (the lower of its read and write budgets).";
constexpr std::string_view kNormalDescription =
    "NCCL all-reduce (sum of floats) over every local GPU, like allreduce_nccl_host but over the transport NCCL "
    "chooses (NVLink, NVLS or peer-to-peer PCIe): what collectives get on this node, as bus bandwidth (busbw = "
    "algbw x 2(n-1)/n, subject \"N GPUs\"; --full only, with the same sizes). Reported as measured, never "
    "judged against a PCIe budget; a warning names the transport NCCL chose, from NCCL's own INFO log. NCCL "
    "keeps the P2P setting of a process's first communicator, so after allreduce_nccl_host in the same run this "
    "one went through host memory too, and a warning says so.";

std::string_view NcclAllReduceProbe::description() const {
  return mode_ == Mode::kHostPath ? kHostDescription : kNormalDescription;
}

std::vector<std::uint64_t> NcclAllReduceProbe::sizes(const RunConfig& config) {
  std::vector<std::uint64_t> sizes;
  if (config.mode == ProbeMode::kFull) {
    for (std::uint64_t size : allreduce_sweep_sizes()) {
      if (size != config.size_bytes) sizes.push_back(size);
    }
  }
  sizes.push_back(config.size_bytes);
  return sizes;
}

ProbeOutput NcclAllReduceProbe::run(const ProbeContext& context) const {
  ProbeOutput output;
  const RunConfig& config = context.config;
  if (config.size_bytes == 0 || config.size_bytes % sizeof(float) != 0) {
    output.errors.push_back("the all-reduce size must be a non-zero multiple of 4 bytes (floats), got " +
                            std::to_string(config.size_bytes));
    return output;
  }
  const std::vector<GpuTarget> targets = gpu_probe_parts::resolve(gpus_of(context.evidence), output);
  if (targets.size() < 2) {
    output.errors.push_back("all-reduce needs 2 or more usable GPUs; " + std::to_string(targets.size()) +
                            " could be used");
    return output;
  }
  const Result<NcclLibrary>& library = nccl_library(options_.library_name);
  if (!library) {
    output.errors.push_back("NCCL not loadable: " + library.error().message);
    return output;
  }
  const NcclApi& api = library.value().api();
  const std::vector<std::uint64_t> plan = sizes(config);
  const std::uint64_t max_bytes = *std::max_element(plan.begin(), plan.end());
  const int n = static_cast<int>(targets.size());
  const double bus_factor = allreduce_bus_factor(n);

  // Declared first: restored after the communicators are gone.
  ScopedEnvironment environment;
  if (mode_ == Mode::kHostPath) force_host_path(environment);
  std::vector<AllReduceRank> ranks;
  ranks.reserve(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto rank = AllReduceRank::create(targets[i].ordinal, static_cast<int>(i),
                                      static_cast<std::size_t>(max_bytes / sizeof(float)));
    if (!rank) {
      gpu_probe_parts::add_gpu_fault(output, targets[i], rank.error().message);
      return output;
    }
    ranks.push_back(std::move(rank).value());
  }
  Participants participants;
  participants.total_ranks = n;
  if (NcclResult code = api.get_unique_id(&participants.id); code != kNcclSuccess) {
    output.errors.push_back(nccl_error_text(api, "ncclGetUniqueId", code));
    return output;
  }
  auto session = AllReduceSession::open(library.value(), participants, std::move(ranks),
                                        mode_ == Mode::kHostPath ? Transport::kHostPath : Transport::kNcclChoice, key(),
                                        options_.timeout_s, output.warnings);
  const std::string what = "all-reduce (" + std::to_string(n) + " GPUs)";
  if (!session) {
    gpu_probe_parts::add_group_failure(output, targets, what, session.error().message);
    return output;
  }
  AllReduceSession& all_reduce = *session.value();

  std::vector<PciAddress> addresses;
  for (const GpuTarget& target : targets) addresses.push_back(target.address);
  for (std::uint64_t size : plan) {
    const std::size_t count = static_cast<std::size_t>(size / sizeof(float));
    const std::string at = "at " + size_text(size) + ": ";
    if (auto prepared = all_reduce.prepare(count); !prepared) {
      gpu_probe_parts::add_group_failure(output, targets, what, at + prepared.error().message);
      break;
    }
    const TrialPlan trial_plan{config.warmup_trials, config.trials, size};
    Result<std::vector<double>> algbw = [&] {
      LoadScope load(context.load);
      return run_trials(trial_plan, [&] { return all_reduce.trial(count); });
    }();
    if (!algbw) {
      // The communicators were aborted or failed: no later size can run.
      gpu_probe_parts::add_group_failure(output, targets, what, at + algbw.error().message);
      break;
    }
    // The check comes after the timed trials, never inside them; the last
    // trial's result is in every output buffer.
    const auto wrong = all_reduce.verify(count);
    for (const auto& [index, error] : wrong) gpu_probe_parts::add_gpu_fault(output, targets[index], at + error);
    if (!wrong.empty()) continue;
    std::vector<double> busbw = std::move(algbw).value();
    for (double& rate : busbw) rate *= bus_factor;
    output.measurements.push_back(gpu_probe_parts::verified_measurement(
        {key(), std::to_string(n) + " GPUs", addresses, Direction::kAllReduce, CopyMethod::kNccl, HostMemory::kPinned,
         Aggregation::kBusBandwidth, size,
         static_cast<std::uint64_t>(std::llround(static_cast<double>(size) * bus_factor)), std::nullopt, std::nullopt},
        std::move(busbw)));
  }
  output.warnings.push_back(all_reduce.transport_chosen());
  return output;
}

}  // namespace

Result<std::vector<int>> allreduce_part_ordinals(const NcclProbeOptions& options) {
  if (!built_with_cuda()) return make_error(std::string(kBuiltWithoutCudaMessage));
  const Result<NcclLibrary>& library = nccl_library(options.library_name);
  if (!library) return make_error("NCCL not loadable: " + library.error().message);
  auto count = cuda_device_count();
  if (!count) return make_error("no usable CUDA device: " + count.error().message);
  std::vector<int> ordinals;
  for (int ordinal = 0; ordinal < count.value(); ++ordinal) {
    if (!cuda_device_retired(ordinal)) ordinals.push_back(ordinal);
  }
  if (ordinals.empty()) {
    return make_error(count.value() == 0 ? std::string("no CUDA device")
                                         : "every CUDA device was retired earlier in this run");
  }
  return ordinals;
}

Result<NcclUniqueId> make_nccl_unique_id(const NcclProbeOptions& options) {
  const Result<NcclLibrary>& library = nccl_library(options.library_name);
  if (!library) return make_error("NCCL not loadable: " + library.error().message);
  const NcclApi& api = library.value().api();
  NcclUniqueId id{};
  if (NcclResult code = api.get_unique_id(&id); code != kNcclSuccess) {
    return make_error(nccl_error_text(api, "ncclGetUniqueId", code));
  }
  return id;
}

Result<AllReducePartResult> run_allreduce_part(const AllReducePart& part, const NcclProbeOptions& options) {
  if (part.size_bytes == 0 || part.size_bytes % sizeof(float) != 0) {
    return make_error("the all-reduce size must be a non-zero multiple of 4 bytes (floats), got " +
                      std::to_string(part.size_bytes));
  }
  if (part.ordinals.empty() || part.first_rank < 0 || part.trials < 1 ||
      part.first_rank + static_cast<int>(part.ordinals.size()) > part.total_ranks) {
    return make_error("this process's ranks " + std::to_string(part.first_rank) + " + " +
                      std::to_string(part.ordinals.size()) + " do not fit in " + std::to_string(part.total_ranks));
  }
  const Result<NcclLibrary>& library = nccl_library(options.library_name);
  if (!library) return make_error("NCCL not loadable: " + library.error().message);
  const auto count = static_cast<std::size_t>(part.size_bytes / sizeof(float));
  std::vector<AllReduceRank> ranks;
  for (std::size_t i = 0; i < part.ordinals.size(); ++i) {
    auto rank = AllReduceRank::create(part.ordinals[i], part.first_rank + static_cast<int>(i), count);
    if (!rank) return make_error("CUDA device " + std::to_string(part.ordinals[i]) + ": " + rank.error().message);
    ranks.push_back(std::move(rank).value());
  }
  AllReducePartResult result;
  const Participants participants{part.id, part.first_rank, part.total_ranks};
  auto session = AllReduceSession::open(library.value(), participants, std::move(ranks), Transport::kNcclChoice,
                                        kFleetKey, options.timeout_s, result.warnings);
  if (!session) return session.error();
  if (auto prepared = session.value()->prepare(count); !prepared) return prepared.error();
  for (int trial = 0; trial < part.warmup_trials + part.trials; ++trial) {
    if (part.before_trial) {
      if (auto lined_up = part.before_trial(); !lined_up) return lined_up.error();
    }
    auto seconds = session.value()->trial(count);
    if (!seconds) return seconds.error();
    if (trial >= part.warmup_trials) result.trial_s.push_back(seconds.value());
  }
  result.warnings.push_back(session.value()->transport_chosen());
  if (const auto wrong = session.value()->verify(count); !wrong.empty()) {
    std::string joined;
    for (const auto& [index, error] : wrong) {
      joined +=
          (joined.empty() ? "CUDA device " : "; CUDA device ") + std::to_string(part.ordinals[index]) + ": " + error;
    }
    return make_error(joined);
  }
  return result;
}

double allreduce_bus_factor(int ranks) {
  if (ranks < 1) return 0;
  return 2.0 * static_cast<double>(ranks - 1) / static_cast<double>(ranks);
}

std::vector<std::uint64_t> allreduce_sweep_sizes() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = std::uint64_t{8} << 10; size < (std::uint64_t{1} << 30); size *= 4) sizes.push_back(size);
  sizes.push_back(std::uint64_t{1} << 30);
  return sizes;
}

ScopedEnvironment::~ScopedEnvironment() {
  // Restored in reverse, so a variable set twice ends at its first value.
  for (auto saved = saved_.rbegin(); saved != saved_.rend(); ++saved) {
    if (saved->was_set) {
      ::setenv(saved->name.c_str(), saved->value.c_str(), 1);
    } else {
      ::unsetenv(saved->name.c_str());
    }
  }
}

void ScopedEnvironment::set(const std::string& name, const std::string& value) {
  Saved saved{name, false, {}};
  if (const char* old = std::getenv(name.c_str()); old != nullptr) {
    saved.was_set = true;
    saved.value = old;
  }
  saved_.push_back(std::move(saved));
  ::setenv(name.c_str(), value.c_str(), 1);
}

void add_nccl_probes(ProbeRegistry& registry, const NcclProbeOptions& options) {
  registry.push_back(std::make_unique<NcclAllReduceProbe>(NcclAllReduceProbe::Mode::kHostPath, options));
  registry.push_back(std::make_unique<NcclAllReduceProbe>(NcclAllReduceProbe::Mode::kNormal, options));
}

}  // namespace pcieval
