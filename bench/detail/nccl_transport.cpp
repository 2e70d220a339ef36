#include "bench/detail/nccl_transport.hpp"

#include <stdlib.h>  // mkstemps (POSIX, not in <cstdlib>)
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

namespace pcieval {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kInfoTag = "NCCL INFO";

bool starts_with_digit(std::string_view text) {
  return !text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) != 0;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// "1[1]" (P2P/indirect's relay rank and device) and "0(1)" (a NET device
// and its PXN proxy rank) both start with a digit.
std::string normalize_transport(std::string_view via) {
  std::vector<std::string_view> parts = split(via, '/');
  const std::string_view family = parts.front();
  if ((family == "NET" || family == "COLLNET") && parts.size() >= 3 && starts_with_digit(parts[2])) {
    parts.erase(parts.begin() + 2);
  } else if (family == "P2P" && parts.size() >= 3 && parts[1] == "indirect" && starts_with_digit(parts[2])) {
    parts.erase(parts.begin() + 2);
  }
  std::string joined;
  for (std::string_view part : parts) {
    if (part.empty()) continue;
    if (!joined.empty()) joined += '/';
    joined += part;
  }
  return joined;
}

// The transport of a channel line's message ("Channel 00/0 : 0[0] -> 1[1]
// via P2P/CUMEM/read"), or nullopt when the message is not one: a ring
// listing, another line, or one cut short before its transport.
std::optional<std::string> channel_transport(std::string_view message) {
  std::string_view rest;
  // "Ring": NCCL 2.4 to 2.6 named the channels rings.
  for (std::string_view keyword : {"Channel ", "CollNet ", "Coll ", "Ring "}) {
    if (message.substr(0, keyword.size()) == keyword) {
      rest = message.substr(keyword.size());
      break;
    }
  }
  if (!starts_with_digit(rest)) return std::nullopt;
  const std::size_t colon = rest.find(" : ");
  const std::size_t via = rest.find(" via ");
  if (colon == std::string_view::npos || via == std::string_view::npos || via < colon) return std::nullopt;
  std::string_view transport = rest.substr(via + 5);
  // Some 2.x releases add the communicator: "via P2P/IPC comm 0x55d0 nRanks 08".
  if (const std::size_t comm = transport.find(" comm "); comm != std::string_view::npos) {
    transport = transport.substr(0, comm);
  }
  transport = trim(transport);
  if (transport.empty() || std::isalpha(static_cast<unsigned char>(transport.front())) == 0) return std::nullopt;
  std::string normalized = normalize_transport(transport);
  if (normalized.empty()) return std::nullopt;
  return normalized;
}

// N in "... V nvls channels, ..." ("16 coll channels, 16 collnet channels,
// 16 nvls channels, 32 p2p channels, 32 p2p channels per peer"; before 2.19
// without the collnet count).
std::optional<int> nvls_channel_count(std::string_view message) {
  if (message.find(" coll channels, ") == std::string_view::npos) return std::nullopt;
  const std::size_t at = message.find(" nvls channels");
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(message[begin - 1])) != 0) --begin;
  if (begin == at || at - begin > 6) return std::nullopt;
  int count = 0;
  for (std::size_t i = begin; i < at; ++i) count = count * 10 + (message[i] - '0');
  return count;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::string plural(std::uint64_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

std::string describe(const NcclTransportSummary& summary) {
  std::string text;
  auto add = [&text](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  for (const NcclTransportUse& use : summary.transports) {
    add(use.transport + " (" + plural(use.connections, "channel connection", "channel connections") + ")");
  }
  if (summary.transports.empty()) add("no channel connections logged");
  if (summary.nvls) {
    add(summary.nvls_channels > 0
            ? "NVLS (" + plural(static_cast<std::uint64_t>(summary.nvls_channels), "channel", "channels") + ")"
            : std::string("NVLS"));
  }
  if (summary.nvls_tree) add("NVLS tree");
  if (summary.collnet) add("CollNet");
  return text;
}

// NCCL_DEBUG_FILE expands %h and %p, and "%%" to "%": a temporary directory
// with a '%' in its name must reach NCCL doubled.
std::string escape_percent(const std::string& path) {
  std::string escaped;
  for (char c : path) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  return escaped;
}

}  // namespace

NcclTransportSummary summarize_nccl_transports(std::string_view text) {
  NcclTransportSummary summary;
  std::map<std::string, std::uint64_t, std::less<>> counts;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;

    const std::size_t info = line.find(kInfoTag);
    if (info == std::string_view::npos) {
      if (line.find("NCCL WARN") != std::string_view::npos) ++summary.nccl_lines;
      continue;
    }
    ++summary.nccl_lines;
    const std::string_view message = trim(line.substr(info + kInfoTag.size()));

    if (auto transport = channel_transport(message)) {
      if (starts_with(*transport, "COLLNET")) summary.collnet = true;
      ++counts[*transport];
    } else if (starts_with(message, "NVLS comm ") && message.find(" headRank ") != std::string_view::npos) {
      summary.nvls = true;
    } else if (auto nvls_channels = nvls_channel_count(message)) {
      summary.nvls_channels = std::max(summary.nvls_channels, *nvls_channels);
      if (*nvls_channels > 0) summary.nvls = true;
    } else if (starts_with(message, "Connected NVLS tree")) {
      summary.nvls = true;
      summary.nvls_tree = true;
    } else if (starts_with(message, "Connected collnet") || starts_with(message, "Connected Collnet") ||
               (starts_with(message, "rank ") && message.find(" Connected CollNet") != std::string_view::npos)) {
      summary.collnet = true;
    } else if (starts_with(message, "Connected all rings")) {
      summary.rings_connected = true;
    } else if (starts_with(message, "Connected all trees")) {
      summary.trees_connected = true;
    }
  }
  for (auto& [transport, connections] : counts) summary.transports.push_back({transport, connections});
  std::stable_sort(summary.transports.begin(), summary.transports.end(),
                   [](const NcclTransportUse& a, const NcclTransportUse& b) { return a.connections > b.connections; });
  summary.summary = describe(summary);
  return summary;
}

