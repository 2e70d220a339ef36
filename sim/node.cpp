#include "sim/node.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include "model/measurement.hpp"
#include "topology/pci_config.hpp"
#include "validate/budget.hpp"

namespace pcieval::sim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A GPU reports its trained link for this long after its last copy, then its
// idle link: longer than the gaps between pcieval's trials and probes, as a
// real GPU's power management is.
constexpr auto kBusyHold = std::chrono::seconds(1);
// The timeline advances only after every worker has been quiet this long:
// time for workers the latch just released to take up their copies.
constexpr auto kSettle = std::chrono::microseconds(200);
constexpr auto kTimelinePoll = std::chrono::microseconds(50);
// Pageable copies stage through the driver's own pinned buffers: about half
// the pinned rate on current GPUs.
constexpr double kPageableFraction = 0.5;
// A peer copy with peer access off is staged through host memory by the
// driver: 22.2 GB/s where the same pairs copy at 26.3 GB/s directly, in
// p2pBandwidthLatencyTest on an ASUS ESC8000A-E12 with RTX 6000 Ada (Gen4;
// corpus bw_esc8000a_e12_rtx6000ada_bandwidthTest_p2p.txt).
constexpr double kStagedPeerFraction = 22.2 / 26.3;
// ACS Control bits that send peer traffic up to the root complex.
constexpr std::uint16_t kAcsRequestRedirectBit = 0x0004;
constexpr std::uint16_t kAcsCompletionRedirectBit = 0x0008;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::optional<LinkState> read_link(const fs::path& dir, const char* speed_file, const char* width_file) {
  auto gen = parse_sysfs_link_speed(read_text(dir / speed_file));
  const std::string width_text = read_text(dir / width_file);
  if (!gen || width_text.empty()) return std::nullopt;
  char* end = nullptr;
  const long width = std::strtol(width_text.c_str(), &end, 10);
  if (end == width_text.c_str() || *end != '\0' || !is_valid_link_width(static_cast<int>(width))) return std::nullopt;
  return LinkState{gen.value(), static_cast<int>(width)};
}

std::string sysfs_speed_text(PcieGen gen) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GT/s PCIe\n", transfer_rate_gts(gen));
  return text;
}

// Bytes per second a copy in one direction gets from `link`'s budget.
double budget_bytes_per_s(const LinkState& link, bool to_device) {
  auto budget = link_budget(link);
  if (!budget) return 0;
  auto gbps = direction_budget_gbps(budget.value(), to_device ? Direction::kHostToDevice : Direction::kDeviceToHost);
  return gbps ? gbps.value() * 1e9 : 0;
}

struct Contracts {
  std::mutex mutex;
  std::set<std::string> said;
  std::atomic<int> count{0};
};

Contracts& contracts() {
  static Contracts* instance = new Contracts();  // never destroyed: workers may report at exit
  return *instance;
}

// The offset of the PCI Express capability in `dir`'s config file; 0 when
// the file or the capability is not there (a tree without config files).
std::uint16_t pcie_capability(const fs::path& dir) {
  std::ifstream in(dir / "config", std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto offset = find_capability(bytes, kPciExpressCapabilityId);
  return offset ? offset.value() : 0;
}

std::optional<std::uint16_t> read_register(const fs::path& dir, std::uint16_t offset) {
  std::ifstream in(dir / "config", std::ios::binary);
  std::uint8_t bytes[2] = {};
  if (!in.seekg(offset) || !in.read(reinterpret_cast<char*>(bytes), 2)) return std::nullopt;
  return static_cast<std::uint16_t>(bytes[0] | (bytes[1] << 8));
}

void write_register(const fs::path& dir, std::uint16_t offset, std::uint16_t value) {
  std::fstream out(dir / "config", std::ios::binary | std::ios::in | std::ios::out);
  const std::uint8_t bytes[2] = {static_cast<std::uint8_t>(value & 0xff), static_cast<std::uint8_t>(value >> 8)};
  if (out.seekp(offset)) out.write(reinterpret_cast<const char*>(bytes), 2);
}

// Replaces `file`'s content at once, as a sysfs read sees an attribute:
// written beside it and renamed over it, so a reader never opens it empty or
// half written (pcieval's sampler reads these files while the node writes).
void replace_file(const fs::path& file, const std::string& text) {
  const fs::path scratch = file.parent_path() / ("." + file.filename().string() + ".new");
  std::ofstream(scratch, std::ios::trunc) << text;
  std::error_code code;
  fs::rename(scratch, file, code);
}

// Link Status with its current speed (bits 3:0) and width (bits 9:4) set to
// `link`, its other bits kept.
std::uint16_t link_status_of(std::uint16_t status, const LinkState& link) {
  const auto speed = static_cast<std::uint16_t>(generation_number(link.gen));
  return static_cast<std::uint16_t>((status & ~0x03ffU) | (speed & 0xfU) | ((link.width & 0x3fU) << 4));
}

}  // namespace

