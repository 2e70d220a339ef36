#include "topology/error_counters.hpp"

#include <array>
#include <cerrno>
#include <utility>

#include "model/device.hpp"
#include "topology/link_sampler.hpp"
#include "topology/sysfs_reader.hpp"

namespace pcieval {
namespace {

// An AER file is a line per named bit: well under a kilobyte on any kernel.
constexpr std::size_t kAerFileBytes = 8192;

struct AerFile {
  std::string_view file;
  std::string_view counter;
};

constexpr std::array<AerFile, 3> kAerFiles = {{
    {"aer_dev_correctable", kCounterAerCorrectable},
    {"aer_dev_fatal", kCounterAerFatal},
    {"aer_dev_nonfatal", kCounterAerNonfatal},
}};

void read_aer_totals(const std::filesystem::path& dir, const PciAddress& device, CounterSnapshot& snapshot) {
  for (const AerFile& aer : kAerFiles) {
    const std::string path = (dir / aer.file).string();
    std::array<char, kAerFileBytes> buffer{};
    const SysfsAttribute read = read_sysfs_attribute(path.c_str(), buffer);
    // No file: the kernel was built without AER or the device lacks the
    // capability. Common and not a fault, so it is not noted.
    if (read.error == ENOENT) continue;
    if (read.error != 0) {
      snapshot.notes.push_back(to_string(device) + ": " + std::string(aer.counter) +
                               " not read: " + describe_read_error(read.error, path));
      continue;
    }
    const AerCounters counters = parse_aer_counters(read.text);
    if (!counters.total) {
      snapshot.notes.push_back(to_string(device) + ": " + std::string(aer.file) + " has no TOTAL_ERR_* line");
      continue;
    }
    snapshot.values[device][std::string(aer.counter)] = *counters.total;
  }
}

}  // namespace

CounterSnapshot read_error_counters(const std::filesystem::path& sysfs_root, const std::vector<PciAddress>& devices,
                                    const NvmlReader* nvml, const std::vector<PciAddress>& nvml_gpus) {
  CounterSnapshot snapshot;
  const std::filesystem::path root = sysfs_root / "bus" / "pci" / "devices";
  for (const PciAddress& device : devices) read_aer_totals(root / to_string(device), device, snapshot);
  if (nvml != nullptr) {
    for (const PciAddress& gpu : nvml_gpus) {
      auto replay = nvml->read_replay_counter(gpu);
      if (replay) {
        snapshot.values[gpu][std::string(kCounterNvmlReplay)] = replay.value();
      } else {
        snapshot.notes.push_back(to_string(gpu) + ": " + std::string(kCounterNvmlReplay) +
                                 " not read: " + replay.error().message);
      }
    }
  }
  return snapshot;
}

std::vector<CounterDelta> counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after) {
  std::vector<CounterDelta> deltas;
  // Both maps are ordered, so walking `before` gives device-then-name order.
  for (const auto& [device, counters] : before.values) {
    const auto later = after.values.find(device);
    if (later == after.values.end()) continue;
    for (const auto& [name, value] : counters) {
      const auto match = later->second.find(name);
      if (match == later->second.end()) continue;
      deltas.push_back(CounterDelta{device, name, value, match->second});
    }
  }
  return deltas;
}

}  // namespace pcieval
