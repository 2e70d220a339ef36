// `pcieval compare BEFORE AFTER`: did the fix work, and did nothing else get
// worse? Both documents are judged again with this pcieval's rules first, so
// a file written by an older version is compared on equal terms.
#include <iostream>
#include <utility>

#include "app/commands.hpp"
#include "report/results_reader.hpp"
#include "validate/compare.hpp"

namespace pcieval::app {

int run_compare(const CompareOptions& options) {
  auto before = read_results_file(options.before_path);
  if (!before) {
    print_error(before.error().message);
    return kExitUsage;
  }
  auto after = read_results_file(options.after_path);
  if (!after) {
    print_error(after.error().message);
    return kExitUsage;
  }
  judge(before.value(), std::nullopt);
  judge(after.value(), std::nullopt);
  const Comparison comparison = compare_results(before.value(), after.value(), pcieval::CompareOptions{});

  for (const SubjectChange& change : comparison.subjects) std::cout << change.line << "\n";
  const std::string after_text(to_string(comparison.after_overall));
  if (comparison.any_worse) {
    std::cout << "compare: something got worse (after: " << after_text << ")\n";
    return kExitFail;
  }
  std::cout << "compare: nothing got worse; after: " << after_text << " (" << after.value().summary << ")\n";
  return exit_code_of(comparison.after_overall);
}

}  // namespace pcieval::app