// --- Worker

void Worker::change(State next, std::function<bool()> ready) {
  {
    const std::lock_guard lock(mutex_);
    if (next == State::kWaiting) ready_ = std::move(ready);
    state_.store(next, std::memory_order_release);
  }
  // Outside the worker's lock: the timeline takes the node's lock, then the
  // worker's.
  if (node_ != nullptr) node_->worker_changed();
}

void Worker::set_waiting(std::function<bool()> ready) { change(State::kWaiting, std::move(ready)); }
void Worker::set_running() { change(State::kRunning, {}); }
void Worker::set_idle() { change(State::kIdle, {}); }

bool Worker::active() const {
  const std::lock_guard lock(mutex_);
  switch (state_.load(std::memory_order_acquire)) {
    case State::kRunning:
      return true;
    case State::kWaiting:
      return ready_ && ready_();
    case State::kIdle:
      return pending_.load(std::memory_order_acquire);
  }
  return true;
}

// --- Node

Result<Node*> Node::get() {
  static Node* node = nullptr;
  static std::optional<Error> error;
  static std::once_flag once;
  std::call_once(once, [] {
    auto* made = new Node();  // never destroyed: its threads run until the process exits
    if (auto loaded = made->load(); !loaded) {
      error = loaded.error();
      delete made;
      return;
    }
    node = made;
    std::thread([node = made] { node->run_timeline(); }).detach();
  });
  if (error) return *error;
  return node;
}

