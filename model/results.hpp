// The results document in memory: evidence and verdicts together.
#pragma once

#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// Bump rules: MAJOR when a field is removed, renamed or changes meaning;
// MINOR when a field is added. Keep results_schema/ in step.
inline constexpr const char* kResultsSchemaVersion = "1.7.0";

struct ToolInfo {
  std::string name = "pcieval";
  std::string version;
};

struct Results {
  ToolInfo tool;
  Evidence evidence;
  // The thresholds the verdicts were drawn with (schema 1.2); built-in
  // defaults for documents older than 1.2.
  ThresholdProfile thresholds;
  std::vector<Verdict> verdicts;
  Overall overall = Overall::kPass;
  std::string summary;  // one line, fit for a Slurm drain reason
};

}  // namespace pcieval
