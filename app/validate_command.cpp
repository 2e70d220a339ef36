// `pcieval validate`: judge the evidence of an earlier results document again.
#include <utility>

#include "app/commands.hpp"
#include "report/results_reader.hpp"

namespace pcieval::app {

int run_validate(const ValidateOptions& options) {
  auto read = read_results_file(options.input_path);
  if (!read) {
    print_error(read.error().message);
    return kExitUsage;
  }
  Results results = std::move(read).value();
  // The file's verdicts are not trusted (they may be edited, or come from an
  // older pcieval): judge_and_report replaces them from the evidence. The note
  // keeps where the evidence came from once this pcieval rewrites the document.
  const std::string source = options.input_path == "-" ? std::string("stdin") : options.input_path;
  results.evidence.notes.push_back("re-judged from " + source + " (written by " + results.tool.name + " " +
                                   results.tool.version + " on " + results.evidence.host.hostname + ")");
  return judge_and_report(std::move(results), options.judge);
}

}  // namespace pcieval::app
