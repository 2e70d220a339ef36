#include "app/reference_copy.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

namespace pcieval::app {
namespace {

using Json = nlohmann::json;

Result<double> rate_field(const Json& document, const char* key) {
  const auto it = document.find(key);
  if (it == document.end() || !it->is_number()) return make_error(std::string("no number \"") + key + "\"");
  const double value = it->get<double>();
  if (!std::isfinite(value) || value <= 0) return make_error(std::string("\"") + key + "\" is not a positive rate");
  return value;
}

std::optional<double> pcieval_median(const std::vector<Measurement>& measurements, std::string_view probe,
                                     const PciAddress& gpu) {
  for (const Measurement& m : measurements) {
    if (m.probe == probe && m.gpus.size() == 1 && m.gpus.front() == gpu && m.verified) return m.stats.median_gbps;
  }
  return std::nullopt;
}

}  // namespace

Result<ReferenceRun> parse_reference_run(std::string_view json_text) {
  const Json document = Json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (document.is_discarded() || !document.is_object()) return make_error("not a JSON object");
  ReferenceRun run;
  const auto tool = document.find("tool");
  if (tool == document.end() || !tool->is_string() || tool->get<std::string>().empty()) {
    return make_error("no \"tool\" name");
  }
  run.tool = tool->get<std::string>();
  const auto bus_id = document.find("pci_bus_id");
  if (bus_id == document.end() || !bus_id->is_string()) return make_error("no \"pci_bus_id\"");
  auto gpu = parse_pci_address(bus_id->get<std::string>());
  if (!gpu) return make_error("\"pci_bus_id\": " + gpu.error().message);
  run.gpu = gpu.value();
  const auto size = document.find("size_bytes");
  if (size == document.end() || !size->is_number_unsigned() || size->get<std::uint64_t>() == 0) {
    return make_error("no positive \"size_bytes\"");
  }
  run.size_bytes = size->get<std::uint64_t>();
  auto h2d = rate_field(document, "h2d_median_gbps");
  if (!h2d) return h2d.error();
  auto d2h = rate_field(document, "d2h_median_gbps");
  if (!d2h) return d2h.error();
  run.h2d_median_gbps = h2d.value();
  run.d2h_median_gbps = d2h.value();
  return run;
}

std::vector<ReferenceCopy> compare_with_reference(const ReferenceRun& reference,
                                                  const std::vector<Measurement>& measurements) {
  std::vector<ReferenceCopy> copies;
  const struct {
    Direction direction;
    std::string_view probe;
    double reference_gbps;
  } sides[] = {{Direction::kHostToDevice, "h2d_ce", reference.h2d_median_gbps},
               {Direction::kDeviceToHost, "d2h_ce", reference.d2h_median_gbps}};
  for (const auto& side : sides) {
    ReferenceCopy copy;
    copy.tool = reference.tool;
    copy.gpu = reference.gpu;
    copy.direction = side.direction;
    copy.size_bytes = reference.size_bytes;
    copy.reference_median_gbps = side.reference_gbps;
    copy.pcieval_median_gbps = pcieval_median(measurements, side.probe, reference.gpu);
    if (copy.pcieval_median_gbps) copy.ratio = *copy.pcieval_median_gbps / side.reference_gbps;
    copies.push_back(std::move(copy));
  }
  return copies;
}

}  // namespace pcieval::app