NcclDebugCapture::NcclDebugCapture(const fs::path& directory) {
  // An empty value is what NCCL reads as unset, so it is taken for unset too.
  for (const char* name : {"NCCL_DEBUG", "NCCL_DEBUG_FILE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') {
      reason_ = std::string(name) + "=" + value +
                " is set by the user: NCCL logs where they asked and pcieval does not read that log, so it cannot "
                "say which transport NCCL chose (unset " +
                name + " to let pcieval capture it)";
      return;
    }
  }
  std::string pattern = (directory / "pcieval-nccl-XXXXXX.log").string();
  const int fd = ::mkstemps(pattern.data(), 4);  // mode 0600: the log names hosts, NICs and addresses
  if (fd < 0) {
    reason_ = "cannot create a file for NCCL's log in " + directory.string() + " (" + std::strerror(errno) + ")";
    return;
  }
  ::close(fd);
  path_ = pattern;
  environment_.set("NCCL_DEBUG", "INFO");
  // INIT alone: every channel, NVLS and CollNet line is logged under it.
  environment_.set("NCCL_DEBUG_SUBSYS", "INIT");
  environment_.set("NCCL_DEBUG_FILE", escape_percent(path_.string()));
}

NcclDebugCapture::~NcclDebugCapture() {
  // NCCL may keep the file open to the end of the process; its later lines
  // go to the unlinked file and vanish with it.
  if (path_.empty()) return;
  std::error_code ignored;
  fs::remove(path_, ignored);
}

std::uint64_t NcclDebugCapture::mark() const {
  if (path_.empty()) return 0;
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path_, error);
  return error ? 0 : static_cast<std::uint64_t>(size);
}

Result<NcclDebugCapture::Text> NcclDebugCapture::read_since(std::uint64_t mark) const {
  if (path_.empty()) return make_error("no NCCL log is captured: " + reason_);
  std::ifstream in(path_, std::ios::binary);
  if (!in) return make_error("cannot read NCCL's log " + path_.string() + " (" + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(std::max<std::streamoff>(in.tellg(), 0));
  const std::uint64_t from = mark <= size ? mark : 0;
  in.seekg(static_cast<std::streamoff>(from));
  Text read;
  read.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  const std::size_t last_newline = read.text.rfind('\n');
  read.text.resize(last_newline == std::string::npos ? 0 : last_newline + 1);
  read.next_mark = from + read.text.size();
  return read;
}

}  // namespace pcieval
