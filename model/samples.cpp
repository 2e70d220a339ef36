#include "model/samples.hpp"

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

}  // namespace pcieval