Status Node::load() {
  const char* scenario_file = std::getenv("PCIEVAL_SIM_SCENARIO");
  if (scenario_file == nullptr || *scenario_file == '\0') {
    return make_error("no scenario: PCIEVAL_SIM_SCENARIO names none (pcieval check --simulate SCENARIO sets it)");
  }
  auto scenario = load_scenario(scenario_file);
  if (!scenario) return scenario.error();
  scenario_ = std::move(scenario).value();
  const char* scratch = std::getenv("PCIEVAL_SIM_SYSFS");
  write_tree_ = scratch != nullptr && *scratch != '\0';
  sys_root_ = write_tree_ ? fs::path(scratch) : scenario_.machine / "sys";
  const std::vector<PciAddress> gpus = gpus_of_tree(sys_root_);
  if (gpus.empty()) return make_error(sys_root_.string() + " holds no NVIDIA GPU");
  for (const PciAddress& address : gpus) {
    Device device;
    device.ordinal = static_cast<int>(devices_.size());
    device.address = address;
    if (const auto spec = scenario_.gpus.find(address); spec != scenario_.gpus.end()) device.spec = spec->second;
    std::error_code code;
    const fs::path dir = fs::canonical(sys_root_ / "bus" / "pci" / "devices" / to_string(address), code);
    if (code) return make_error("cannot resolve " + to_string(address) + " in " + sys_root_.string());
    device.device_id = static_cast<unsigned int>(std::strtoul(read_text(dir / "device").c_str(), nullptr, 16));
    char fallback_name[64];
    std::snprintf(fallback_name, sizeof fallback_name, "NVIDIA simulated GPU (10de:%04x)", device.device_id);
    device.name = device.spec.name.value_or(fallback_name);
    // The way up: the GPU, then every bridge whose folder name is an address.
    std::vector<fs::path> chain{dir};
    for (fs::path up = dir.parent_path(); parse_pci_address(up.filename().string()).ok(); up = up.parent_path()) {
      chain.push_back(up);
    }
    // Physical links alternate with a switch's internal ones: the GPU's own,
    // then each switch's upstream port's to the port above it.
    for (std::size_t i = 0; i < chain.size(); i += 2) {
      Hop hop;
      hop.downstream = parse_pci_address(chain[i].filename().string()).value();
      hop.dir = chain[i];
      if (i + 1 < chain.size()) hop.upstream_dir = chain[i + 1];
      hop.own_capability = pcie_capability(chain[i]);
      if (hop.upstream_dir) hop.upstream_capability = pcie_capability(*hop.upstream_dir);
      hop.link =
          read_link(chain[i], "current_link_speed", "current_link_width")
              .value_or(
                  read_link(chain[i], "max_link_speed", "max_link_width").value_or(LinkState{PcieGen::kGen4, 16}));
      device.hops.push_back(hop);
    }
    device.max_link = read_link(dir, "max_link_speed", "max_link_width").value_or(device.hops.front().link);
    device.system_max_link = device.max_link;
    if (const auto& port = device.hops.front().upstream_dir) {
      if (auto port_max = read_link(*port, "max_link_speed", "max_link_width")) {
        device.system_max_link = lower_of(device.max_link, *port_max);
      }
    }
    device.numa_node = static_cast<int>(std::strtol(read_text(dir / "numa_node").c_str(), nullptr, 10));
    for (const fs::path& up : chain) {
      device.chain.push_back(up);
      device.chain_addresses.push_back(parse_pci_address(up.filename().string()).value());
      std::ifstream in(up / "config", std::ios::binary);
      const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const std::optional<std::uint16_t> control = acs_control(bytes);
      device.acs_redirect.push_back(control && (*control & (kAcsRequestRedirectBit | kAcsCompletionRedirectBit)) != 0);
    }
    devices_.push_back(std::move(device));
  }
  dynamic_.resize(devices_.size());
  const std::lock_guard lock(mutex_);
  for (const Device& device : devices_) write_link_locked(device.ordinal);
  return ok_status();
}

LinkState Node::loaded_link_locked(int ordinal) const {
  const Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  return state.fault_link.value_or(devices_[static_cast<std::size_t>(ordinal)].hops.front().link);
}

LinkState Node::idle_link_locked(int ordinal) const {
  const Device& device = devices_[static_cast<std::size_t>(ordinal)];
  if (device.spec.idle_link) return *device.spec.idle_link;
  return LinkState{PcieGen::kGen1, loaded_link_locked(ordinal).width};
}

LinkState Node::current_link(int ordinal) {
  const std::lock_guard lock(mutex_);
  const Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  if (state.fault_link) return *state.fault_link;
  if (Clock::now() - state.last_busy < kBusyHold) return loaded_link_locked(ordinal);
  return idle_link_locked(ordinal);
}

bool Node::recently_busy(int ordinal) {
  const std::lock_guard lock(mutex_);
  return Clock::now() - dynamic_[static_cast<std::size_t>(ordinal)].last_busy < kBusyHold;
}

bool Node::lost(int ordinal) {
  const std::lock_guard lock(mutex_);
  return dynamic_[static_cast<std::size_t>(ordinal)].lost;
}

bool Node::has_fault(int ordinal, FaultKind kind) const {
  const auto& faults = devices_[static_cast<std::size_t>(ordinal)].spec.faults;
  return std::any_of(faults.begin(), faults.end(), [kind](const Fault& f) { return f.kind == kind; });
}

int Node::busy_percent(int ordinal) const {
  for (const Fault& fault : devices_[static_cast<std::size_t>(ordinal)].spec.faults) {
    if (fault.kind == FaultKind::kBusy) return fault.utilization_pct;
  }
  return 0;
}

std::int64_t Node::now_ns() {
  const std::lock_guard lock(mutex_);
  if (!idle_) return virtual_ns_;
  return virtual_ns_ + std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - idle_since_).count();
}

