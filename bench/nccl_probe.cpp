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

// How long aborted communicators' kernels get to leave their streams before
// the GPUs are taken for wedged (retired_devices.hpp).
constexpr double kAbortDrainS = 5.0;

// --- The library, once per process

// Loaded at the first use and never unloaded: NCCL leaves proxy threads and
// exit handlers behind, and a communicator abandoned mid-setup still runs
// inside it. Never destroyed (reached through a static pointer) for the same
// reason.
const Result<NcclLibrary>& nccl_library(const std::string& name) {
  static std::mutex mutex;
  // A list: the references handed out stay valid as names are added.
  static auto* loaded = new std::list<std::pair<std::string, Result<NcclLibrary>>>;
  const std::lock_guard lock(mutex);
  for (auto& [loaded_name, library] : *loaded) {
    if (loaded_name == name) return library;
  }
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
    const NcclResult code = job.api.comm_init_rank(&job.comms[static_cast<std::size_t>(rank)], ranks, job.id, rank);
    if (code != kNcclSuccess) error = nccl_error_text(job.api, "ncclCommInitRank", code);
  }
  // The group is closed even after an error: an open group would swallow
  // every later NCCL call of the process.
  const NcclResult ended = job.api.group_end();
  if (error.empty() && ended != kNcclSuccess) error = nccl_error_text(job.api, "ncclGroupEnd", ended);
  return error;
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
  struct Plan {
    std::vector<std::uint64_t> sizes_bytes;  // ascending sweep sizes, then the verdict size
    std::uint64_t max_bytes = 0;
  };

  [[nodiscard]] Plan plan(const RunConfig& config) const;
  // Sets up the communicators; on error the message, and `comms` left empty.
  [[nodiscard]] Status set_up_comms(const NcclLibrary& library, const std::vector<GpuTarget>& targets,
                                    std::unique_ptr<CommSet>& comms, ProbeOutput& output) const;
  // One all-reduce of `count` floats on every rank, timed by each rank's
  // events: the slowest rank's seconds.
  [[nodiscard]] Result<double> run_trial(const NcclApi& api, CommSet& comms, std::vector<AllReduceRank>& ranks,
                                         std::size_t count) const;
  // After a failed or timed-out all-reduce: abort every communicator, give
  // the streams kAbortDrainS to drain, and retire the GPUs of any that do not.
  // Returns what to add to the error ("" when they drained).
  [[nodiscard]] std::string abort_and_drain(CommSet& comms, std::vector<AllReduceRank>& ranks) const;

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
    "judged against a PCIe budget. NCCL keeps the P2P setting of a process's first communicator, so after "
    "allreduce_nccl_host in the same run this one went through host memory too, and a warning says so.";

std::string_view NcclAllReduceProbe::description() const {
  return mode_ == Mode::kHostPath ? kHostDescription : kNormalDescription;
}

NcclAllReduceProbe::Plan NcclAllReduceProbe::plan(const RunConfig& config) const {
  Plan plan;
  if (config.mode == ProbeMode::kFull) {
    for (std::uint64_t size : allreduce_sweep_sizes()) {
      if (size != config.size_bytes) plan.sizes_bytes.push_back(size);
    }
  }
  plan.sizes_bytes.push_back(config.size_bytes);
  plan.max_bytes = *std::max_element(plan.sizes_bytes.begin(), plan.sizes_bytes.end());
  return plan;
}

