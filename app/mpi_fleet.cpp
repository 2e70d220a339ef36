// The MPI part of a fleet run (mpi_fleet.hpp). Built only with
// PCIEVAL_HAVE_MPI; everything MPI stays in this file.
#include "app/mpi_fleet.hpp"

#include <mpi.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "app/mpi_fleet_allreduce.hpp"
#include "app/mpi_poll.hpp"
#include "fleet/fleet.hpp"
#include "report/input_file.hpp"
#include "report/results_reader.hpp"

namespace pcieval::app {
namespace {

constexpr int kTagHeader = 7301;  // {exit code, body bytes}
constexpr int kTagBody = 7302;    // host name, '\n', results document

// MPI_Init and MPI_Finalize around the fleet run. abandon() is for the one
// case where MPI_Finalize would hang (a rank that never answered): the job
// then ends with MPI_Abort instead.
class MpiSession {
 public:
  MpiSession() { ok_ = MPI_Init(nullptr, nullptr) == MPI_SUCCESS; }
  ~MpiSession() {
    if (ok_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  [[nodiscard]] bool ok() const { return ok_; }
  [[noreturn]] void abort(int code) {
    std::cout.flush();
    std::cerr.flush();
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; in case it does
  }

 private:
  bool ok_ = false;
};

std::string processor_name() {
  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int length = 0;
  MPI_Get_processor_name(name.data(), &length);
  return std::string(name.data(), static_cast<std::size_t>(std::max(length, 0)));
}

struct NodeCheck {
  int exit_code = kExitInconclusive;
  std::string results_json;  // empty when the check wrote no document
};

// This node's check: quiet (rank 0 prints the fleet), its document written
// to -o or, without it, to a temporary file read back and removed.
NodeCheck check_this_node(CheckOptions check, int node) {
  check.sources.sysfs_root = expand_rank(check.sources.sysfs_root, node);
  if (check.simulate) check.simulate = expand_rank(*check.simulate, node);
  if (check.sources.topology_xml) check.sources.topology_xml = expand_rank(*check.sources.topology_xml, node);
  if (check.judge.output_path) check.judge.output_path = expand_rank(*check.judge.output_path, node);
  check.judge.quiet = true;
  std::optional<std::string> temporary;
  if (!check.judge.output_path) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    std::string name = (dir / "pcieval-fleet-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd >= 0) {
      ::close(fd);
      temporary = name;
      check.judge.output_path = name;
    }
  }
  NodeCheck result;
  result.exit_code = run_check(check);
  if (check.judge.output_path) {
    // A document of a failed write, or one left from an earlier run, must not
    // stand for this run: only read it when check wrote it (exit 0, 1, 3).
    if (result.exit_code != kExitUsage) {
      constexpr std::size_t kMaxBytes = std::size_t{64} << 20;
      auto text = read_input_file(*check.judge.output_path, kMaxBytes, "a pcieval results document");
      if (text) result.results_json = std::move(text).value();
    }
  }
  if (temporary) std::filesystem::remove(*temporary);
  return result;
}

// Rank 0's view of one node.
struct NodeSlot {
  int world_rank = 0;
  std::string host;  // the processor name, known from the start
  std::array<std::int64_t, 2> header{};
  std::string body;
  MPI_Request header_request = MPI_REQUEST_NULL;
  MPI_Request body_request = MPI_REQUEST_NULL;
  bool header_done = false;
  bool body_done = false;
};

FleetNode node_of(const NodeSlot& slot, int node, double timeout_s, bool one_node_per_rank) {
  const std::string source = "rank " + std::to_string(slot.world_rank);
  // Several ranks of one host, each a node: the rank tells them apart.
  const std::string label = one_node_per_rank ? slot.host + "/rank" + std::to_string(node) : slot.host;
  FleetNode entry;
  if (!slot.body_done) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
    entry = node_without_results(label, source, kExitInconclusive,
                                 std::string("no results from ") + source + " within " + seconds +
                                     " s of rank 0's own check: the rank hung or died");
  } else {
    const std::size_t newline = slot.body.find('\n');
    const std::string host = newline == std::string::npos ? slot.host : slot.body.substr(0, newline);
    const std::string json = newline == std::string::npos ? std::string() : slot.body.substr(newline + 1);
    const int code = static_cast<int>(slot.header[0]);
    if (json.empty()) {
      entry = node_without_results(label, source, kExitUsage,
                                   "the check on " + host + " ended with exit code " + std::to_string(code) +
                                       " before writing its results (its stderr says why)");
    } else if (auto results = results_from_json(json, source); !results) {
      entry =
          node_without_results(label, source, kExitUsage, "unreadable results document: " + results.error().message);
    } else {
      entry = node_from_results(results.value(), source);
      if (one_node_per_rank) entry.host = label;
    }
  }
  entry.rank = slot.world_rank;
  return entry;
}

// Gathers every node's {exit code, document} on rank 0 until `deadline`.
// Point to point rather than MPI_Gatherv: a collective cannot say which rank
// is missing, nor be given up at a deadline.
void collect(std::vector<NodeSlot>& slots, MpiClock::time_point deadline) {
  for (NodeSlot& slot : slots) {
    MPI_Irecv(slot.header.data(), 2, MPI_INT64_T, slot.world_rank, kTagHeader, MPI_COMM_WORLD, &slot.header_request);
  }
  for (;;) {
    bool all_done = true;
    for (NodeSlot& slot : slots) {
      if (!slot.header_done) {
        int done = 0;
        MPI_Test(&slot.header_request, &done, MPI_STATUS_IGNORE);
        if (done) {
          slot.header_done = true;
          const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(slot.header[1], 0));
          slot.body.resize(bytes);
          MPI_Irecv(slot.body.data(), static_cast<int>(bytes), MPI_CHAR, slot.world_rank, kTagBody, MPI_COMM_WORLD,
                    &slot.body_request);
        }
      }
      if (slot.header_done && !slot.body_done) {
        int done = 0;
        MPI_Test(&slot.body_request, &done, MPI_STATUS_IGNORE);
        slot.body_done = done != 0;
      }
      all_done = all_done && slot.body_done;
    }
    if (all_done || MpiClock::now() >= deadline) return;
    std::this_thread::sleep_for(kMpiPollInterval);
  }
}

// The fleet's exit code from rank 0 to every rank.
int share_exit_code(int code) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  wait_for(request);
  return code;
}

