// Schema 1.7's evidence of issue 28 in the results document: each port's
// settings (payload sizes, ASPM, ACS), a device's IOMMU group and the GPU
// pairs' peer status. Written and read here, once, so the writer and the
// reader cannot drift apart; results_writer.cpp and results_reader.cpp call
// these for the objects they build.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "model/device.hpp"
#include "model/port_settings.hpp"
#include "report/json_document.hpp"

namespace pcieval::settings_json {

using Json = nlohmann::ordered_json;

// Adds `<prefix>settings` to `object`: the settings, or null with
// `<prefix>settings_unread` saying why they were not read; nothing when no
// reader tried (the model's "not read").
void add_settings(Json& object, std::string_view prefix, const Reading<PortSettings>& settings);

// The settings `add_settings` wrote under `prefix`; "not read" when the
// member is absent (documents before 1.7, sources without the registers).
[[nodiscard]] Reading<PortSettings> read_settings(json_document::DocumentReader& in, const json_document::Node& object,
                                                  std::string_view prefix);

[[nodiscard]] Json iommu_json(const IommuReading& iommu);
[[nodiscard]] IommuReading read_iommu(json_document::DocumentReader& in, const json_document::Node& node);

[[nodiscard]] Json peer_status_json(const PeerStatus& status);
[[nodiscard]] PeerStatus read_peer_status(json_document::DocumentReader& in, const json_document::Node& node);

}  // namespace pcieval::settings_json