Status NcclAllReduceProbe::set_up_comms(const NcclLibrary& library, const std::vector<GpuTarget>& targets,
                                        std::unique_ptr<CommSet>& comms, ProbeOutput& output) const {
  const NcclApi& api = library.api();
  const std::string who(key());
  {
    P2pLatch& latch = p2p_latch();
    const std::lock_guard lock(latch.mutex);
    if (mode_ == Mode::kHostPath && latch.p2p_disabled && !*latch.p2p_disabled) {
      return make_error("NCCL fixed its peer-to-peer setting (enabled) at this process's first communicator (" +
                        latch.set_by +
                        ") and keeps it: the all-reduce cannot be forced through host memory in this run; run "
                        "pcieval again so that allreduce_nccl_host sets up the first communicator");
    }
    const bool disabled_now = environment_disables_p2p();
    const std::string settings = transport_settings();
    if (!latch.p2p_disabled) {
      latch.p2p_disabled = disabled_now;
      latch.set_by = who;
    }
    const std::string nccl = library.version().empty() ? "NCCL (version unknown)" : "NCCL " + library.version();
    if (mode_ == Mode::kHostPath) {
      output.warnings.push_back(nccl + ", transport forced through host memory: " + settings +
                                " (set by this probe while it runs)");
    } else if (*latch.p2p_disabled && latch.set_by != who) {
      output.warnings.push_back(
          nccl + " keeps the peer-to-peer setting of this process's first communicator (" + latch.set_by +
          ", P2P disabled): this all-reduce went through host memory too, not over NVLink or peer-to-peer PCIe; "
          "for the normal path run it in a process of its own");
    } else if (disabled_now) {
      output.warnings.push_back(nccl + ": the environment disables peer-to-peer (" + settings +
                                "), so this all-reduce went through host memory; reported as measured, not judged");
    } else {
      output.warnings.push_back(nccl + ", transport left to NCCL (" + settings +
                                "): it may use NVLink; reported as measured, not judged");
    }

    auto job = std::make_shared<SetupJob>();
    job->api = api;
    for (const GpuTarget& target : targets) job->ordinals.push_back(target.ordinal);
    job->comms.assign(targets.size(), nullptr);
    if (NcclResult code = api.get_unique_id(&job->id); code != kNcclSuccess) {
      return make_error(nccl_error_text(api, "ncclGetUniqueId", code));
    }
    DeadlineWorker worker;
    const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(std::max(options_.timeout_s, 0.0)));
    DeadlineCall<std::string> call = worker.call([job] { return set_up(*job); }, timeout);
    if (call.outcome != DeadlineOutcome::kReturned) {
      // The setup thread may still be inside NCCL with these communicators
      // and these GPUs' contexts: nothing of them is touched again.
      const std::string why =
          call.outcome == DeadlineOutcome::kTimedOut
              ? "NCCL communicator setup did not complete within " + format_timeout_s(options_.timeout_s)
              : std::string("NCCL communicator setup could not be started");
      for (const GpuTarget& target : targets) retire_cuda_device(target.ordinal, why);
      return make_error(why + "; its GPUs are not used again in this run");
    }
    if (!call.value->empty()) {
      CommSet failed(api, job->comms, CommSet::Release::kAbort);
      return make_error(*call.value);
    }
    comms = std::make_unique<CommSet>(api, job->comms, CommSet::Release::kDestroy);
  }
  return ok_status();
}