void Node::worker_changed() {
  const std::lock_guard lock(mutex_);
  update_idle_locked(Clock::now());
}

void Node::update_idle_locked(Clock::time_point now) {
  // Not idle while a worker runs, or waits for something already there (a
  // copy that just ended: its end event is stamped before any host time
  // passes): Worker::active.
  const bool idle =
      flows_.empty() && std::none_of(workers_.begin(), workers_.end(), [](const Worker* w) { return w->active(); });
  if (idle == idle_) return;
  if (idle_) {
    virtual_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(now - idle_since_).count();
  } else {
    idle_since_ = now;
  }
  idle_ = idle;
}

void Node::add_worker(Worker* worker) {
  worker->attach(this);
  const std::lock_guard lock(mutex_);
  workers_.push_back(worker);
}

std::shared_ptr<Flow> Node::start_flow(int ordinal, bool to_device, double bytes, double efficiency) {
  auto flow = std::make_shared<Flow>();
  flow->ordinal = ordinal;
  flow->to_device = to_device;
  flow->efficiency = efficiency;
  flow->gpus = {ordinal};
  const Device& device = devices_[static_cast<std::size_t>(ordinal)];
  for (std::size_t hop = 0; hop < device.hops.size(); ++hop) flow->legs.push_back({ordinal, hop, to_device});
  return add_flow(std::move(flow), bytes);
}

std::shared_ptr<Flow> Node::start_peer_flow(int initiator, int source, int destination, double bytes, double efficiency,
                                            bool direct) {
  auto flow = std::make_shared<Flow>();
  flow->ordinal = initiator;
  flow->to_device = initiator == destination;
  flow->gpus = {source, destination};
  const PeerRoute path = route(source, destination, direct);
  flow->legs = path.legs;
  flow->host_memory = path.kind == PeerRouteKind::kStagedByHost;
  flow->efficiency = flow->host_memory ? efficiency * kStagedPeerFraction : efficiency;
  flow->cap_bytes_per_s = peer_cap_bytes_per_s(path.kind);
  return add_flow(std::move(flow), bytes);
}

double Node::peer_cap_bytes_per_s(PeerRouteKind kind) const {
  switch (kind) {
    case PeerRouteKind::kRootComplex:
      return scenario_.root_complex_peer_gbps * 1e9;
    case PeerRouteKind::kAcsDetour:
      return scenario_.acs_detour_peer_gbps * 1e9;
    case PeerRouteKind::kSwitch:
    case PeerRouteKind::kStagedByHost:
      break;
  }
  return 0;
}

bool Node::peer_access(int a, int b) const {
  if (a == b || a < 0 || b < 0 || a >= static_cast<int>(devices_.size()) || b >= static_cast<int>(devices_.size())) {
    return false;
  }
  const PciAddress& first = devices_[static_cast<std::size_t>(a)].address;
  const PciAddress& second = devices_[static_cast<std::size_t>(b)].address;
  return scenario_.no_peer_access.count({std::min(first, second), std::max(first, second)}) == 0;
}

PeerRoute Node::route(int source, int destination, bool direct) const {
  return peer_route(devices_[static_cast<std::size_t>(source)], devices_[static_cast<std::size_t>(destination)],
                    direct && peer_access(source, destination));
}

double Node::lone_peer_copy_gbps(int source, int destination, bool direct, double efficiency) {
  Flow flow;
  const PeerRoute path = route(source, destination, direct);
  flow.legs = path.legs;
  flow.efficiency = path.kind == PeerRouteKind::kStagedByHost ? efficiency * kStagedPeerFraction : efficiency;
  flow.ordinal = source;
  flow.host_memory = false;
  flow.cap_bytes_per_s = peer_cap_bytes_per_s(path.kind);
  const std::lock_guard lock(mutex_);
  return rate_locked(flow) / 1e9;
}

