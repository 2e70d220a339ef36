// Units used across pcieval. Quantities carry their unit in their name.
#pragma once

namespace pcieval {

// "gbps" in pcieval is decimal gigabytes per second (1e9 bytes/s), the unit of
// nvbandwidth, bandwidthTest and nccl-tests. Never gigabits: raw PCIe rates are
// in GT/s (`_gts`) and kernel messages in Gb/s are converted where parsed.
inline constexpr double kBytesPerGigabyte = 1e9;

}  // namespace pcieval
