#include "fleet/fleet_json.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "report/document_values.hpp"
#include "report/input_file.hpp"
// The field-by-field reader of report/ documents; the fleet document is one
// of pcieval's documents and is read with the same strictness.
#include "report/json_document.hpp"

namespace pcieval {
namespace {

using Json = nlohmann::ordered_json;
using json_document::DocumentReader;
using json_document::Node;

constexpr std::string_view kKind = "pcieval-fleet";
using document_values::kOveralls;
using document_values::kStatuses;
constexpr std::array kDirections = {Direction::kHostToDevice, Direction::kDeviceToHost, Direction::kHostToHost};

// Which GPUs a number is about (device id, model, link) and which number it
// is (probe, direction): the fields a node's GPU measurement, a group and an
// outlier share, appended to `object` in that order (read_gpu_and_number
// reads them back).
template <class Record>
void write_gpu_and_number(Json& object, const Record& record) {
  object["device_id"] = record.device_id;
  object["model"] = record.model;
  object["link"] = record.link;
  object["probe"] = record.probe;
  object["direction"] = to_string(record.direction);
}

Json verdicts_json(const std::vector<FleetVerdict>& verdicts) {
  Json out = Json::array();
  for (const FleetVerdict& v : verdicts) {
    out.push_back({{"subject", v.subject}, {"status", to_string(v.status)}, {"code", v.code}, {"reason", v.reason}});
  }
  return out;
}

Json node_json(const FleetNode& node) {
  Json verdicts = verdicts_json(node.verdicts);
  Json superseded = Json::array();
  for (const SupersededDocument& d : node.superseded) {
    superseded.push_back({{"source", d.source},
                          {"has_results", d.has_results},
                          {"overall", to_string(d.overall)},
                          {"exit_code", d.exit_code},
                          {"reason", d.reason},
                          {"verdicts", verdicts_json(d.verdicts)}});
  }
  Json gpus = Json::array();
  for (const FleetGpuMeasurement& g : node.gpus) {
    Json gpu{{"gpu", g.gpu}};
    write_gpu_and_number(gpu, g);
    gpu["median_gbps"] = g.median_gbps;
    gpus.push_back(std::move(gpu));
  }
  return Json{{"host", node.host},
              {"source", node.source},
              {"rank", node.rank ? Json(*node.rank) : Json(nullptr)},
              {"has_results", node.has_results},
              {"tool_version", node.has_results ? Json(node.tool_version) : Json(nullptr)},
              {"overall", to_string(node.overall)},
              {"exit_code", node.exit_code},
              {"reason", node.reason},
              {"verdicts", std::move(verdicts)},
              {"gpus", std::move(gpus)},
              {"superseded", std::move(superseded)}};
}

Json allreduce_json(const FleetAllReduce& a) {
  return Json{{"status", to_string(a.status)},
              {"reason", a.reason.empty() ? Json(nullptr) : Json(a.reason)},
              {"nodes", a.nodes},
              {"gpus", a.gpus},
              {"size_bytes", a.size_bytes},
              {"trials_busbw_gbps", a.trials_busbw_gbps},
              {"median_busbw_gbps", a.median_busbw_gbps},
              {"median_algbw_gbps", a.median_algbw_gbps},
              {"notes", a.notes}};
}

int exit_code(DocumentReader& in, const Node& node) {
  const std::int64_t code = in.integer(node, 0, 3);
  return static_cast<int>(code);
}

std::size_t size(DocumentReader& in, const Node& node) {
  return static_cast<std::size_t>(in.integer(node, 0, std::numeric_limits<std::int32_t>::max()));
}

double non_negative(DocumentReader& in, const Node& node) {
  const double value = in.number(node);
  if (in.ok() && value < 0) in.fail(node, "expected a number >= 0, got " + node.json->dump());
  return value;
}

void check_version(DocumentReader& in, const Node& node) {
  const std::string version = in.text(node);
  if (!in.ok()) return;
  int major = -1;
  const auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), major);
  // MAJOR.MINOR.PATCH with a major of 1; later minors add fields, ignored here.
  const bool shaped = error == std::errc{} && end != version.data() && *end == '.' &&
                      std::count(version.begin(), version.end(), '.') == 2;
  if (!shaped) {
    in.fail(node, json_document::quote(version) + " is not a schema version MAJOR.MINOR.PATCH");
  } else if (major != 1) {
    in.fail(node, "fleet schema version " + version + " is not supported: this pcieval reads 1.x (it writes " +
                      kFleetSchemaVersion + ")");
  }
}