std::shared_ptr<Flow> Node::add_flow(std::shared_ptr<Flow> flow, double bytes) {
  flow->remaining_bytes = bytes;
  const int ordinal = flow->ordinal;
  const std::lock_guard lock(mutex_);
  for (int gpu : flow->gpus) {
    dynamic_[static_cast<std::size_t>(gpu)].last_busy = Clock::now();
    notice_retrain_locked(gpu);
    fire_faults_locked(devices_[static_cast<std::size_t>(gpu)]);
  }
  Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  for (int gpu : flow->gpus) {
    if (dynamic_[static_cast<std::size_t>(gpu)].lost) flow->hangs = true;
  }
  if (!state.hang_consumed && has_fault(ordinal, FaultKind::kCopyHang)) {
    state.hang_consumed = true;
    flow->hangs = true;
  }
  for (int gpu : flow->gpus) write_link_locked(gpu);
  if (bytes <= 0 && !flow->hangs) {
    flow->done.store(true, std::memory_order_release);
    return flow;
  }
  flows_.push_back(flow);
  update_idle_locked(Clock::now());
  return flow;
}

double Node::lone_copy_gbps(int ordinal, bool to_device, double efficiency) {
  const std::lock_guard lock(mutex_);
  double rate = std::numeric_limits<double>::infinity();
  const Device& device = devices_[static_cast<std::size_t>(ordinal)];
  for (std::size_t i = 0; i < device.hops.size(); ++i) {
    const LinkState link = i == 0 ? loaded_link_locked(ordinal) : device.hops[i].link;
    rate = std::min(rate, budget_bytes_per_s(link, to_device) * efficiency);
  }
  if (const double limit = host_limit_bytes_per_s(device); limit > 0) rate = std::min(rate, limit);
  return rate / 1e9;
}

double Node::pageable_seconds(int ordinal, bool to_device, double bytes) {
  const double efficiency = devices_[static_cast<std::size_t>(ordinal)].spec.copy_efficiency;
  {
    const std::lock_guard lock(mutex_);
    dynamic_[static_cast<std::size_t>(ordinal)].last_busy = Clock::now();
    write_link_locked(ordinal);
  }
  const double gbps = lone_copy_gbps(ordinal, to_device, efficiency) * kPageableFraction;
  return gbps > 0 ? bytes / (gbps * 1e9) : 0;
}

void Node::wait(Worker& worker, const std::function<bool()>& ready) {
  if (ready()) return;
  worker.set_waiting(ready);
  while (!ready()) std::this_thread::sleep_for(kTimelinePoll);
  worker.set_running();
}

double Node::host_limit_bytes_per_s(const Device& device) const {
  const auto limit = scenario_.host_numa_gbps.find(device.numa_node);
  return limit == scenario_.host_numa_gbps.end() ? 0 : limit->second * 1e9;
}

double Node::rate_locked(const Flow& flow) const {
  if (flow.hangs) return 0;
  const Device& device = devices_[static_cast<std::size_t>(flow.ordinal)];
  const auto hop_of = [this](const RouteLeg& leg) -> const Hop& {
    return devices_[static_cast<std::size_t>(leg.ordinal)].hops[leg.hop];
  };
  double rate = std::numeric_limits<double>::infinity();
  for (const RouteLeg& leg : flow.legs) {
    const Hop& hop = hop_of(leg);
    const LinkState link = leg.hop == 0 ? loaded_link_locked(leg.ordinal) : hop.link;
    // The copies crossing this link this way (a detour crosses its uplink
    // both ways: once in each count).
    int sharing = 0;
    for (const auto& other : flows_) {
      if (other->hangs) continue;
      if (std::any_of(other->legs.begin(), other->legs.end(), [&](const RouteLeg& theirs) {
            return theirs.to_device == leg.to_device && hop_of(theirs).downstream == hop.downstream;
          })) {
        ++sharing;
      }
    }
    rate = std::min(rate, budget_bytes_per_s(link, leg.to_device) * flow.efficiency / std::max(sharing, 1));
  }
  if (flow.cap_bytes_per_s > 0) rate = std::min(rate, flow.cap_bytes_per_s);
  // The host's memory: every copy of the GPUs of one NUMA node, both
  // directions, reads or writes that node's memory.
  if (const double limit = host_limit_bytes_per_s(device); limit > 0 && flow.host_memory) {
    const auto sharing = std::count_if(flows_.begin(), flows_.end(), [&](const auto& other) {
      return !other->hangs && other->host_memory &&
             devices_[static_cast<std::size_t>(other->ordinal)].numa_node == device.numa_node;
    });
    rate = std::min(rate, limit / static_cast<double>(std::max<std::ptrdiff_t>(sharing, 1)));
  }
  return rate;
}

