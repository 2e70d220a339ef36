// The simulated GPU node that the simulator's libcuda and libnvidia-ml share
// (one instance per process: libpcieval_sim_node.so, which both link): its
// GPUs, their links and faults, and the timeline on which simulated copies
// take the time the link model gives.
//
// Time. Copies move real bytes (memcpy) but take modelled time: a virtual
// clock that stands still while any simulated stream does host-side work
// (the memcpy), advances by as much as the next copy needs to finish at the
// rates the model gives once every stream waits, and runs as the host's
// clock while nothing copies and every stream waits on the host (a latch
// held, an empty queue). Events stamp this clock, so
// pcieval's event-timed GB/s is the model's, exactly, however fast this
// machine's memcpy is. Concurrent copies share every hop they cross: each
// copy runs at the lowest, over its hops, of the hop's budget times the
// copy's efficiency divided by the copies on that hop in that direction (the
// two directions of a link share nothing). Pageable copies, which pcieval
// times with the host's clock, take their modelled time in real time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"
#include "sim/peer_route.hpp"
#include "sim/scenario.hpp"

namespace pcieval::sim {

// One physical link on a GPU's way to its root port, named by its
// downstream end (the GPU, a switch's upstream port).
struct Hop {
  PciAddress downstream;
  std::filesystem::path dir;                          // the downstream end's sysfs folder
  std::optional<std::filesystem::path> upstream_dir;  // the port above it
  // The PCI Express capability's offset in each end's config file (the
  // scratch tree's copy): Link Control and Link Status, which `pcieval
  // retrain --apply` writes and reads. 0: not found.
  std::uint16_t own_capability = 0;
  std::uint16_t upstream_capability = 0;
  LinkState link;  // as trained: the tree's current link
};

struct Device {
  int ordinal = 0;
  PciAddress address;
  std::string name;
  unsigned int device_id = 0;
  GpuSpec spec;
  std::vector<Hop> hops;      // [0]: the GPU's own link
  LinkState max_link;         // the GPU's own capability (max_link_*)
  LinkState system_max_link;  // the lower of the GPU's and its port's capability (NVML's "max")
  // The GPU's NUMA node (the tree's numa_node; -1 unknown): its host buffers
  // are taken to live there, as pcieval places them.
  int numa_node = -1;
  // The way up, for peer routes (peer_route.hpp): the GPU's folder, then
  // every bridge's; their addresses; and whether each one's ACS Control
  // redirects peer requests or completions (ReqRedir or CmpltRedir).
  std::vector<std::filesystem::path> chain;
  std::vector<PciAddress> chain_addresses;
  std::vector<bool> acs_redirect;
};

// A simulated stream's worker, as the timeline sees it: the clock advances
// only while no worker is running or about to run.
class Node;

class Worker {
 public:
  enum class State : int { kIdle, kRunning, kWaiting };
  // The node whose clock its state moves (Node::add_worker sets it).
  void attach(Node* node) { node_ = node; }
  // What it waits for; called by the timeline's thread too, so it reads
  // atomics only.
  void set_waiting(std::function<bool()> ready);
  void set_running();
  void set_idle();
  void set_pending(bool pending) { pending_.store(pending, std::memory_order_release); }
  // Running, waiting for something already there, or idle with work queued.
  [[nodiscard]] bool active() const;

 private:
  // Sets the state and tells the node when running starts or ends.
  void change(State next, std::function<bool()> ready);

  mutable std::mutex mutex_;  // orders ready_ with state_ for the timeline's reads
  Node* node_ = nullptr;
  std::atomic<State> state_{State::kIdle};
  std::atomic<bool> pending_{false};
  std::function<bool()> ready_;  // set before state_ turns kWaiting
};

// One copy in flight on the timeline.
struct Flow {
  int ordinal = 0;  // the GPU whose copy engine or SMs run it
  bool to_device = true;
  double efficiency = 1.0;
  double remaining_bytes = 0;
  // The links it crosses, each one way; a host copy: its GPU's whole path.
  std::vector<RouteLeg> legs;
  // A rate no link sets (root-complex forwarding of peer traffic), bytes/s.
  double cap_bytes_per_s = 0;  // 0: none
  std::vector<int> gpus;       // every GPU it keeps busy
  bool host_memory = true;     // reads or writes host memory (host_numa_gbps)
  bool hangs = false;          // never finishes (copy_hang, fell_off_bus)
  std::atomic<bool> done{false};
};

class Node {
 public:
  // The process's node: the scenario PCIEVAL_SIM_SCENARIO names, its machine
  // tree read from PCIEVAL_SIM_SYSFS (a scratch copy the node keeps current:
  // `check --simulate` makes it) or, unset, from the scenario's machine,
  // read-only. Loaded once; an error is kept and returned to every caller.
  [[nodiscard]] static Result<Node*> get();