// Which GPUs a number is about (device id, model, link) and which number it
// is (probe, direction): the fields a node's GPU measurement, a group and an
// outlier share, read in that order.
template <class Record>
void read_gpu_and_number(DocumentReader& in, const Node& node, Record& record) {
  record.device_id = in.text(in.member(node, "device_id"));
  record.model = in.text(in.member(node, "model"));
  record.link = in.text(in.member(node, "link"));
  record.probe = in.text(in.member(node, "probe"));
  record.direction = in.one_of(in.member(node, "direction"), kDirections);
}

std::vector<FleetVerdict> read_verdicts(DocumentReader& in, const Node& node) {
  std::vector<FleetVerdict> verdicts;
  for (const Node& v : in.items(node)) {
    verdicts.push_back(FleetVerdict{in.text(in.member(v, "subject")), in.one_of(in.member(v, "status"), kStatuses),
                                    in.text(in.member(v, "code")), in.text(in.member(v, "reason"))});
  }
  return verdicts;
}

FleetNode read_node(DocumentReader& in, const Node& node) {
  FleetNode n;
  n.host = in.text(in.member(node, "host"));
  n.source = in.text(in.member(node, "source"));
  const auto rank = in.integer_or_null(in.member(node, "rank"), 0, std::numeric_limits<std::int32_t>::max());
  if (rank) n.rank = static_cast<int>(*rank);
  n.has_results = in.boolean(in.member(node, "has_results"));
  n.tool_version = in.text_or_null(in.member(node, "tool_version")).value_or("");
  n.overall = in.one_of(in.member(node, "overall"), kOveralls);
  n.exit_code = exit_code(in, in.member(node, "exit_code"));
  n.reason = in.text(in.member(node, "reason"));
  n.verdicts = read_verdicts(in, in.member(node, "verdicts"));
  for (const Node& g : in.items(in.member(node, "gpus"))) {
    FleetGpuMeasurement gpu;
    gpu.gpu = in.text(in.member(g, "gpu"));
    read_gpu_and_number(in, g, gpu);
    gpu.median_gbps = non_negative(in, in.member(g, "median_gbps"));
    n.gpus.push_back(std::move(gpu));
  }
  // 1.2.0; a 1.0 or 1.1 document replaced nothing it could tell of.
  if (auto superseded = in.member_if_present(node, "superseded")) {
    for (const Node& d : in.items(*superseded)) {
      SupersededDocument document;
      document.source = in.text(in.member(d, "source"));
      document.has_results = in.boolean(in.member(d, "has_results"));
      document.overall = in.one_of(in.member(d, "overall"), kOveralls);
      document.exit_code = exit_code(in, in.member(d, "exit_code"));
      document.reason = in.text(in.member(d, "reason"));
      document.verdicts = read_verdicts(in, in.member(d, "verdicts"));
      n.superseded.push_back(std::move(document));
    }
  }
  return n;
}

constexpr std::array kAllReduceStatuses = {FleetAllReduceStatus::kMeasured, FleetAllReduceStatus::kSkipped,
                                           FleetAllReduceStatus::kFailed};

FleetAllReduce read_allreduce(DocumentReader& in, const Node& node) {
  FleetAllReduce a;
  a.status = in.one_of(in.member(node, "status"), kAllReduceStatuses);
  a.reason = in.text_or_null(in.member(node, "reason")).value_or("");
  a.nodes = static_cast<int>(size(in, in.member(node, "nodes")));
  a.gpus = static_cast<int>(size(in, in.member(node, "gpus")));
  a.size_bytes = in.count(in.member(node, "size_bytes"));
  for (const Node& trial : in.items(in.member(node, "trials_busbw_gbps"))) {
    a.trials_busbw_gbps.push_back(non_negative(in, trial));
  }
  a.median_busbw_gbps = non_negative(in, in.member(node, "median_busbw_gbps"));
  a.median_algbw_gbps = non_negative(in, in.member(node, "median_algbw_gbps"));
  a.notes = in.strings(in.member(node, "notes"));
  return a;
}

