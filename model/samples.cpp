#include "model/samples.hpp"

#include <map>
#include <utility>

#include "model/enum_names.hpp"

namespace pcieval {

constexpr EnumNames<SampleSource, 2> kSampleSourceNames{
    {{SampleSource::kSysfs, "sysfs"}, {SampleSource::kNvml, "nvml"}}};
static_assert(names_every_value_in_order(kSampleSourceNames));

std::string_view to_string(SampleSource source) { return name_of(kSampleSourceNames, source); }

Result<SampleSource> sample_source_from_string(std::string_view text) {
  return value_of(kSampleSourceNames, text, "sample source");
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