std::optional<long> env_number(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const long number = std::strtol(value, &end, 10);
  if (*end != '\0') return std::nullopt;
  return number;
}

// Why the fleet all-reduce does not run in this fleet run, alike on every
// rank (the flags are the same everywhere); nullopt when it runs.
std::optional<std::string> allreduce_disabled(const CheckOptions& check, const FleetCheckOptions& fleet) {
  if (!fleet.allreduce) return "--no-fleet-allreduce";
  if (!check.probes.enabled) return "the nodes' probes did not run (--no-probes)";
  if (check.sources.sysfs_root != "/sys" || check.sources.topology_xml) {
    return "the nodes judged a PCI tree from --sysfs-root/--topology-xml, not their own GPUs";
  }
  // The simulator's NCCL keeps every rank in one process (sim/README.md).
  if (check.simulate) return "the nodes are simulated (--simulate): the simulator's NCCL does not span processes";
  if (fleet.one_node_per_rank) return "--fleet-one-node-per-rank: ranks stand for nodes and may share GPUs";
  return std::nullopt;
}

FleetAllReduceSettings allreduce_settings(const CheckOptions& check, const FleetCheckOptions& fleet) {
  FleetAllReduceSettings settings;
  settings.size_bytes = check.probes.config.size_bytes;
  settings.warmup_trials = check.probes.config.warmup_trials;
  settings.trials = check.probes.config.trials;
  settings.timeout_s = fleet.timeout_s;
  return settings;
}

}  // namespace

std::string expand_rank(std::string text, int node) {
  static constexpr std::string_view kPlaceholder = "{rank}";
  const std::string number = std::to_string(node);
  for (std::size_t at = text.find(kPlaceholder); at != std::string::npos;
       at = text.find(kPlaceholder, at + number.size())) {
    text.replace(at, kPlaceholder.size(), number);
  }
  return text;
}

