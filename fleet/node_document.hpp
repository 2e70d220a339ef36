// Reading one node's results document straight into its fleet entry, for
// `pcieval fleet merge` of thousands of documents. The full reader
// (report/results_reader.hpp) builds every piece of evidence through a JSON
// DOM of std::map nodes and ran at about 50 MB/s: 10 s for 10,000 nodes.
// This one parses with simdjson into a tape it reuses from one document to
// the next and keeps only the node entry.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "fleet/fleet.hpp"
#include "model/result.hpp"

namespace pcieval {

// One reader per thread: it owns the parser's buffers, which grow to the
// largest document read and are then reused. Move-only.
class NodeDocumentReader {
 public:
  NodeDocumentReader();
  NodeDocumentReader(NodeDocumentReader&&) noexcept;
  NodeDocumentReader& operator=(NodeDocumentReader&&) noexcept;
  NodeDocumentReader(const NodeDocumentReader&) = delete;
  NodeDocumentReader& operator=(const NodeDocumentReader&) = delete;
  ~NodeDocumentReader();

  // The entry node_from_results(results_from_json(text, source_name), source)
  // gives, with the same strictness where it matters to the entry:
  //  - the text must be one JSON value in full (syntax and UTF-8 throughout);
  //  - schema_version, tool, host, devices, measurements, verdicts, overall
  //    and summary (what the entry is made of) are checked value by value by
  //    the full reader's rules: a malformed device, measurement or verdict is
  //    refused even where the entry would not use it;
  //  - every other member the schema version requires must be present with
  //    its JSON type; its contents are not read.
  // When any check fails the full reader reads the text, so the error is its
  // one line "<source_name>: <JSON pointer>: <problem>", word for word. Never
  // throws.
  [[nodiscard]] Result<FleetNode> read(std::string_view text, std::string_view source_name, std::string source);

  // As read(), for the file at `path` (the same size cap and error lines as
  // read_results_file); the node's source is the path.
  [[nodiscard]] Result<FleetNode> read_file(const std::string& path);

  // How many documents so far the full reader had to read (refused ones, and
  // any the fast path could not take): a merge of good documents has none.
  [[nodiscard]] std::size_t full_reads() const { return full_reads_; }

 private:
  // `padded`: simdjson's padding follows the text, so it is parsed in place.
  [[nodiscard]] Result<FleetNode> read_text(std::string_view text, bool padded, std::string_view source_name,
                                            std::string source);

  struct Parser;
  std::unique_ptr<Parser> parser_;
  std::size_t full_reads_ = 0;
};

}  // namespace pcieval
