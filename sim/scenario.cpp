#include "sim/scenario.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

namespace pcieval::sim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Declares `lhs` from a Result, or returns its error.
#define PCIEVAL_SIM_ASSIGN(lhs, expr)                         \
  auto PCIEVAL_SIM_CONCAT(sim_result_, __LINE__) = (expr);    \
  if (!PCIEVAL_SIM_CONCAT(sim_result_, __LINE__)) {           \
    return PCIEVAL_SIM_CONCAT(sim_result_, __LINE__).error(); \
  }                                                           \
  lhs = std::move(PCIEVAL_SIM_CONCAT(sim_result_, __LINE__)).value()
#define PCIEVAL_SIM_CONCAT_INNER(a, b) a##b
#define PCIEVAL_SIM_CONCAT(a, b) PCIEVAL_SIM_CONCAT_INNER(a, b)

// A scenario is a few kilobytes; anything near this is not one.
constexpr std::uintmax_t kMaxScenarioBytes = std::uintmax_t{1} << 20;

Status only_keys(const Json& object, const std::string& where, const std::set<std::string>& allowed) {
  for (const auto& [key, value] : object.items()) {
    static_cast<void>(value);
    if (allowed.count(key) == 0) return make_error(where + ": unknown key '" + key + "'");
  }
  return ok_status();
}

Result<double> number_in(const Json& object, const std::string& key, const std::string& where, double low,
                         double high) {
  const Json& value = object.at(key);
  if (!value.is_number()) return make_error(where + "." + key + ": not a number");
  const double number = value.get<double>();
  if (!(number >= low && number <= high)) {
    return make_error(where + "." + key + ": " + value.dump() + " is outside " + std::to_string(low) + ".." +
                      std::to_string(high));
  }
  return number;
}

// The events that take no parameter.
std::optional<FaultKind> plain_event(const std::string& event) {
  static const std::map<std::string, FaultKind> kEvents{
      {"copy_hang", FaultKind::kCopyHang},
      {"corrupt_copy", FaultKind::kCorruptCopy},
      {"mig", FaultKind::kMig},
      {"nccl_setup_hang", FaultKind::kNcclSetupHang},
      {"nccl_setup_fail", FaultKind::kNcclSetupFail},
      {"nccl_allreduce_hang", FaultKind::kNcclAllReduceHang},
  };
  const auto found = kEvents.find(event);
  if (found == kEvents.end()) return std::nullopt;
  return found->second;
}

Result<Fault> parse_fault(const Json& item, const std::string& where) {
  if (!item.is_object()) return make_error(where + ": not an object");
  Fault fault;
  if (item.contains("event")) {
    if (!item.at("event").is_string()) return make_error(where + ".event: not a string");
    const std::string event = item.at("event").get<std::string>();
    if (event == "fell_off_bus") {
      fault.kind = FaultKind::kFellOffBus;
      if (auto ok = only_keys(item, where, {"event", "after_load_s", "at_round"}); !ok) return ok.error();
    } else if (event == "busy") {
      fault.kind = FaultKind::kBusy;
      if (auto ok = only_keys(item, where, {"event", "utilization_pct"}); !ok) return ok.error();
      if (!item.contains("utilization_pct")) return make_error(where + ": busy needs utilization_pct");
      PCIEVAL_SIM_ASSIGN(double pct, number_in(item, "utilization_pct", where, 0, 100));
      fault.utilization_pct = static_cast<int>(pct);
    } else if (const auto plain = plain_event(event)) {
      fault.kind = *plain;
      if (auto ok = only_keys(item, where, {"event"}); !ok) return ok.error();
    } else {
      return make_error(where + ": unknown event '" + event +
                        "' (fell_off_bus, busy, copy_hang, corrupt_copy, mig, nccl_setup_hang, nccl_setup_fail, "
                        "nccl_allreduce_hang; or a \"link\" fault)");
    }
  } else {
    fault.kind = FaultKind::kLink;
    if (auto ok = only_keys(item, where, {"after_load_s", "at_round", "link"}); !ok) return ok.error();
    if (!item.contains("link") || !item.at("link").is_string()) {
      return make_error(where + ": a fault is an \"event\" or a \"link\" to retrain to");
    }
    auto link = parse_link_name(item.at("link").get<std::string>());
    if (!link) return make_error(where + ".link: " + link.error().message);
    fault.link = link.value();
  }
  if (item.contains("after_load_s")) {
    PCIEVAL_SIM_ASSIGN(double seconds, number_in(item, "after_load_s", where, 0, 1e6));
    fault.after_load_s = seconds;
  }
  if (item.contains("at_round")) {
    const Json& round = item.at("at_round");
    if (!round.is_number_integer() || round.get<long long>() < 1 || round.get<long long>() > 1000000) {
      return make_error(where + ".at_round: " + round.dump() + " is not a soak round (1, 2, ...)");
    }
    fault.at_round = static_cast<int>(round.get<long long>());
  }
  return fault;
}

