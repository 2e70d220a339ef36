// `pcieval validate`: judge the evidence of an earlier results document again.
// Also how every command that takes one node's results document reads it.
#include <nlohmann/json.hpp>
#include <utility>

#include "app/commands.hpp"
#include "report/input_file.hpp"
#include "report/results_reader.hpp"

namespace pcieval::app {

PcievalDocument pcieval_document_kind(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  // Cheap before the parse: diagnose asks this of kernel logs of 100 MB.
  if (first == std::string_view::npos || text[first] != '{') return PcievalDocument::kNone;
  const nlohmann::json document = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (!document.is_object()) return PcievalDocument::kNone;
  if (const auto kind = document.find("kind"); kind != document.end() && *kind == "pcieval-fleet") {
    return PcievalDocument::kFleet;
  }
  // What results_to_json always writes and no other tool's JSON has together.
  if (document.contains("schema_version") && document.contains("verdicts") && document.contains("devices")) {
    return PcievalDocument::kResults;
  }
  return PcievalDocument::kNone;
}

Result<Results> read_node_results(const std::string& path) {
  // No results document comes near this; a fleet of 10,000 nodes is ~20 MB.
  constexpr std::size_t kMaxResultsBytes = std::size_t{64} << 20;
  auto text = read_input_file(path, kMaxResultsBytes, "a pcieval results document");
  if (!text) return text.error();
  const std::string name = path == "-" ? "stdin" : path;
  auto results = results_from_json(text.value(), name);
  // A fleet document fails at its first missing field ("/host: missing"),
  // which does not tell the operator they picked the wrong kind of file.
  if (!results && pcieval_document_kind(text.value()) == PcievalDocument::kFleet) {
    return make_error(name +
                      " is a fleet document (pcieval fleet merge, --fleet-output), not one node's results: give the "
                      "results document of one node (check -o FILE); to judge the fleet again, run 'pcieval fleet "
                      "merge' on the nodes' results documents");
  }
  return results;
}

std::optional<Results> read_node_results_or_print(const std::string& path, const std::string& flag) {
  auto read = read_node_results(path);
  if (!read) {
    print_error(flag + read.error().message);
    return std::nullopt;
  }
  return std::move(read).value();
}

int run_validate(const ValidateOptions& options) {
  // `validate r.json -o r.json` re-judges the document in place: it is read
  // whole before anything is written, and replaced atomically. Any other
  // output there would replace the evidence with a rendering of it.
  const NamedFile input{"RESULTS", options.input_path, "-o"};
  if (const Status writable = check_outputs(options.judge, {&input, 1}); !writable) {
    print_error(writable.error().message);
    return kExitUsage;
  }
  auto read = read_node_results_or_print(options.input_path);
  if (!read) return kExitUsage;
  Results results = std::move(*read);
  // The file's verdicts are not trusted (they may be edited, or come from an
  // older pcieval): judge_and_report replaces them from the evidence. The note
  // keeps where the evidence came from once this pcieval rewrites the document.
  const std::string source = options.input_path == "-" ? std::string("stdin") : options.input_path;
  results.evidence.notes.push_back("re-judged from " + source + " (written by " + results.tool.name + " " +
                                   results.tool.version + " on " + results.evidence.host.hostname + ")");
  return judge_and_report(std::move(results), options.judge);
}

}  // namespace pcieval::app
