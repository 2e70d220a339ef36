// DESIGN.md's process exit codes, the one table of them: app/ returns them,
// and a fleet document records them per node and for the fleet.
#pragma once

#include "model/verdict.hpp"

namespace pcieval {

enum ExitCode : int {
  kExitPass = 0,          // every verdict pass, and at least one judged something
  kExitFail = 1,          // at least one failing verdict
  kExitUsage = 2,         // bad flag, unreadable or malformed input, output not written
  kExitInconclusive = 3,  // evidence not good enough to judge, and nothing failed
};

// The exit code of a judged outcome: pass 0, fail 1, inconclusive 3.
[[nodiscard]] constexpr int exit_code_of(Overall overall) {
  switch (overall) {
    case Overall::kPass:
      return kExitPass;
    case Overall::kFail:
      return kExitFail;
    case Overall::kInconclusive:
      return kExitInconclusive;
  }
  return kExitInconclusive;
}

}  // namespace pcieval
