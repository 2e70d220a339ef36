// `pcieval check --list-probes`: the registry, as an operator reads it.
#include <iostream>
#include <sstream>
#include <string>

#include "app/commands.hpp"
#include "bench/probe.hpp"

namespace pcieval::app {
namespace {

// Wraps a paragraph at `width` columns, each line indented.
std::string wrap(std::string_view text, std::size_t width, const std::string& indent) {
  std::istringstream words{std::string(text)};
  std::string out;
  std::string line;
  std::string word;
  while (words >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

}  // namespace

int run_list_probes() {
  const ProbeRegistry registry = make_probe_registry();
  std::string out;
  for (const auto& probe : registry) {
    const char* when = probe->in_quick()                          ? "  (--quick and --full)"
                       : probe->peer_to_peer() && probe->in_p2p() ? "  (--p2p and --full)"
                                                                  : "  (--full only)";
    out += std::string(probe->key()) + when + "\n";
    out += wrap(probe->description(), 100, "    ");
  }
  std::cout << out;
  return kExitPass;
}

}  // namespace pcieval::app
