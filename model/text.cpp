#include "model/text.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace pcieval {

std::string fixed_text(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string hex_text(std::uint32_t value, int digits) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%0*x", digits, static_cast<unsigned>(value));
  return buffer;
}

std::string gbps_text(double gbps, int decimals) { return fixed_text(gbps, decimals) + " GB/s"; }

std::string percent_text(double fraction) {
  return std::to_string(static_cast<int>(std::lround(fraction * 100))) + "%";
}

std::string binary_size_text(double bytes) {
  constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (std::fabs(bytes) >= 1024 && unit + 1 < kUnits.size()) {
    bytes /= 1024;
    ++unit;
  }
  const int decimals = bytes == std::floor(bytes) ? 0 : 1;
  return fixed_text(bytes, decimals) + " " + kUnits[unit];
}

std::string exact_size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0) {
    return std::to_string(bytes >> 30) + " GiB";
  }
  if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= (std::uint64_t{1} << 10) && bytes % (std::uint64_t{1} << 10) == 0) {
    return std::to_string(bytes >> 10) + " KiB";
  }
  return std::to_string(bytes) + " bytes";
}

std::string errno_text(int error_number) {
  return error_number != 0 ? std::string(std::strerror(error_number)) : "unknown error";
}

}  // namespace pcieval
