// `pcieval fleet merge`'s reading of many node documents, spread over a pool
// of threads. Each document is read once (fleet/node_document.hpp) and only
// its node entry is kept.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/fleet.hpp"

namespace pcieval {

struct ReadInputs {
  std::vector<FleetInput> inputs;     // one per path, in the order given
  std::vector<std::string> problems;  // one line per unreadable path, in the order given
};

// Reads every path (a results document each) with `jobs` threads (1: the
// calling thread only; more than paths.size() are not started). A path that
// cannot be read or holds no valid results document becomes a node without
// results named by its path, exit code 2, and a problem line naming the path
// (and the JSON pointer where the document is wrong). The answer does not
// depend on `jobs`: each input keeps its position on the command line, and
// the problems are listed in that order. REQUIRES: jobs >= 1.
[[nodiscard]] ReadInputs read_node_documents(const std::vector<std::string>& paths, std::size_t jobs);

// The whole merge: read_node_documents, deduplicate_hosts and build_fleet,
// with launch "merge".
[[nodiscard]] Fleet merge_node_documents(const std::vector<std::string>& paths, std::size_t jobs, ToolInfo tool,
                                         const OutlierRule& rule = {});

}  // namespace pcieval
