// nccl-tests prints a "# Using devices" block, a two-line column header and
// one row per size with the out-of-place and in-place halves side by side.
// Column positions come from the header, which varies between versions
// (root, cputime, timestamps, per-iteration statistics).
#include "ingest/nccl_tests.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ingest/detail/tool_json.hpp"
#include "model/captured_event.hpp"
#include "model/text.hpp"

namespace pcieval {
namespace {

constexpr std::size_t kMaxRanks = 65536;

struct Half {
  std::size_t time = 0, algbw = 0, busbw = 0, wrong = 0;
  bool wrong_counts = false;  // "#wrong" (element count), not the old "error" (max deviation)
};

struct Columns {
  std::size_t size = 0, count = 1, type = 2, redop = 3;
  Half out_of_place{5, 6, 7, 8, true};
  Half in_place{9, 10, 11, 12, true};
  std::size_t needed = 13;
};

// "#       size  count  type  redop  root  time  algbw  busbw  #wrong  time ...".
std::optional<Columns> header_columns(const std::vector<std::string_view>& cells) {
  // cells[0] is "#".
  std::vector<std::string_view> names(cells.begin() + 1, cells.end());
  const auto find = [&](std::string_view name, std::size_t from) -> std::optional<std::size_t> {
    for (std::size_t i = from; i < names.size(); ++i) {
      if (names[i] == name) return i;
    }
    return std::nullopt;
  };
  const auto size = find("size", 0);
  const auto algbw = find("algbw", 0);
  if (!size || !algbw) return std::nullopt;
  Columns c;
  c.size = *size;
  c.count = find("count", 0).value_or(*size + 1);
  c.type = find("type", 0).value_or(*size + 2);
  c.redop = find("redop", 0).value_or(*size + 3);
  const auto half = [&](std::size_t from) -> std::optional<Half> {
    const auto time = find("time", from) ? find("time", from) : find("cputime", from);
    const auto alg = find("algbw", from);
    const auto bus = find("busbw", from);
    if (!time || !alg || !bus) return std::nullopt;
    Half h{*time, *alg, *bus, 0, false};
    if (const auto wrong = find("#wrong", *bus)) {
      h.wrong = *wrong;
      h.wrong_counts = true;
    } else if (const auto error = find("error", *bus)) {
      h.wrong = *error;
    } else {
      h.wrong = *bus;  // no check column: read busbw again, ignored below
    }
    return h;
  };
  const auto out = half(0);
  if (!out) return std::nullopt;
  c.out_of_place = *out;
  const auto in = half(out->busbw + 1);
  c.in_place = in.value_or(*out);
  // Every column a row is read at, in whatever order the header named them
  // ("time" may follow "busbw" in a mangled header).
  c.needed =
      1 + std::max({c.size, c.count, c.type, c.redop, c.out_of_place.time, c.out_of_place.algbw, c.out_of_place.busbw,
                    c.out_of_place.wrong, c.in_place.time, c.in_place.algbw, c.in_place.busbw, c.in_place.wrong});
  return c;
}

std::optional<NcclRow> read_half(const std::vector<std::string_view>& cells, const Columns& c, const Half& h,
                                 bool in_place, std::size_t line) {
  const auto size = tool_text::parse_count(cells[c.size]);
  const auto count = tool_text::parse_count(cells[c.count]);
  const auto time = tool_text::parse_number(cells[h.time]);
  const auto algbw = tool_text::parse_number(cells[h.algbw]);
  const auto busbw = tool_text::parse_number(cells[h.busbw]);
  if (!size || !count || !time || !algbw || !busbw) return std::nullopt;
  if (*algbw < 0 || *busbw < 0 || *algbw > kMaxPlausibleGbps || *busbw > kMaxPlausibleGbps || *time < 0) {
    return std::nullopt;
  }
  NcclRow row;
  row.size_bytes = *size;
  row.count = *count;
  row.type = std::string(cells[c.type].substr(0, 16));
  row.redop = std::string(cells[c.redop].substr(0, 16));
  row.in_place = in_place;
  row.time_us = *time;
  row.algbw_gbps = *algbw;
  row.busbw_gbps = *busbw;
  if (h.wrong_counts) row.wrong_elements = tool_text::parse_number(cells[h.wrong]);  // "N/A" when -c 0
  row.line = line;
  return row;
}

// "#  Rank  0 Group  0 Pid  88731 on  a100-44 device  6 [0000:c7:00] NVIDIA A100-SXM4-80GB".
void read_rank_line(const std::vector<std::string_view>& cells, ToolCapture& capture, std::string& first_host) {
  std::size_t device_at = 0;
  std::string_view host;
  for (std::size_t i = 0; i + 1 < cells.size(); ++i) {
    if (cells[i] == "on") host = cells[i + 1];
    if (cells[i] == "device") device_at = i + 1;
  }
  capture.nccl_ranks = capture.nccl_ranks.value_or(0) + 1;
  if (first_host.empty()) first_host = std::string(host);
  if (device_at == 0 || device_at + 1 >= cells.size() || host != first_host) return;
  const auto device = tool_text::parse_count(cells[device_at]);
  if (!device || *device >= kMaxRanks) return;
  const std::string_view bracket = cells[device_at + 1];
  if (bracket.size() > 2 && bracket.front() == '[' && bracket.back() == ']') {
    // "[0000:c7:00]" (domain:bus:device); the older "[0xc7]" names the bus only.
    if (auto address = parse_pci_address(std::string(bracket.substr(1, bracket.size() - 2)) + ".0")) {
      capture.gpu_addresses[static_cast<int>(*device)] = address.value();
    }
  }
  std::string name;
  for (std::size_t i = device_at + 2; i < cells.size() && name.size() < 120; ++i) {
    name += (name.empty() ? "" : " ") + std::string(cells[i]);
  }
  capture.gpu_names[static_cast<int>(*device)] = name;
}

// NCCL's own word (NCCL_DEBUG=INFO) that the environment turned peer-to-peer
// off: NCCL_P2P_DISABLE=1, or NCCL_P2P_LEVEL LOC (0), "peer-to-peer never".
// A shell prompt pasted above the output is not taken: it says what someone
// typed, not what NCCL read.
bool disables_p2p(std::string_view line) {
  constexpr std::string_view kInfo = "NCCL INFO ";
  const auto info = line.find(kInfo);
  if (info == std::string_view::npos) return false;
  const std::string_view message = line.substr(info + kInfo.size());
  return message.starts_with("NCCL_P2P_DISABLE set by environment to 1") ||
         message.starts_with("NCCL_P2P_LEVEL set by environment to LOC") ||
         message.starts_with("NCCL_P2P_LEVEL set by environment to 0");
}

// The same in a -J document's "env" list ("NCCL_P2P_DISABLE=1").
bool env_disables_p2p(const nlohmann::json& document) {
  const nlohmann::json* env = tool_text::member(document, "env", nlohmann::json::value_t::array);
  if (env == nullptr) return false;
  for (const nlohmann::json& item : *env) {
    if (!item.is_string()) continue;
    const std::string& text = item.get_ref<const std::string&>();
    if (text == "NCCL_P2P_DISABLE=1" || text == "NCCL_P2P_LEVEL=LOC" || text == "NCCL_P2P_LEVEL=0") return true;
  }
  return false;
}

}  // namespace

void add_all_reduce_measurements(ToolCapture& capture, const std::optional<std::string>& p2p_disabled_at) {
  if (capture.nccl_collective != "all_reduce") return;
  if (!capture.nccl_ranks || *capture.nccl_ranks < 2) {
    capture.notes.push_back(capture.source +
                            ": the all-reduce's rank count is not in the capture (or is 1): its numbers are not "
                            "read as measurements");
    return;
  }
  const int ranks = *capture.nccl_ranks;
  const double factor = all_reduce_bus_factor(ranks);
  std::vector<PciAddress> gpus;
  if (capture.gpu_addresses.size() == static_cast<std::size_t>(ranks)) {
    for (const auto& [index, address] : capture.gpu_addresses) gpus.push_back(address);
  }
  std::size_t corrupted = 0;
  std::size_t read = 0;
  for (const NcclRow& row : capture.nccl_rows) {
    if (row.in_place) continue;
    if (row.wrong_elements && *row.wrong_elements > 0) {
      ++corrupted;
      continue;
    }
    ToolMeasurement printed;
    Measurement& m = printed.measurement;
    m.probe = std::string(p2p_disabled_at ? kNcclTestsAllReduceHostProbe : kNcclTestsAllReduceProbe);
    m.subject = std::to_string(ranks) + " GPUs";
    m.gpus = gpus;
    m.direction = Direction::kAllReduce;
    m.method = CopyMethod::kNccl;
    // nccl-tests reduces device buffers; pinned is what the live all-reduce
    // probe records too (HostMemory has no "none").
    m.host_memory = HostMemory::kPinned;
    m.aggregation = Aggregation::kBusBandwidth;
    m.size_bytes = row.size_bytes;
    m.bytes_per_trial = static_cast<std::uint64_t>(std::llround(static_cast<double>(row.size_bytes) * factor));
    m.trials_gbps = {row.busbw_gbps};
    m.stats = summarize_trials(m.trials_gbps);
    m.verified = row.wrong_elements.has_value();
    printed.source = capture.source;
    printed.line = row.line;
    capture.measurements.push_back(std::move(printed));
    ++read;
  }
  std::string note = capture.source + ": nccl-tests all_reduce busbw of the out-of-place half recorded as " +
                     std::to_string(read) +
                     " measurements (the live all-reduce probes reduce into a separate "
                     "buffer too)";
  if (corrupted > 0) note += "; " + std::to_string(corrupted) + " sizes with wrong elements left out";
  note += p2p_disabled_at
              ? "; peer-to-peer disabled (" + *p2p_disabled_at +
                    "): every byte crossed each GPU's PCIe link through host memory"
              : "; the capture does not show peer-to-peer disabled (NCCL_DEBUG=INFO prints \"NCCL_P2P_DISABLE set "
                "by environment to 1\"), so NCCL may have used NVLink or peer-to-peer";
  capture.notes.push_back(std::move(note));
}

double all_reduce_bus_factor(int ranks) { return 2.0 * (ranks - 1) / ranks; }

Result<ToolCapture> parse_nccl_tests(std::string_view text, std::string_view source) {
  ToolCapture capture = empty_capture("nccl-tests", source);
  std::optional<Columns> columns;
  std::string first_host;
  std::optional<std::string> p2p_disabled_at;

  for (const tool_text::Line& line : tool_text::split_lines(text)) {
    const auto cells = tool_text::fields(line.text);
    if (cells.empty()) continue;
    if (!p2p_disabled_at && disables_p2p(line.text)) {
      p2p_disabled_at = capture.source + ":" + std::to_string(line.number);
    }
    if (cells[0] == "#" || cells[0].starts_with('#')) {
      if (cells.size() >= 3 && cells[1] == "Rank") {
        read_rank_line(cells, capture, first_host);
      } else if (cells.size() >= 3 && std::find(cells.begin(), cells.end(), "algbw") != cells.end()) {
        columns = header_columns(cells);
      } else if (cells.size() >= 5 && cells[1] == "Collective" && cells[2] == "test" && cells[3] == "starting:") {
        std::string_view program = cells[4];
        if (const auto slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
        if (program.ends_with("_perf")) program.remove_suffix(5);
        capture.nccl_collective = std::string(program.substr(0, 40));
      }
      continue;  // the rest of nccl-tests' '#' lines are settings and footers
    }
    if (columns && cells.size() >= columns->needed && tool_text::parse_count(cells[0])) {
      bool read = false;
      if (auto row = read_half(cells, *columns, columns->out_of_place, false, line.number)) {
        capture.nccl_rows.push_back(std::move(*row));
        read = true;
      }
      if (columns->in_place.busbw != columns->out_of_place.busbw) {
        if (auto row = read_half(cells, *columns, columns->in_place, true, line.number)) {
          capture.nccl_rows.push_back(std::move(*row));
          read = true;
        }
      }
      if (read) continue;
    }
    ++capture.skipped_lines;
  }
  if (capture.nccl_rows.empty()) {
    return make_error(capture.source + ": no nccl-tests result row (size, count, type, ... algbw, busbw)");
  }
  add_all_reduce_measurements(capture, p2p_disabled_at);
  return capture;
}

Result<ToolCapture> parse_nccl_tests_json(std::string_view text, std::string_view source) {
  ToolCapture capture = empty_capture("nccl-tests", source);
  auto parsed = tool_text::parse_json_object(text, capture.source, "nccl-tests -J writes one JSON object");
  if (!parsed) return parsed.error();
  const nlohmann::json& document = parsed.value();
  const nlohmann::json* results = tool_text::member(document, "results", nlohmann::json::value_t::array);
  if (results == nullptr) {
    return make_error(capture.source + ": JSON without \"results\": not nccl-tests -J output");
  }
  if (const auto args = document.find("args");
      args != document.end() && args->is_array() && !args->empty() && (*args)[0].is_string()) {
    std::string program = (*args)[0].get<std::string>();
    if (const auto slash = program.rfind('/'); slash != std::string::npos) program.erase(0, slash + 1);
    if (program.ends_with("_perf")) program.resize(program.size() - 5);
    capture.nccl_collective = program.substr(0, 40);
  }
  if (const nlohmann::json* config = tool_text::member(document, "config", nlohmann::json::value_t::object)) {
    if (const nlohmann::json* devices = tool_text::member(*config, "devices", nlohmann::json::value_t::array)) {
      capture.nccl_ranks = static_cast<int>(std::min(devices->size(), kMaxRanks));
      std::string first_host;
      for (const nlohmann::json& device : *devices) {
        if (!device.is_object()) continue;
        const auto host = device.find("hostname");
        const auto index = device.find("device");
        const auto hex = device.find("device_hex");
        if (host == device.end() || !host->is_string() || index == device.end() || !index->is_number_integer() ||
            hex == device.end() || !hex->is_string()) {
          continue;
        }
        if (first_host.empty()) first_host = host->get<std::string>();
        const auto cuda_index = index->get<std::int64_t>();
        if (host->get<std::string>() != first_host || cuda_index < 0 || cuda_index >= 65536) continue;
        if (auto address = parse_pci_address(hex->get<std::string>() + ".0")) {
          capture.gpu_addresses[static_cast<int>(cuda_index)] = address.value();
        }
      }
    }
  }
  for (const nlohmann::json& result : *results) {
    if (!result.is_object()) continue;
    const auto size = result.find("size");
    const auto count = result.find("count");
    if (size == result.end() || !size->is_number_unsigned() || count == result.end() || !count->is_number_unsigned()) {
      continue;
    }
    for (const auto& [key, in_place] : {std::pair{"out_of_place", false}, std::pair{"in_place", true}}) {
      const auto half = result.find(key);
      if (half == result.end() || !half->is_object()) continue;
      const auto number = [&](const char* name) -> std::optional<double> {
        const auto it = half->find(name);
        if (it == half->end() || !it->is_number()) return std::nullopt;
        const double value = it->get<double>();
        return std::isfinite(value) ? std::optional(value) : std::nullopt;
      };
      const auto time = number("time") ? number("time") : number("cpu_time");
      const auto algbw = number("alg_bw");
      const auto busbw = number("bus_bw");
      if (!time || !algbw || !busbw || *algbw < 0 || *busbw < 0 || *algbw > kMaxPlausibleGbps ||
          *busbw > kMaxPlausibleGbps) {
        continue;
      }
      NcclRow row;
      row.size_bytes = size->get<std::uint64_t>();
      row.count = count->get<std::uint64_t>();
      if (const auto type = result.find("type"); type != result.end() && type->is_string()) {
        row.type = type->get<std::string>().substr(0, 16);
      }
      if (const auto redop = result.find("redop"); redop != result.end() && redop->is_string()) {
        row.redop = redop->get<std::string>().substr(0, 16);
      }
      row.in_place = in_place;
      row.time_us = *time;
      row.algbw_gbps = *algbw;
      row.busbw_gbps = *busbw;
      row.wrong_elements = number("nwrong");
      row.line = 0;  // JSON has no lines worth citing: the summary names the file
      capture.nccl_rows.push_back(std::move(row));
    }
  }
  if (capture.nccl_rows.empty()) return make_error(capture.source + ": nccl-tests JSON with no result");
  add_all_reduce_measurements(capture,
                              env_disables_p2p(document) ? std::optional(capture.source + ": env") : std::nullopt);
  return capture;
}

std::string summarize_nccl(const ToolCapture& capture) {
  const std::string collective = capture.nccl_collective.empty() ? "collective" : capture.nccl_collective;
  std::string text = "nccl-tests " + collective;
  if (capture.nccl_ranks) text += " over " + std::to_string(*capture.nccl_ranks) + " ranks";
  const NcclRow* largest = nullptr;
  std::size_t wrong_rows = 0;
  std::size_t unchecked = 0;
  std::size_t factor_mismatch = 0;
  for (const NcclRow& row : capture.nccl_rows) {
    if (!row.in_place && (largest == nullptr || row.size_bytes >= largest->size_bytes)) largest = &row;
    if (!row.wrong_elements) ++unchecked;
    if (row.wrong_elements && *row.wrong_elements > 0) ++wrong_rows;
    if (collective == "all_reduce" && capture.nccl_ranks && *capture.nccl_ranks >= 1 && row.algbw_gbps >= 1.0) {
      const double expected = row.algbw_gbps * all_reduce_bus_factor(*capture.nccl_ranks);
      // The table prints two decimals (or three significant digits).
      if (std::abs(row.busbw_gbps - expected) > 0.02 * expected + 0.02) ++factor_mismatch;
    }
  }
  if (largest == nullptr) largest = &capture.nccl_rows.back();
  text += ": busbw " + gbps_text(largest->busbw_gbps, 2) + ", algbw " + gbps_text(largest->algbw_gbps, 2) + " at " +
          std::to_string(largest->size_bytes) + " bytes" + (largest->in_place ? " in place" : " out of place") + " (" +
          capture.source + (largest->line > 0 ? ":" + std::to_string(largest->line) : std::string()) + ")";
  if (wrong_rows > 0) {
    text += "; " + std::to_string(wrong_rows) +
            " results report wrong elements (#wrong > 0): the data arrived "
            "corrupted";
  } else if (unchecked == capture.nccl_rows.size()) {
    text += "; data not checked (#wrong N/A)";
  } else {
    text += "; #wrong 0";
  }
  if (factor_mismatch > 0) {
    text += "; " + std::to_string(factor_mismatch) + " rows whose busbw is not algbw x 2(n-1)/n";
  }
  return text;
}

bool looks_like_nccl_tests(std::string_view text) {
  const auto header = text.find("algbw");
  if (header != std::string_view::npos && text.find("busbw", header) != std::string_view::npos) return true;
  return text.find("# nThread ") != std::string_view::npos;
}

bool looks_like_nccl_tests_json(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return false;
  return text.find("\"results\"") != std::string_view::npos && text.find("\"nvbandwidth\"") == std::string_view::npos &&
         (text.find("\"bus_bw\"") != std::string_view::npos || text.find("\"nccl_version\"") != std::string_view::npos);
}

}  // namespace pcieval