Fleet read_fleet(DocumentReader& in, const Node& root) {
  Fleet fleet;
  if (!root.json->is_object()) {
    in.fail(root, "expected an object (a pcieval fleet document)");
    return fleet;
  }
  const Node kind = in.member(root, "kind");
  if (in.ok() && in.text(kind) != kKind) {
    in.fail(kind, "expected \"pcieval-fleet\": not a pcieval fleet document");
    return fleet;
  }
  check_version(in, in.member(root, "schema_version"));
  const Node tool = in.member(root, "tool");
  fleet.tool.name = in.text(in.member(tool, "name"));
  fleet.tool.version = in.text(in.member(tool, "version"));
  fleet.launch = in.text(in.member(root, "launch"));
  if (in.ok() && fleet.launch != "merge" && fleet.launch != "mpi") {
    in.fail(in.member(root, "launch"), "expected \"merge\" or \"mpi\"");
  }
  const Node rule = in.member(root, "outlier_rule");
  fleet.rule.k = non_negative(in, in.member(rule, "k"));
  fleet.rule.max_fraction_of_median = non_negative(in, in.member(rule, "max_fraction_of_group_median"));
  fleet.rule.min_group_size = size(in, in.member(rule, "min_group_size"));
  for (const Node& node : in.items(in.member(root, "nodes"))) fleet.nodes.push_back(read_node(in, node));
  for (const Node& g : in.items(in.member(root, "groups"))) {
    FleetGroup group;
    read_gpu_and_number(in, g, group);
    group.gpus = size(in, in.member(g, "gpus"));
    group.median_gbps = non_negative(in, in.member(g, "median_gbps"));
    group.mad_gbps = non_negative(in, in.member(g, "mad_gbps"));
    group.judged = in.boolean(in.member(g, "judged"));
    group.threshold_gbps = in.number_or_null(in.member(g, "threshold_gbps")).value_or(0);
    fleet.groups.push_back(std::move(group));
  }
  for (const Node& o : in.items(in.member(root, "outliers"))) {
    FleetOutlier outlier;
    outlier.host = in.text(in.member(o, "host"));
    outlier.gpu = in.text(in.member(o, "gpu"));
    read_gpu_and_number(in, o, outlier);
    outlier.median_gbps = non_negative(in, in.member(o, "median_gbps"));
    outlier.group_median_gbps = non_negative(in, in.member(o, "group_median_gbps"));
    outlier.mad_gbps = non_negative(in, in.member(o, "mad_gbps"));
    outlier.threshold_gbps = in.number(in.member(o, "threshold_gbps"));
    outlier.group_gpus = size(in, in.member(o, "group_gpus"));
    fleet.outliers.push_back(std::move(outlier));
  }
  fleet.problems = in.strings(in.member(root, "problems"));
  if (auto allreduce = in.member_if_present(root, "allreduce")) fleet.allreduce = read_allreduce(in, *allreduce);
  fleet.overall = in.one_of(in.member(root, "overall"), kOveralls);
  fleet.exit_code = exit_code(in, in.member(root, "exit_code"));
  fleet.summary = in.text(in.member(root, "summary"));
  return fleet;
}

}  // namespace

