// compact_link_samples: what a long soak keeps of its 50 ms link readings.
#include "model/samples.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace pcieval {
namespace {

PciAddress bdf(const char* text) { return *parse_pci_address(text); }

LinkSample at(const char* port, double t_s, bool loaded, PcieGen gen, SampleSource source = SampleSource::kSysfs) {
  return LinkSample{bdf(port), source, t_s, loaded, gen, 16};
}

std::vector<double> times(const std::vector<LinkSample>& samples) {
  std::vector<double> out;
  for (const auto& s : samples) out.push_back(s.t_s);
  return out;
}

TEST(CompactLinkSamples, KeepsFirstChangesAndLastPerPort) {
  const char* gpu = "0000:18:00.0";
  const std::vector<LinkSample> samples = {
      at(gpu, 0.00, false, PcieGen::kGen1), at(gpu, 0.05, true, PcieGen::kGen1),  // load begins
      at(gpu, 0.10, true, PcieGen::kGen5),                                        // trained up
      at(gpu, 0.15, true, PcieGen::kGen5),  at(gpu, 0.20, true, PcieGen::kGen5),
      at(gpu, 0.25, true, PcieGen::kGen3),  // retrained lower
      at(gpu, 0.30, true, PcieGen::kGen3),  at(gpu, 0.35, true, PcieGen::kGen3),
  };
  EXPECT_EQ(times(compact_link_samples(samples)), (std::vector<double>{0.00, 0.05, 0.10, 0.25, 0.35}));
}

TEST(CompactLinkSamples, PortsAndSourcesAreSeparateSeries) {
  const char* gpu = "0000:18:00.0";
  const char* port = "0000:17:01.0";
  const std::vector<LinkSample> samples = {
      at(gpu, 0.0, true, PcieGen::kGen5),
      at(port, 0.0, true, PcieGen::kGen5),
      at(gpu, 0.0, true, PcieGen::kGen5, SampleSource::kNvml),
      at(gpu, 0.1, true, PcieGen::kGen5),
      at(port, 0.1, true, PcieGen::kGen5),
      at(gpu, 0.1, true, PcieGen::kGen5, SampleSource::kNvml),
      at(gpu, 0.2, true, PcieGen::kGen5),
      at(port, 0.2, true, PcieGen::kGen5),
      at(gpu, 0.2, true, PcieGen::kGen5, SampleSource::kNvml),
  };
  // Nothing changed: each of the three series keeps its first and last reading.
  EXPECT_EQ(compact_link_samples(samples).size(), 6u);
}

TEST(CompactLinkSamples, AFailedReadingIsAChange) {
  const char* gpu = "0000:18:00.0";
  LinkSample failed = at(gpu, 0.1, true, PcieGen::kGen5);
  failed.speed.reset();
  failed.width.reset();
  const std::vector<LinkSample> samples = {at(gpu, 0.0, true, PcieGen::kGen5), failed,
                                           at(gpu, 0.2, true, PcieGen::kGen5), at(gpu, 0.3, true, PcieGen::kGen5)};
  EXPECT_EQ(times(compact_link_samples(samples)), (std::vector<double>{0.0, 0.1, 0.2, 0.3}));
}

TEST(CompactLinkSamples, NothingInNothingOut) { EXPECT_TRUE(compact_link_samples({}).empty()); }

}  // namespace
}  // namespace pcieval
