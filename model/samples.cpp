#include "model/samples.hpp"

#include <map>
#include <utility>

namespace pcieval {

std::string_view to_string(SampleSource source) {
  switch (source) {
    case SampleSource::kSysfs:
      return "sysfs";
    case SampleSource::kNvml:
      return "nvml";
  }
  return "unknown";
}

Result<SampleSource> sample_source_from_string(std::string_view text) {
  if (text == "sysfs") return SampleSource::kSysfs;
  if (text == "nvml") return SampleSource::kNvml;
  return make_error("unknown sample source '" + std::string(text) + "'");
}

std::vector<LinkSample> compact_link_samples(const std::vector<LinkSample>& samples) {
  using Key = std::pair<PciAddress, SampleSource>;
  const auto same_state = [](const LinkSample& a, const LinkSample& b) {
    return a.speed == b.speed && a.width == b.width && a.under_load == b.under_load;
  };
  // The index of each port's last sample, so it is kept even when unchanged.
  std::map<Key, std::size_t> last;
  for (std::size_t i = 0; i < samples.size(); ++i) last[{samples[i].port, samples[i].source}] = i;
  std::map<Key, const LinkSample*> previous;
  std::vector<LinkSample> kept;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const LinkSample& sample = samples[i];
    const Key key{sample.port, sample.source};
    const auto before = previous.find(key);
    const bool changed = before == previous.end() || !same_state(*before->second, sample);
    if (changed || last[key] == i) kept.push_back(sample);
    previous[key] = &sample;
  }
  return kept;
}

}  // namespace pcieval
