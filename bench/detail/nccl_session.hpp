// The NCCL all-reduce itself, shared by the probes (nccl_probe.cpp) and by a
// fleet run's share (nccl_part.cpp): the library, loaded once per process;
// what NCCL latched of the peer-to-peer setting; and one all-reduce session:
// its ranks' buffers, its communicators set up under a deadline, a timed
// trial and the check of the result. Internal to bench/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/detail/scoped_environment.hpp"
#include "bench/nccl_library.hpp"
#include "kernels/deadline_wait.hpp"
#include "kernels/nccl_rank.hpp"
#include "model/result.hpp"

namespace pcieval::nccl_session {

// Loaded at the first use and never unloaded: NCCL leaves proxy threads and
// exit handlers behind, and a communicator abandoned mid-setup still runs
// inside it. Before the first load NCCL's INFO log is pointed at pcieval's
// capture (nccl_transport.hpp), which later tells which transport it chose.
[[nodiscard]] const Result<NcclLibrary>& nccl_library(const std::string& name);

// Whether NCCL should be kept off peer-to-peer for this communicator.
enum class Transport { kHostPath, kNcclChoice };

// Who takes part: this process's GPUs are ranks first_rank, first_rank + 1,
// ... of total_ranks, every one set up with the same unique id.
struct Participants {
  NcclUniqueId id{};
  int first_rank = 0;
  int total_ranks = 0;
};

class CommSet;  // every local rank's communicator (nccl_session.cpp)

// The buffers and communicators of this process's ranks. Ranks are declared
// before the communicators, so the communicators go first.
class AllReduceSession {
 public:
  AllReduceSession(const AllReduceSession&) = delete;
  AllReduceSession& operator=(const AllReduceSession&) = delete;
  ~AllReduceSession();

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
  AllReduceSession(const NcclApi& api, int total_ranks, double timeout_s, std::vector<AllReduceRank> ranks);

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

// The settings of a host-path all-reduce, held while its communicators live:
// since NCCL 2.22 the transports connect at the first collective, and some
// variables are read then.
void force_host_path(ScopedEnvironment& environment);

// Sets every variable the NCCL probes need, once per process, and keeps
// them until exit: NCCL's log capture (nccl_transport.hpp) and, when
// `host_path`, force_host_path's. A later call changes nothing. See
// prepare_nccl_environment (nccl_probe.hpp) for why it must come before any
// thread starts.
void prepare_environment(bool host_path);
// Whether prepare_environment(true) ran in this process.
[[nodiscard]] bool host_path_environment_prepared();

}  // namespace pcieval::nccl_session