void Node::kernel_started(int ordinal) {
  const std::lock_guard lock(mutex_);
  Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  ++state.kernels;
  state.last_busy = Clock::now();
  write_link_locked(ordinal);
}

void Node::kernel_ended(int ordinal) {
  const std::lock_guard lock(mutex_);
  Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  --state.kernels;
  state.last_busy = Clock::now();
}

void Node::begin_round(int round) {
  const std::lock_guard lock(mutex_);
  round_ = round;
  for (Dynamic& state : dynamic_) state.load_at_round_s = state.load_s;
}

std::optional<double> Node::seconds_to_fault_locked(int ordinal, const Fault& fault) const {
  if (fault.at_round && round_ < *fault.at_round) return std::nullopt;
  const Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  const double counted_s = fault.at_round ? state.load_s - state.load_at_round_s : state.load_s;
  return fault.after_load_s - counted_s;
}

void Node::fire_faults_locked(Device& device) {
  Dynamic& state = dynamic_[static_cast<std::size_t>(device.ordinal)];
  for (const Fault& fault : device.spec.faults) {
    if (fault.kind != FaultKind::kLink && fault.kind != FaultKind::kFellOffBus) continue;
    const std::optional<double> to_go_s = seconds_to_fault_locked(device.ordinal, fault);
    if (!to_go_s || *to_go_s > 1e-12) continue;
    if (fault.kind == FaultKind::kLink && !state.fault_link && !state.retrained) {
      state.fault_link = fault.link;
      write_link_locked(device.ordinal);
    } else if (fault.kind == FaultKind::kFellOffBus && !state.lost) {
      state.lost = true;
      // A GPU off the bus finishes nothing it had in flight either.
      for (auto& flow : flows_) {
        if (std::find(flow->gpus.begin(), flow->gpus.end(), device.ordinal) != flow->gpus.end()) flow->hangs = true;
      }
    }
  }
}

bool Node::advance_locked() {
  if (flows_.empty()) return false;
  std::vector<double> rates;
  rates.reserve(flows_.size());
  double step_s = std::numeric_limits<double>::infinity();
  for (const auto& flow : flows_) {
    rates.push_back(rate_locked(*flow));
    if (rates.back() > 0) step_s = std::min(step_s, flow->remaining_bytes / rates.back());
  }
  // Stop where a fault of a copying GPU fires, so the rest runs at its link.
  std::set<int> copying;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    if (rates[i] > 0) copying.insert(flows_[i]->gpus.begin(), flows_[i]->gpus.end());
  }
  for (int ordinal : copying) {
    for (const Fault& fault : devices_[static_cast<std::size_t>(ordinal)].spec.faults) {
      if (fault.kind != FaultKind::kLink && fault.kind != FaultKind::kFellOffBus) continue;
      const std::optional<double> to_go_s = seconds_to_fault_locked(ordinal, fault);
      if (to_go_s && *to_go_s > 0) step_s = std::min(step_s, *to_go_s);
    }
  }
  if (!std::isfinite(step_s)) return false;  // every copy hangs
  virtual_ns_ += static_cast<std::int64_t>(std::llround(step_s * 1e9));
  for (std::size_t i = 0; i < flows_.size(); ++i) flows_[i]->remaining_bytes -= rates[i] * step_s;
  const auto now = Clock::now();
  for (int ordinal : copying) {
    Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
    state.load_s += step_s;
    state.last_busy = now;
    fire_faults_locked(devices_[static_cast<std::size_t>(ordinal)]);
  }
  std::vector<std::shared_ptr<Flow>> running;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    // Half a byte: what floating point leaves of a finished copy.
    if (!flows_[i]->hangs && flows_[i]->remaining_bytes <= 0.5) {
      flows_[i]->done.store(true, std::memory_order_release);
    } else {
      running.push_back(flows_[i]);
    }
  }
  flows_ = std::move(running);
  update_idle_locked(Clock::now());
  return true;
}