Result<GpuSpec> parse_gpu(const Json& item, const std::string& where) {
  if (!item.is_object()) return make_error(where + ": not an object");
  if (auto ok = only_keys(item, where, {"name", "idle_link", "copy_efficiency", "sm_efficiency", "faults"}); !ok) {
    return ok.error();
  }
  GpuSpec gpu;
  if (item.contains("name")) {
    if (!item.at("name").is_string()) return make_error(where + ".name: not a string");
    gpu.name = item.at("name").get<std::string>();
  }
  if (item.contains("idle_link")) {
    if (!item.at("idle_link").is_string()) return make_error(where + ".idle_link: not a string");
    auto link = parse_link_name(item.at("idle_link").get<std::string>());
    if (!link) return make_error(where + ".idle_link: " + link.error().message);
    gpu.idle_link = link.value();
  }
  if (item.contains("copy_efficiency")) {
    PCIEVAL_SIM_ASSIGN(double efficiency, number_in(item, "copy_efficiency", where, 0.01, 1.0));
    gpu.copy_efficiency = efficiency;
  }
  if (item.contains("sm_efficiency")) {
    PCIEVAL_SIM_ASSIGN(double efficiency, number_in(item, "sm_efficiency", where, 0.01, 1.0));
    gpu.sm_efficiency = efficiency;
  }
  if (item.contains("faults")) {
    const Json& faults = item.at("faults");
    if (!faults.is_array()) return make_error(where + ".faults: not an array");
    for (std::size_t i = 0; i < faults.size(); ++i) {
      PCIEVAL_SIM_ASSIGN(Fault fault, parse_fault(faults[i], where + ".faults[" + std::to_string(i) + "]"));
      gpu.faults.push_back(fault);
    }
  }
  return gpu;
}

std::string read_small_file(const fs::path& path, std::string& error) {
  std::error_code code;
  const auto size = fs::file_size(path, code);
  if (code) {
    error = "cannot read " + path.string() + ": " + code.message();
    return {};
  }
  if (size > kMaxScenarioBytes) {
    error = path.string() + " is " + std::to_string(size) + " bytes: not a scenario";
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) error = "cannot read " + path.string();
  return text.str();
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.pop_back();
  return text;
}

}  // namespace

Result<LinkState> parse_link_name(std::string_view text) {
  static const std::regex kLink(R"(^\s*[Gg]en\s*([0-9]+)\s*[xX]\s*([0-9]+)\s*$)");
  const std::string copy(text);
  std::smatch match;
  if (!std::regex_match(copy, match, kLink)) {
    return make_error("'" + copy + "' is not a link (write gen3x16, Gen4 x8)");
  }
  auto gen = gen_from_number(std::stoi(match[1].str()));
  if (!gen) return make_error("'" + copy + "': " + gen.error().message);
  const int width = std::stoi(match[2].str());
  if (!is_valid_link_width(width)) return make_error("'" + copy + "': x" + std::to_string(width) + " is not a width");
  return LinkState{gen.value(), width};
}