int run_fleet_check(const CheckOptions& check, const FleetCheckOptions& fleet) {
  // Every rank refuses this alike, before MPI starts, so the job ends with 2.
  if (check.judge.output_path && *check.judge.output_path == "-") {
    print_error("-o - is not available in a fleet run: each node's document goes to rank 0; use --fleet-output");
    return kExitUsage;
  }
  MpiSession mpi;
  if (!mpi.ok()) {
    print_error("MPI_Init failed: cannot run as a fleet");
    return kExitUsage;
  }
  int world_rank = 0;
  int world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // srun without an MPI plugin starts N singletons, each a "fleet" of one that
  // would write the same --fleet-output: refuse rather than race.
  if (const auto tasks = env_number("SLURM_STEP_NUM_TASKS"); tasks && *tasks > 1 && world_size == 1) {
    print_error("srun started " + std::to_string(*tasks) +
                " tasks but MPI sees 1 rank: launch with srun --mpi=pmix (or pmi2) so the ranks form one job");
    return kExitUsage;
  }

  // One leader per node: the lowest rank of each shared-memory domain (or
  // every rank, when each stands for a node of its own).
  MPI_Comm node_comm = MPI_COMM_NULL;
  if (fleet.one_node_per_rank) {
    MPI_Comm_split(MPI_COMM_WORLD, world_rank, 0, &node_comm);
  } else {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node_comm);
  }
  int node_rank = 0;
  MPI_Comm_rank(node_comm, &node_rank);
  const bool leader = node_rank == 0;
  MPI_Comm leaders = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, leader ? 0 : MPI_UNDEFINED, world_rank, &leaders);
  MPI_Comm_free(&node_comm);

  if (!leader) return share_exit_code(0);

  int node = 0;
  int nodes = 1;
  MPI_Comm_rank(leaders, &node);
  MPI_Comm_size(leaders, &nodes);
  // Who is who, while every rank is certainly alive: the leaders' world ranks
  // and host names on rank 0 (world rank 0 is always node 0).
  std::array<char, MPI_MAX_PROCESSOR_NAME> my_name{};
  const std::string name = processor_name();
  std::copy_n(name.begin(), std::min(name.size(), my_name.size() - 1), my_name.begin());
  std::vector<int> ranks(static_cast<std::size_t>(node == 0 ? nodes : 0));
  std::vector<char> names(node == 0 ? static_cast<std::size_t>(nodes) * MPI_MAX_PROCESSOR_NAME : 0);
  MPI_Gather(&world_rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, 0, leaders);
  MPI_Gather(my_name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
             leaders);

  NodeCheck mine = check_this_node(check, node);
  const std::optional<std::string> no_allreduce = allreduce_disabled(check, fleet);
  // The leaders' communicator carries the fleet all-reduce's bookkeeping; it
  // is never freed: the job ends in MPI_Finalize or MPI_Abort.

  if (node != 0) {
    const std::string body = name + "\n" + mine.results_json;
    const std::array<std::int64_t, 2> header{mine.exit_code, static_cast<std::int64_t>(body.size())};
    MPI_Request sends[2];
    MPI_Isend(header.data(), 2, MPI_INT64_T, 0, kTagHeader, MPI_COMM_WORLD, &sends[0]);
    MPI_Isend(body.data(), static_cast<int>(body.size()), MPI_CHAR, 0, kTagBody, MPI_COMM_WORLD, &sends[1]);
    wait_for(sends[0]);
    wait_for(sends[1]);
    if (!no_allreduce) {
      static_cast<void>(run_fleet_allreduce(leaders, {}, true, allreduce_settings(check, fleet), nccl_hooks()));
    }
    // An abandoned all-reduce is rank 0's to end (MPI_Abort).
    return share_exit_code(0);
  }

  std::vector<NodeSlot> slots(static_cast<std::size_t>(nodes - 1));
  for (std::size_t i = 0; i < slots.size(); ++i) {
    slots[i].world_rank = ranks[i + 1];
    slots[i].host = std::string(&names[(i + 1) * MPI_MAX_PROCESSOR_NAME]);
  }
  collect(slots, deadline_after(fleet.timeout_s));

  NodeSlot own;
  own.world_rank = 0;
  own.host = name;
  own.header = {mine.exit_code, 0};
  own.body = name + "\n" + mine.results_json;
  own.header_done = own.body_done = true;
  std::vector<FleetNode> entries;
  entries.push_back(node_of(own, 0, fleet.timeout_s, fleet.one_node_per_rank));
  bool all_answered = true;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    entries.push_back(node_of(slots[i], static_cast<int>(i + 1), fleet.timeout_s, fleet.one_node_per_rank));
    all_answered = all_answered && slots[i].body_done;
  }
  Fleet built = build_fleet(std::move(entries), {}, "mpi", ToolInfo{"pcieval", PCIEVAL_VERSION});
  bool abandoned = !all_answered;
  if (no_allreduce) {
    FleetAllReduce entry;
    entry.nodes = nodes;
    entry.reason = *no_allreduce;
    attach_fleet_allreduce(built, std::move(entry));
  } else {
    std::vector<std::string> hosts;
    for (int i = 0; i < nodes; ++i) hosts.emplace_back(&names[static_cast<std::size_t>(i) * MPI_MAX_PROCESSOR_NAME]);
    FleetAllReduceOutcome outcome =
        run_fleet_allreduce(leaders, hosts, all_answered, allreduce_settings(check, fleet), nccl_hooks());
    abandoned = abandoned || outcome.abandoned;
    attach_fleet_allreduce(built, std::move(outcome.entry));
  }
  const int code = tell_fleet(built, fleet.output_path, fleet.html_path, check.judge.quiet);
  if (abandoned) mpi.abort(code);
  return share_exit_code(code);
}

}  // namespace pcieval::app
