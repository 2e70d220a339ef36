#include "ingest/nvidia_smi_topo.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pcieval {
namespace {

constexpr std::string_view kTopoTool = "nvidia-smi topo -p2p";
constexpr std::uint64_t kMaxTopoGpus = 4096;

// "GPU3" -> 3.
std::optional<int> topo_gpu_label(std::string_view cell) {
  if (!cell.starts_with("GPU")) return std::nullopt;
  const auto index = tool_text::parse_count(cell.substr(3));
  if (!index || *index >= kMaxTopoGpus) return std::nullopt;
  return static_cast<int>(*index);
}

// The legend's words, as PeerStatus spells them; "X" (self) is "".
std::optional<std::string_view> topo_status_word(std::string_view cell) {
  static constexpr std::pair<std::string_view, std::string_view> kWords[] = {
      {"X", ""},
      {"OK", "ok"},
      {"CNS", "chipset_not_supported"},
      {"GNS", "gpu_not_supported"},
      {"TNS", "topology_not_supported"},
      {"NS", "not_supported"},
      {"U", "unknown"},
  };
  for (const auto& [legend, word] : kWords) {
    if (cell == legend) return word;
  }
  return std::nullopt;
}

// A matrix row: "GPU0 X OK CNS", every cell after the label a legend word.
std::optional<std::pair<int, std::vector<std::string_view>>> topo_matrix_row(std::string_view line) {
  const auto cells = tool_text::fields(line);
  if (cells.size() < 2) return std::nullopt;
  const auto gpu = topo_gpu_label(cells[0]);
  if (!gpu) return std::nullopt;
  std::vector<std::string_view> words;
  bool self = false;
  for (std::size_t i = 1; i < cells.size(); ++i) {
    const auto word = topo_status_word(cells[i]);
    if (!word) return std::nullopt;
    self |= word->empty();
    words.push_back(*word);
  }
  if (!self) return std::nullopt;
  return std::pair{*gpu, std::move(words)};
}

// The capability letter of a pasted "nvidia-smi topo -p2p r" or
// "--p2pstatus w" command; nullopt when the line is no such command.
std::optional<char> topo_command_capability(std::string_view line) {
  for (std::string_view option : {"-p2p ", "--p2pstatus ", "-p2p=", "--p2pstatus="}) {
    const auto at = line.find(option);
    if (at == std::string_view::npos || line.find("topo") == std::string_view::npos) continue;
    const auto fields = tool_text::fields(line.substr(at + option.size()));
    if (!fields.empty() && fields[0].size() == 1) return fields[0][0];
  }
  return std::nullopt;
}

}  // namespace

Result<ToolCapture> parse_nvidia_smi_topo_p2p(std::string_view text, std::string_view source) {
  ToolCapture capture = empty_capture(kTopoTool, source);
  std::optional<char> letter;
  std::vector<int> columns;
  bool matrices = false;
  std::size_t unread_rows = 0;
  std::string unread_why;
  for (const tool_text::Line& line : tool_text::split_lines(text)) {
    if (const auto command = topo_command_capability(line.text)) {
      letter = command;
      columns.clear();
      continue;
    }
    const auto cells = tool_text::fields(line.text);
    if (cells.empty()) continue;
    // The header: "GPU0 GPU1 ..." (a leading tab or blank before it).
    bool header = true;
    std::vector<int> labels;
    for (std::string_view cell : cells) {
      const auto gpu = topo_gpu_label(cell);
      header = header && gpu.has_value();
      if (gpu) labels.push_back(*gpu);
    }
    if (header) {
      columns = std::move(labels);
      continue;
    }
    const auto row = topo_matrix_row(line.text);
    if (!row) {
      ++capture.skipped_lines;  // the legend, prompts, anything else
      continue;
    }
    matrices = true;
    std::optional<PeerCapability> capability;
    if (letter == 'r') capability = PeerCapability::kRead;
    if (letter == 'w') capability = PeerCapability::kWrite;
    if (!capability) {
      ++unread_rows;
      unread_why = letter ? "shows capability '" + std::string(1, *letter) +
                                "', which has no peer status word (only r and w are read)"
                          : "does not say which capability it shows (paste the `nvidia-smi topo -p2p r` command "
                            "line above it)";
      continue;
    }
    const auto& [gpu, words] = *row;
    for (std::size_t i = 0; i < words.size(); ++i) {
      const int peer = i < columns.size() ? columns[i] : static_cast<int>(i);
      if (peer == gpu || words[i].empty()) continue;
      capture.peer_status.push_back(ToolPeerStatus{gpu, peer, *capability, std::string(words[i]),
                                                   "nvidia-smi topo -p2p " + std::string(1, *letter), capture.source,
                                                   line.number});
    }
  }
  if (!matrices) return make_error(capture.source + ": no nvidia-smi topo -p2p matrix (rows of GPU<n> X OK ...)");
  if (unread_rows > 0) {
    capture.notes.push_back(capture.source + ": " + std::to_string(unread_rows) +
                            " nvidia-smi topo -p2p matrix rows not read: the matrix " + unread_why);
  }
  return capture;
}

bool looks_like_nvidia_smi_topo_p2p(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (topo_matrix_row(text.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace pcieval