std::string fleet_to_json(const Fleet& fleet) {
  Json groups = Json::array();
  for (const FleetGroup& g : fleet.groups) {
    Json group = Json::object();
    write_gpu_and_number(group, g);
    group.update({{"gpus", g.gpus},
                  {"median_gbps", g.median_gbps},
                  {"mad_gbps", g.mad_gbps},
                  {"judged", g.judged},
                  {"threshold_gbps", g.judged ? Json(g.threshold_gbps) : Json(nullptr)}});
    groups.push_back(std::move(group));
  }
  Json outliers = Json::array();
  for (const FleetOutlier& o : fleet.outliers) {
    Json outlier{{"host", o.host}, {"gpu", o.gpu}};
    write_gpu_and_number(outlier, o);
    outlier.update({{"median_gbps", o.median_gbps},
                    {"group_median_gbps", o.group_median_gbps},
                    {"mad_gbps", o.mad_gbps},
                    {"threshold_gbps", o.threshold_gbps},
                    {"group_gpus", o.group_gpus}});
    outliers.push_back(std::move(outlier));
  }
  Json document{{"kind", kKind},
                {"schema_version", kFleetSchemaVersion},
                {"tool", {{"name", fleet.tool.name}, {"version", fleet.tool.version}}},
                {"launch", fleet.launch},
                {"outlier_rule",
                 {{"k", fleet.rule.k},
                  {"mad_scale", kMadToSigma},
                  {"max_fraction_of_group_median", fleet.rule.max_fraction_of_median},
                  {"min_group_size", fleet.rule.min_group_size},
                  {"probes", {"h2d_ce", "d2h_ce"}}}},
                {"nodes", Json::array()},
                {"groups", std::move(groups)},
                {"outliers", std::move(outliers)},
                {"problems", fleet.problems},
                {"overall", to_string(fleet.overall)},
                {"exit_code", fleet.exit_code},
                {"summary", fleet.summary}};
  if (fleet.allreduce) document["allreduce"] = allreduce_json(*fleet.allreduce);
  const std::string text = document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  if (fleet.nodes.empty()) return text;
  // The nodes are most of a large fleet's document (420 MB for 100,000
  // nodes of 8 GPUs): each is rendered alone and spliced in, so only one
  // node's JSON tree exists at once, and the text is allocated once at its
  // final size, so that no growth ever holds two copies of it. That takes
  // two renderings of each node, the first to measure. The text is what
  // dump() of the whole tree gives: each node indented two levels.
  constexpr std::string_view kIndent = "    ";
  std::string one;
  const auto render = [&](const FleetNode& node) -> const std::string& {
    one = node_json(node).dump(2, ' ', false, Json::error_handler_t::replace);
    return one;
  };
  std::size_t nodes_bytes = std::string_view("[\n  ]").size();
  for (std::size_t i = 0; i < fleet.nodes.size(); ++i) {
    const std::string& rendered = render(fleet.nodes[i]);
    const auto lines = static_cast<std::size_t>(std::count(rendered.begin(), rendered.end(), '\n')) + 1;
    nodes_bytes += lines * kIndent.size() + rendered.size() + (i + 1 < fleet.nodes.size() ? 2 : 1);
  }
  // Unique: the only member at the root's indentation whose value is an empty array named "nodes".
  constexpr std::string_view kPlaceholder = "\n  \"nodes\": [],\n";
  const std::size_t at = text.find(kPlaceholder) + kPlaceholder.size() - 4;  // at "[]"
  std::string out;
  out.reserve(text.size() - 2 + nodes_bytes);
  out.append(text, 0, at);
  out += "[\n";
  for (std::size_t i = 0; i < fleet.nodes.size(); ++i) {
    const std::string_view rendered = render(fleet.nodes[i]);
    std::size_t start = 0;
    for (std::size_t end = rendered.find('\n'); end != std::string_view::npos; end = rendered.find('\n', start)) {
      out += kIndent;
      out.append(rendered.substr(start, end + 1 - start));
      start = end + 1;
    }
    out += kIndent;
    out.append(rendered.substr(start));
    out += i + 1 < fleet.nodes.size() ? ",\n" : "\n";
  }
  out += "  ]";
  out.append(text, at + 2);
  return out;
}

Result<Fleet> fleet_from_json(std::string_view text, std::string_view source_name) {
  try {
    auto document = json_document::parse(text, source_name);
    if (!document) return document.error();
    DocumentReader in(source_name);
    Fleet fleet = read_fleet(in, Node{&document.value(), ""});
    if (!in.ok()) return in.error();
    return fleet;
  } catch (const std::exception& e) {
    return make_error(std::string(source_name) + ": cannot read the fleet document: " + e.what());
  } catch (...) {
    return make_error(std::string(source_name) + ": cannot read the fleet document");
  }
}

Result<Fleet> read_fleet_file(const std::string& path) {
  // A fleet of 10,000 nodes with 8 GPUs each is about 20 MB; the cap only
  // stops /dev/zero.
  constexpr std::size_t kMaxFleetBytes = std::size_t{1} << 30;
  auto text = read_input_file(path, kMaxFleetBytes, "a pcieval fleet document");
  if (!text) return text.error();
  return fleet_from_json(text.value(), path == "-" ? "stdin" : path);
}

}  // namespace pcieval
