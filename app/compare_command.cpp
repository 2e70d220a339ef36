// `pcieval compare BEFORE AFTER`: did the fix work, and did nothing else get
// worse? Both documents are judged again with this pcieval's rules and one
// threshold profile first (--profile, else the AFTER document's), so a file
// written by an older version or with other thresholds is compared on equal
// terms.
#include <iostream>
#include <utility>

#include "app/commands.hpp"
#include "report/profile_json.hpp"
#include "validate/compare.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval::app {

int run_compare(const CompareOptions& options) {
  auto before = read_node_results_or_print(options.before_path);
  if (!before) return kExitUsage;
  auto after = read_node_results_or_print(options.after_path);
  if (!after) return kExitUsage;
  // Two machines, not one node before and after a fix: still compared (a
  // suspect node against a good one of the same model is a fair question),
  // but said first, so nobody reads "nothing got worse" as a fix verified.
  const std::string& before_host = before.value().evidence.host.hostname;
  const std::string& after_host = after.value().evidence.host.hostname;
  if (!before_host.empty() && !after_host.empty() && before_host != after_host) {
    std::cout << "compare: BEFORE is of host '" << terminal_text(before_host) << "', AFTER of host '"
              << terminal_text(after_host)
              << "': two machines, compared by PCI address, not one node before and after a fix\n";
  }
  ThresholdProfile profile = after.value().thresholds;
  if (options.profile_path) {
    auto read = read_profile_file(*options.profile_path);
    if (read) {
      if (const Status valid = check_profile(read.value()); !valid)
        read = Error{*options.profile_path + ": " + valid.error().message};
    }
    if (!read) {
      print_error("--profile: " + read.error().message);
      return kExitUsage;
    }
    profile = std::move(read).value();
  } else if (profile_to_json(before.value().thresholds) != profile_to_json(profile)) {
    std::cout << "note: BEFORE was judged with thresholds '" << terminal_text(before.value().thresholds.name) << "' ("
              << terminal_text(before.value().thresholds.source) << "); both are judged again with AFTER's '"
              << terminal_text(profile.name) << "' (" << terminal_text(profile.source) << ")\n";
  }
  before.value().thresholds = profile;
  after.value().thresholds = profile;
  judge(before.value(), std::nullopt);
  judge(after.value(), std::nullopt);
  pcieval::CompareOptions compare;
  compare.max_drop_fraction = profile.defaults.baseline_max_drop_fraction;
  const Comparison comparison = compare_results(before.value(), after.value(), compare);

  // Subjects and reasons in these lines come from the two documents.
  for (const SubjectChange& change : comparison.subjects) std::cout << terminal_text(change.line) << "\n";
  const std::string after_text(to_string(comparison.after_overall));
  if (comparison.any_worse) {
    std::cout << "compare: something got worse (after: " << after_text << ")\n";
    return kExitFail;
  }
  std::cout << "compare: nothing got worse; after: " << after_text << " (" << terminal_text(after.value().summary)
            << ")\n";
  return exit_code_of(comparison.after_overall);
}

}  // namespace pcieval::app
