// The values a results document may hold for the model's enums: the full
// reader (results_reader.cpp) and the fleet's fast reader
// (fleet/node_document.cpp) both refuse anything else. A value added to the
// model (reason codes are append-only) must be added here, once, or documents
// holding it cannot be read.
#pragma once

#include <array>

#include "model/device.hpp"
#include "model/link.hpp"
#include "model/path.hpp"
#include "model/verdict.hpp"

namespace pcieval::document_values {

inline constexpr std::array kKinds = {DeviceKind::kGpu, DeviceKind::kNic, DeviceKind::kNvme, DeviceKind::kOther};
inline constexpr std::array kPositions = {LinkPosition::kDeviceLink, LinkPosition::kUplink};
inline constexpr std::array kStatuses = {VerdictStatus::kPass,         VerdictStatus::kLinkDowngraded,
                                         VerdictStatus::kBandwidthLow, VerdictStatus::kLinkErrors,
                                         VerdictStatus::kMissing,      VerdictStatus::kInconclusive,
                                         VerdictStatus::kMisconfigured};
inline constexpr std::array kOveralls = {Overall::kPass, Overall::kFail, Overall::kInconclusive};

}  // namespace pcieval::document_values
