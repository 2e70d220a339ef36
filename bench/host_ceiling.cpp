#include "bench/host_ceiling.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "bench/host_copy.hpp"
#include "bench/trials.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval {

std::vector<int> host_ceiling_nodes(const Evidence& evidence, std::span<const int> machine_nodes) {
  std::set<int> nodes;
  for (const auto& device : evidence.devices) {
    if (device.function.kind != DeviceKind::kGpu) continue;
    std::optional<int> node;
    if (device.function.numa_node) node = device.function.numa_node.value();
    if (device.locality && device.locality->numa_node) node = device.locality->numa_node;
    if (node && std::find(machine_nodes.begin(), machine_nodes.end(), *node) != machine_nodes.end()) {
      nodes.insert(*node);
    }
  }
  if (nodes.empty()) nodes.insert(machine_nodes.begin(), machine_nodes.end());
  return {nodes.begin(), nodes.end()};
}

namespace {

class HostCeilingProbe final : public Probe {
 public:
  [[nodiscard]] std::string_view key() const override { return "host_ceiling"; }
  [[nodiscard]] std::string progress_subject(const ProbeContext& /*context*/) const override { return "host memory"; }

  [[nodiscard]] std::string_view description() const override {
    return "Host-memory ceiling: one thread per CPU of a NUMA node copies between two page-locked buffers bound to "
           "that node, all at once; the rate is every byte over the wall time from the moment every thread is running "
           "(a start gate, as the GPU probes' latch) to the last one finishing (total_over_wall_time, counting each "
           "byte once, not read plus write). It runs on each node "
           "nearest a GPU, or every node when there is none, and needs no GPU: a GPU's host-to-device rate cannot "
           "exceed what its node's memory feeds.";
  }

  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext& context) const override {
    if (context.config.simulated_node) {
      return "simulated node: it would measure this host's memory, not the scenario's machine";
    }
    if (context.topology == nullptr) return "the hwloc topology of this machine could not be loaded";
    if (numa_nodes(*context.topology).empty()) return "hwloc lists no NUMA node";
    return std::nullopt;
  }

  [[nodiscard]] ProbeMeasurements run(const ProbeContext& context) const override {
    ProbeMeasurements output;
    const HwlocTopology& topology = *context.topology;
    const std::vector<int> machine_nodes = numa_nodes(topology);
    for (int node : host_ceiling_nodes(context.evidence, machine_nodes)) {
      const std::string subject = "numa" + std::to_string(node);
      HostCopier::Options options;
      options.numa_node = node;
      options.size_bytes = static_cast<std::size_t>(context.config.size_bytes);
      auto copier = HostCopier::create(topology, options);
      if (!copier) {
        output.errors.push_back(subject + ": " + copier.error().message);
        continue;
      }
      if (!copier->pages_locked()) {
        output.warnings.push_back(subject + ": buffers not page-locked (" + copier->lock_error() +
                                  "); they are bound and faulted in, and labelled pageable");
      }
      TrialPlan plan;
      plan.warmup_trials = context.config.warmup_trials;
      plan.trials = context.config.trials;
      plan.bytes_per_trial = copier->size_bytes();
      // Host copies load no GPU link, so no LoadScope here.
      auto rates = run_trials(plan, [&] { return copier.value().timed_copy(); });
      if (!rates) {
        output.errors.push_back(subject + ": " + rates.error().message);
        continue;
      }
      Measurement m;
      m.probe = std::string(key());
      m.subject = subject;
      m.direction = Direction::kHostToHost;
      m.method = CopyMethod::kCpuThreads;
      m.host_memory = copier->pages_locked() ? HostMemory::kPinned : HostMemory::kPageable;
      m.aggregation = Aggregation::kTotalOverWallTime;
      m.size_bytes = copier->size_bytes();
      m.bytes_per_trial = copier->size_bytes();
      m.trials_gbps = std::move(rates).value();
      m.stats = summarize_trials(m.trials_gbps);
      m.host_numa_node = copier->numa_node();
      m.verified = true;
      output.measurements.push_back(std::move(m));
    }
    return output;
  }
};

}  // namespace

std::unique_ptr<Probe> make_host_ceiling_probe() { return std::make_unique<HostCeilingProbe>(); }

}  // namespace pcieval