void Node::run_timeline() {
  auto quiet_since = Clock::now();
  bool quiet = false;
  auto last_tree_check = Clock::now();
  for (;;) {
    std::this_thread::sleep_for(kTimelinePoll);
    const std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    if (now - last_tree_check > std::chrono::milliseconds(5)) {
      last_tree_check = now;
      // A copy in flight keeps its GPU busy, a hung one too: the GPU has DMA
      // outstanding, and its link does not go idle under it.
      for (const auto& flow : flows_) {
        for (int gpu : flow->gpus) dynamic_[static_cast<std::size_t>(gpu)].last_busy = now;
      }
      for (Dynamic& state : dynamic_) {
        if (state.kernels > 0) state.last_busy = now;
      }
      for (const Device& device : devices_) {
        notice_retrain_locked(device.ordinal);
        write_link_locked(device.ordinal);
      }
    }
    update_idle_locked(now);
    const bool any_active =
        std::any_of(workers_.begin(), workers_.end(), [](const Worker* worker) { return worker->active(); });
    if (flows_.empty() || any_active) {
      quiet = false;
      continue;
    }
    if (!quiet) {
      quiet = true;
      quiet_since = now;
      continue;
    }
    if (now - quiet_since < kSettle) continue;
    static_cast<void>(advance_locked());
    quiet = false;
  }
}

void Node::write_link_locked(int ordinal) {
  if (!write_tree_) return;
  Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  LinkState link = idle_link_locked(ordinal);
  if (state.fault_link) {
    link = *state.fault_link;
  } else if (Clock::now() - state.last_busy < kBusyHold) {
    link = loaded_link_locked(ordinal);
  }
  if (state.written == link) return;
  const Hop& own = devices_[static_cast<std::size_t>(ordinal)].hops.front();
  // Both ends of the link say the same, as on a real node.
  std::vector<fs::path> ends{own.dir};
  if (own.upstream_dir) ends.push_back(*own.upstream_dir);
  for (const fs::path& dir : ends) {
    replace_file(dir / "current_link_speed", sysfs_speed_text(link.gen));
    replace_file(dir / "current_link_width", std::to_string(link.width) + "\n");
  }
  // And Link Status in config space, which `pcieval retrain` reads.
  const std::pair<fs::path, std::uint16_t> configs[] = {
      {own.dir, own.own_capability}, {own.upstream_dir.value_or(fs::path()), own.upstream_capability}};
  for (const auto& [dir, capability] : configs) {
    if (capability == 0) continue;
    const auto offset = static_cast<std::uint16_t>(capability + kLinkStatusOffset);
    if (const auto status = read_register(dir, offset)) write_register(dir, offset, link_status_of(*status, link));
  }
  state.written = link;
}

void Node::notice_retrain_locked(int ordinal) {
  if (!write_tree_) return;
  const Hop& own = devices_[static_cast<std::size_t>(ordinal)].hops.front();
  if (!own.upstream_dir || own.upstream_capability == 0) return;
  const auto offset = static_cast<std::uint16_t>(own.upstream_capability + kLinkControlOffset);
  const auto control = read_register(*own.upstream_dir, offset);
  if (!control || (*control & kRetrainLinkBit) == 0) return;
  write_register(*own.upstream_dir, offset, static_cast<std::uint16_t>(*control & ~kRetrainLinkBit));
  // The link trains again, to what both ends allow: the fault is undone.
  Dynamic& state = dynamic_[static_cast<std::size_t>(ordinal)];
  if (state.fault_link) {
    state.fault_link.reset();
    state.retrained = true;
  }
  write_link_locked(ordinal);
}

void contract_violation(const std::string& what) {
  Contracts& all = contracts();
  all.count.fetch_add(1);
  const std::lock_guard lock(all.mutex);
  if (all.said.insert(what).second) std::cerr << "pcieval-sim: contract: " << what << "\n";
}

int contract_violations() { return contracts().count.load(); }

}  // namespace pcieval::sim