  [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
  [[nodiscard]] const Scenario& scenario() const { return scenario_; }

  // What NVML and sysfs report now: the fault's link once it fired, the
  // trained link while the GPU was busy within the last second, its idle
  // link otherwise.
  [[nodiscard]] LinkState current_link(int ordinal);
  [[nodiscard]] bool lost(int ordinal);
  [[nodiscard]] bool has_fault(int ordinal, FaultKind kind) const;
  [[nodiscard]] int busy_percent(int ordinal) const;
  // Whether a copy ran on the GPU within the last second (NVML's P-state).
  [[nodiscard]] bool recently_busy(int ordinal);

  // The virtual clock, in nanoseconds.
  [[nodiscard]] std::int64_t now_ns();
  // Adds a copy of `bytes` to the timeline and returns it; the caller waits
  // for its `done` (wait()). The first copy of a copy_hang GPU, and every
  // copy of a GPU that fell off the bus, never finishes.
  [[nodiscard]] std::shared_ptr<Flow> start_flow(int ordinal, bool to_device, double bytes, double efficiency);
  // A copy of `bytes` from `source`'s memory to `destination`'s, run by
  // `initiator` (one of the two), routed as peer_route says: directly when
  // `direct` (peer access on), else staged through host memory.
  [[nodiscard]] std::shared_ptr<Flow> start_peer_flow(int initiator, int source, int destination, double bytes,
                                                      double efficiency, bool direct);
  // Whether the scenario lets `a` reach `b`'s memory (every pair but those
  // of no_peer_access); false for a GPU and itself.
  [[nodiscard]] bool peer_access(int a, int b) const;
  [[nodiscard]] PeerRoute route(int source, int destination, bool direct) const;
  // The GB/s a lone peer copy gets now (for tests and docs).
  [[nodiscard]] double lone_peer_copy_gbps(int source, int destination, bool direct, double efficiency);
  // The real seconds a pageable copy of `bytes` takes (timed by the host).
  [[nodiscard]] double pageable_seconds(int ordinal, bool to_device, double bytes);
  // Blocks the calling worker until `ready()`, letting the clock advance.
  void wait(Worker& worker, const std::function<bool()>& ready);
  // A worker started or stopped running host-side work: while any does, or
  // a copy is in flight, the clock does not run as the host's. The change
  // takes effect exactly now, so an event stamped next carries the host time
  // that passed and no more.
  void worker_changed();
  void add_worker(Worker* worker);

  // A kernel that moves no bytes (an all-reduce waiting for its ring) starts
  // or ends on the GPU: a GPU running a kernel is in P0 and keeps its link
  // trained, as one that copies does.
  void kernel_started(int ordinal);
  void kernel_ended(int ordinal);

  // Soak round `round` begins (pcieval says so through
  // pcieval_sim_begin_round; a plain check is round 1): arms the faults of
  // that round.
  void begin_round(int round);

  // The GB/s a lone copy gets on `ordinal`'s path now (for tests and docs).
  [[nodiscard]] double lone_copy_gbps(int ordinal, bool to_device, double efficiency);

 private:
  Node() = default;
  Status load();
  void run_timeline();
  bool advance_locked();
  double rate_locked(const Flow& flow) const;
  [[nodiscard]] std::shared_ptr<Flow> add_flow(std::shared_ptr<Flow> flow, double bytes);
  // The scenario's rate for a root-complex route or an ACS detour, bytes/s;
  // 0 (no cap) for the others.
  [[nodiscard]] double peer_cap_bytes_per_s(PeerRouteKind kind) const;
  // host_numa_gbps of the GPU's NUMA node, in bytes/s; 0 when not set.
  [[nodiscard]] double host_limit_bytes_per_s(const Device& device) const;
  void fire_faults_locked(Device& device);
  // Seconds of copies the GPU still runs before `fault` fires; none while
  // the fault's round has not begun.
  [[nodiscard]] std::optional<double> seconds_to_fault_locked(int ordinal, const Fault& fault) const;
  void write_link_locked(int ordinal);
  // Whether Retrain Link was set on the port above the GPU since the last
  // look; if so the faulted link retrains to its trained state (the bit
  // reads back 0, as on hardware).
  void notice_retrain_locked(int ordinal);
  LinkState loaded_link_locked(int ordinal) const;
  LinkState idle_link_locked(int ordinal) const;

  Scenario scenario_;
  std::filesystem::path sys_root_;
  bool write_tree_ = false;
  std::vector<Device> devices_;

  std::mutex mutex_;
  std::int64_t virtual_ns_ = 0;  // guarded by mutex_
  int round_ = 1;                // guarded by mutex_
  // Nothing copies and no worker works or is about to: the clock runs as the
  // host's since idle_since_ (folded into virtual_ns_ when that ends).
  // Updated when a worker starts or stops running and when copies start or
  // end; the timeline's poll catches a worker whose wait just ended.
  bool idle_ = true;
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::now();
  void update_idle_locked(std::chrono::steady_clock::time_point now);
  std::vector<std::shared_ptr<Flow>> flows_;
  std::vector<Worker*> workers_;
  struct Dynamic {
    double load_s = 0;                    // virtual seconds of copies
    double load_at_round_s = 0;           // load_s when the current round began
    int kernels = 0;                      // kernels running that move no bytes
    bool retrained = false;               // a link fault undone by Retrain Link: it does not fire again
    std::optional<LinkState> fault_link;  // a link fault that fired
    bool lost = false;                    // fell off the bus
    bool hang_consumed = false;           // copy_hang's one copy was started
    std::chrono::steady_clock::time_point last_busy{};
    std::optional<LinkState> written;  // what the tree says now
  };
  std::vector<Dynamic> dynamic_;
};

// A contract the real driver enforces was broken: says so on stderr, once
// per distinct message, and is counted (tests read the count).
void contract_violation(const std::string& what);
[[nodiscard]] int contract_violations();

}  // namespace pcieval::sim
