// check --reference FILE: the output of pcieval-copy-reference (bench/perf/reference)
// beside this run's h2d_ce and d2h_ce of the same GPU, recorded in the
// results document (Evidence::reference_copies). make gpu-check runs the
// reference just before `pcieval check --full --reference reference.json`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/evidence.hpp"
#include "model/result.hpp"

namespace pcieval::app {

// What the reference measured: its GPU and each direction's median.
struct ReferenceRun {
  std::string tool;
  PciAddress gpu;
  std::uint64_t size_bytes = 0;
  double h2d_median_gbps = 0;
  double d2h_median_gbps = 0;
};

// Parses pcieval-copy-reference's JSON. Errors name the missing or bad field.
[[nodiscard]] Result<ReferenceRun> parse_reference_run(std::string_view json_text);

// One ReferenceCopy per direction: the reference's median beside the median
// of pcieval's h2d_ce (d2h_ce) measurement of the same GPU, and their ratio;
// pcieval's side is null where this run has no such measurement.
[[nodiscard]] std::vector<ReferenceCopy> compare_with_reference(const ReferenceRun& reference,
                                                                const std::vector<Measurement>& measurements);

}  // namespace pcieval::app