Result<Scenario> parse_scenario(std::string_view json_text, const fs::path& file) {
  const Json document = Json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (document.is_discarded()) return make_error("not JSON");
  if (!document.is_object()) return make_error("not a JSON object");
  if (auto ok = only_keys(document, "scenario",
                          {"machine", "gpus", "host_numa_gbps", "root_complex_peer_gbps", "acs_detour_peer_gbps",
                           "no_peer_access", "description"});
      !ok) {
    return ok.error();
  }
  if (!document.contains("machine") || !document.at("machine").is_string()) {
    return make_error("scenario: \"machine\" (a folder with sys/, relative to the scenario) is required");
  }
  Scenario scenario;
  scenario.file = fs::absolute(file).lexically_normal();
  const fs::path machine(document.at("machine").get<std::string>());
  scenario.machine = (machine.is_absolute() ? machine : scenario.file.parent_path() / machine).lexically_normal();
  // "machine/" names the same folder as "machine".
  if (!scenario.machine.has_filename()) scenario.machine = scenario.machine.parent_path();
  if (document.contains("gpus")) {
    const Json& gpus = document.at("gpus");
    if (!gpus.is_object()) return make_error("gpus: not an object keyed by PCI address");
    for (const auto& [key, value] : gpus.items()) {
      auto address = parse_pci_address(key);
      if (!address) return make_error("gpus: '" + key + "' is not a PCI address: " + address.error().message);
      PCIEVAL_SIM_ASSIGN(GpuSpec gpu, parse_gpu(value, "gpus." + key));
      scenario.gpus.emplace(address.value(), std::move(gpu));
    }
  }
  if (document.contains("host_numa_gbps")) {
    const Json& nodes = document.at("host_numa_gbps");
    if (!nodes.is_object()) return make_error("host_numa_gbps: not an object keyed by NUMA node");
    for (const auto& [key, value] : nodes.items()) {
      if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return make_error("host_numa_gbps: '" + key + "' is not a NUMA node number");
      }
      if (!value.is_number() || !(value.get<double>() > 0)) {
        return make_error("host_numa_gbps." + key + ": not a positive number");
      }
      scenario.host_numa_gbps[std::stoi(key)] = value.get<double>();
    }
  }
  for (const auto& [key, rate] : {std::pair{"root_complex_peer_gbps", &scenario.root_complex_peer_gbps},
                                  std::pair{"acs_detour_peer_gbps", &scenario.acs_detour_peer_gbps}}) {
    if (!document.contains(key)) continue;
    const Json& value = document.at(key);
    if (!value.is_number() || !(value.get<double>() > 0))
      return make_error(std::string(key) + ": not a positive number");
    *rate = value.get<double>();
  }
  if (document.contains("no_peer_access")) {
    const Json& pairs = document.at("no_peer_access");
    if (!pairs.is_array()) return make_error("no_peer_access: not an array of GPU address pairs");
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string at = "no_peer_access[" + std::to_string(i) + "]";
      const Json& pair = pairs.at(i);
      if (!pair.is_array() || pair.size() != 2 || !pair.at(0).is_string() || !pair.at(1).is_string()) {
        return make_error(at + ": not a pair of PCI addresses");
      }
      auto first = parse_pci_address(pair.at(0).get<std::string>());
      auto second = parse_pci_address(pair.at(1).get<std::string>());
      if (!first || !second) return make_error(at + ": not a pair of PCI addresses");
      if (first.value() == second.value()) return make_error(at + ": a GPU paired with itself");
      scenario.no_peer_access.emplace(std::min(first.value(), second.value()), std::max(first.value(), second.value()));
    }
  }
  return scenario;
}

Result<Scenario> load_scenario(const fs::path& file) {
  std::string error;
  const std::string text = read_small_file(file, error);
  if (!error.empty()) return make_error(error);
  auto scenario = parse_scenario(text, file);
  if (!scenario) return make_error(file.string() + ": " + scenario.error().message);
  const fs::path sys = scenario.value().machine / "sys";
  std::error_code code;
  if (!fs::is_directory(sys / "bus" / "pci" / "devices", code)) {
    return make_error(file.string() + ": machine " + scenario.value().machine.string() +
                      " has no sys/bus/pci/devices (build the fixtures: cmake --build build)");
  }
  const std::vector<PciAddress> gpus = gpus_of_tree(sys);
  for (const auto& [address, spec] : scenario.value().gpus) {
    static_cast<void>(spec);
    if (std::find(gpus.begin(), gpus.end(), address) == gpus.end()) {
      return make_error(file.string() + ": gpus: " + to_string(address) + " is not an NVIDIA GPU of " + sys.string());
    }
  }
  for (const auto& [first, second] : scenario.value().no_peer_access) {
    for (const PciAddress& address : {first, second}) {
      if (std::find(gpus.begin(), gpus.end(), address) == gpus.end()) {
        return make_error(file.string() + ": no_peer_access: " + to_string(address) + " is not an NVIDIA GPU of " +
                          sys.string());
      }
    }
  }
  return scenario;
}

std::vector<PciAddress> gpus_of_tree(const fs::path& sys_root) {
  std::vector<PciAddress> gpus;
  std::error_code code;
  for (const auto& entry : fs::directory_iterator(sys_root / "bus" / "pci" / "devices", code)) {
    auto address = parse_pci_address(entry.path().filename().string());
    if (!address) continue;
    std::string error;
    const std::string vendor = trimmed(read_small_file(entry.path() / "vendor", error));
    const std::string device_class = trimmed(read_small_file(entry.path() / "class", error));
    if (vendor != "0x10de") continue;
    if (device_class.rfind("0x0300", 0) != 0 && device_class.rfind("0x0302", 0) != 0) continue;
    gpus.push_back(address.value());
  }
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

}  // namespace pcieval::sim
