// Before/after comparison of two judged results of one node, for verifying a
// fix: per device, how its link, its copy bandwidth and its verdict changed,
// and whether anything got worse.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/measurement.hpp"
#include "model/results.hpp"

namespace pcieval {

struct CompareOptions {
  // A median that fell by more than this fraction is worse. Trials on a
  // healthy, idle node agree within a few percent (PCIE-FACTS section 3);
  // 10 % is well outside that noise.
  double max_drop_fraction = 0.10;
};

struct BandwidthChange {
  std::string probe;
  Direction direction = Direction::kHostToDevice;
  std::optional<double> before_gbps;  // nullopt: not measured in that run
  std::optional<double> after_gbps;
};

// The outcome of one subject in one run: its worst verdict, or absent.
struct SubjectOutcome {
  bool present = false;
  VerdictStatus status = VerdictStatus::kPass;
  std::string code;
};

struct SubjectChange {
  std::string subject;                     // a device address, "node", "probe <key>"
  std::optional<std::string> link_before;  // the device link as negotiated (under load when sampled), "Gen3 x16"
  std::optional<std::string> link_after;
  std::vector<BandwidthChange> bandwidth;  // h2d_ce and d2h_ce of a GPU alone
  SubjectOutcome before;
  SubjectOutcome after;
  bool worse = false;
  std::vector<std::string> why_worse;
  // "0000:17:00.0 link Gen3 x16 -> Gen5 x16, h2d_ce 12.1 -> 53.8 GB/s, link_downgraded -> pass"
  std::string line;
};

struct Comparison {
  std::vector<SubjectChange> subjects;  // in the after run's verdict order, then subjects only before had
  Overall after_overall = Overall::kPass;
  bool any_worse = false;
};

// REQUIRES: both results judged (verdicts set). A subject is worse when its
// worst verdict became more severe (pass < inconclusive < failing), when it
// disappeared, or when one of its judged medians fell by more than
// max_drop_fraction.
[[nodiscard]] Comparison compare_results(const Results& before, const Results& after, const CompareOptions& options);

// --baseline: one bandwidth_low verdict (code bandwidth_below_baseline) per
// h2d_ce or d2h_ce median of `now` that is more than max_drop_fraction below
// the same GPU's median in `baseline`, a known-good run of the same node.
// Subjects and probes the baseline lacks are not judged (nothing to compare).
[[nodiscard]] std::vector<Verdict> judge_against_baseline(const Evidence& now, const Evidence& baseline,
                                                          const CompareOptions& options);

}  // namespace pcieval
