#include "model/measurement.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <utility>

#include "model/enum_names.hpp"
#include "model/median.hpp"
#include "model/units.hpp"

namespace pcieval {
namespace {

constexpr EnumNames<Direction, 5> kDirectionNames{{{Direction::kHostToDevice, "h2d"},
                                                   {Direction::kDeviceToHost, "d2h"},
                                                   {Direction::kHostToHost, "h2h"},
                                                   {Direction::kAllReduce, "all_reduce"},
                                                   {Direction::kDeviceToDevice, "d2d"}}};
constexpr EnumNames<CopyMethod, 4> kMethodNames{{{CopyMethod::kCopyEngine, "ce"},
                                                 {CopyMethod::kSmKernel, "sm"},
                                                 {CopyMethod::kCpuThreads, "cpu"},
                                                 {CopyMethod::kNccl, "nccl"}}};
constexpr EnumNames<HostMemory, 2> kMemoryNames{{{HostMemory::kPinned, "pinned"}, {HostMemory::kPageable, "pageable"}}};
constexpr EnumNames<Aggregation, 5> kAggregationNames{{{Aggregation::kAlone, "alone"},
                                                       {Aggregation::kWithReverse, "with_reverse"},
                                                       {Aggregation::kWithPeers, "with_peers"},
                                                       {Aggregation::kTotalOverWallTime, "total_over_wall_time"},
                                                       {Aggregation::kBusBandwidth, "bus_bandwidth"}}};
constexpr EnumNames<ProbeStatus, 3> kStatusNames{
    {{ProbeStatus::kRan, "ran"}, {ProbeStatus::kSkipped, "skipped"}, {ProbeStatus::kFailed, "failed"}}};

}  // namespace

std::string_view to_string(Direction direction) { return name_of(kDirectionNames, direction); }
std::string_view to_string(CopyMethod method) { return name_of(kMethodNames, method); }
std::string_view to_string(HostMemory memory) { return name_of(kMemoryNames, memory); }
std::string_view to_string(Aggregation aggregation) { return name_of(kAggregationNames, aggregation); }
std::string_view to_string(ProbeStatus status) { return name_of(kStatusNames, status); }

Result<Direction> direction_from_string(std::string_view text) { return value_of(kDirectionNames, text, "direction"); }
Result<CopyMethod> copy_method_from_string(std::string_view text) {
  return value_of(kMethodNames, text, "copy method");
}
Result<HostMemory> host_memory_from_string(std::string_view text) {
  return value_of(kMemoryNames, text, "host memory");
}
Result<Aggregation> aggregation_from_string(std::string_view text) {
  return value_of(kAggregationNames, text, "aggregation");
}
Result<ProbeStatus> probe_status_from_string(std::string_view text) {
  return value_of(kStatusNames, text, "probe status");
}

TrialStats summarize_trials(std::span<const double> trials_gbps) {
  TrialStats stats;
  if (trials_gbps.empty()) return stats;
  std::vector<double> sorted(trials_gbps.begin(), trials_gbps.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  stats.min_gbps = sorted.front();
  stats.max_gbps = sorted.back();
  if (n > 1) {
    const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
    double squares = 0;
    for (double x : sorted) squares += (x - mean) * (x - mean);
    const double stddev = std::sqrt(squares / static_cast<double>(n - 1));
    stats.cv = mean > 0 ? stddev / mean : 0;
  }
  // Last: median_of reorders, and the sums above are taken in sorted order.
  stats.median_gbps = median_of(sorted);
  return stats;
}

double gbps_of(std::uint64_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / kBytesPerGigabyte; }

}  // namespace pcieval