Result<double> NcclAllReduceProbe::run_trial(const NcclApi& api, CommSet& comms, std::vector<AllReduceRank>& ranks,
                                             std::size_t count) const {
  for (AllReduceRank& rank : ranks) {
    if (auto recorded = rank.events().record_start(rank.stream()); !recorded) return recorded.error();
  }
  if (NcclResult code = api.group_start(); code != kNcclSuccess) {
    return make_error(nccl_error_text(api, "ncclGroupStart", code));
  }
  std::string error;
  for (std::size_t i = 0; i < ranks.size() && error.empty(); ++i) {
    const NcclResult code = api.all_reduce(ranks[i].input(), ranks[i].output(), count, kNcclFloat32, kNcclSum,
                                           comms.handles()[i], ranks[i].stream().handle());
    if (code != kNcclSuccess) error = nccl_error_text(api, "ncclAllReduce", code);
  }
  const NcclResult ended = api.group_end();
  if (error.empty() && ended != kNcclSuccess) error = nccl_error_text(api, "ncclGroupEnd", ended);
  if (!error.empty()) {
    // Some ranks' kernels may be queued and waiting for peers that never
    // launched: only an abort gets them out.
    return make_error(error + "; communicators aborted" + abort_and_drain(comms, ranks));
  }
  for (AllReduceRank& rank : ranks) {
    if (auto recorded = rank.events().record_end(rank.stream()); !recorded) return recorded.error();
  }

  // Polled: a stream that never drains, or an error NCCL reports only
  // asynchronously (a peer's failure), ends the wait instead of hanging it.
  const ReadyQuery done = [&]() -> Result<bool> {
    bool all_idle = true;
    for (const AllReduceRank& rank : ranks) {
      auto idle = rank.idle();
      if (!idle) return idle.error();
      all_idle = all_idle && idle.value();
    }
    for (NcclComm comm : comms.handles()) {
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
  const PollPolicy policy{options_.timeout_s, kDefaultPollInterval};
  const WaitResult waited = wait_until_ready(done, policy, "all-reduce");
  if (waited.outcome == WaitOutcome::kTimedOut) {
    return make_error("all-reduce did not complete within " + format_timeout_s(options_.timeout_s) +
                      "; communicators aborted" + abort_and_drain(comms, ranks));
  }
  if (waited.outcome == WaitOutcome::kFailed) {
    return make_error(waited.message + "; communicators aborted" + abort_and_drain(comms, ranks));
  }
  double slowest_s = 0;
  for (const AllReduceRank& rank : ranks) {
    auto seconds = rank.events().elapsed_s(policy, "all-reduce");
    if (!seconds) return seconds.error();
    slowest_s = std::max(slowest_s, seconds.value());
  }
  return slowest_s;
}

std::string NcclAllReduceProbe::abort_and_drain(CommSet& comms, std::vector<AllReduceRank>& ranks) const {
  comms.abort_all();
  const ReadyQuery drained = [&]() -> Result<bool> {
    for (const AllReduceRank& rank : ranks) {
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
  for (const AllReduceRank& rank : ranks) {
    retire_cuda_device(rank.ordinal(), "an NCCL all-reduce on it did not complete and did not drain after abort");
    gpus += (gpus.empty() ? "" : ", ") + std::to_string(rank.ordinal());
  }
  return "; CUDA devices " + gpus + " did not drain and are not used again in this run";
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
  const Plan plan = this->plan(config);
  const int n = static_cast<int>(targets.size());
  const double bus_factor = allreduce_bus_factor(n);

  // Kept for the whole probe, not only the setup: since NCCL 2.22 the
  // transports connect at the first collective, and some variables are read
  // then. Declared first: restored after the communicators are gone.
  ScopedEnvironment environment;
  if (mode_ == Mode::kHostPath) {
    environment.set("NCCL_P2P_DISABLE", "1");
    environment.set("NCCL_NVLS_ENABLE", "0");
    environment.set("NCCL_SHM_DISABLE", "0");
  }
  // Declared before the communicators: destroyed after them.
  std::vector<AllReduceRank> ranks;
  ranks.reserve(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto rank = AllReduceRank::create(targets[i].ordinal, static_cast<int>(i),
                                      static_cast<std::size_t>(plan.max_bytes / sizeof(float)));
    if (!rank) {
      output.errors.push_back(gpu_probe_parts::gpu_error(targets[i], rank.error().message));
      return output;
    }
    ranks.push_back(std::move(rank).value());
  }
  std::unique_ptr<CommSet> comms;
  if (auto set = set_up_comms(library.value(), targets, comms, output); !set) {
    output.errors.push_back(set.error().message);
    return output;
  }

  std::vector<PciAddress> addresses;
  for (const GpuTarget& target : targets) addresses.push_back(target.address);
  const PollPolicy policy{options_.timeout_s, kDefaultPollInterval};
  for (std::uint64_t size : plan.sizes_bytes) {
    const std::size_t count = static_cast<std::size_t>(size / sizeof(float));
    const std::string at = "at " + size_text(size) + ": ";
    bool prepared = true;
    for (AllReduceRank& rank : ranks) {
      if (auto ready = rank.prepare(count, policy); !ready) {
        output.errors.push_back(at + "CUDA device " + std::to_string(rank.ordinal()) + ": " + ready.error().message);
        prepared = false;
        break;
      }
    }
    if (!prepared) break;
    const TrialPlan trial_plan{config.warmup_trials, config.trials, size};
    Result<std::vector<double>> algbw = [&] {
      LoadScope load(context.load);
      return run_trials(trial_plan, [&] { return run_trial(api, *comms, ranks, count); });
    }();
    if (!algbw) {
      // The communicators were aborted or failed: no later size can run.
      output.errors.push_back(at + algbw.error().message);
      break;
    }
    // The check comes after the timed trials, never inside them; the last
    // trial's result is in every output buffer.
    bool verified = true;
    for (const AllReduceRank& rank : ranks) {
      auto wrong = rank.count_mismatches(count, n, policy);
      if (!wrong) {
        output.errors.push_back(at + "CUDA device " + std::to_string(rank.ordinal()) +
                                ": the all-reduce result could not be checked: " + wrong.error().message);
        verified = false;
      } else if (wrong.value() != 0) {
        output.errors.push_back(at + "CUDA device " + std::to_string(rank.ordinal()) + ": " +
                                std::to_string(wrong.value()) + " of " + std::to_string(count) +
                                " floats of the all-reduce result differ from the sum of the " + std::to_string(n) +
                                " inputs");
        verified = false;
      }
    }
    if (!verified) continue;
    std::vector<double> busbw = std::move(algbw).value();
    for (double& rate : busbw) rate *= bus_factor;
    output.measurements.push_back(gpu_probe_parts::verified_measurement(
        {key(), std::to_string(n) + " GPUs", addresses, Direction::kAllReduce, CopyMethod::kNccl, HostMemory::kPinned,
         Aggregation::kBusBandwidth, size,
         static_cast<std::uint64_t>(std::llround(static_cast<double>(size) * bus_factor)), std::nullopt, std::nullopt},
        std::move(busbw)));
  }
  return output;
}

}  // namespace

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
