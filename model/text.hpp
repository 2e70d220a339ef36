// Numbers and sizes as pcieval writes them in tables, reasons and notes: one
// definition of each form, so that a verdict's reason and a table cell say
// the same number the same way.
#pragma once

#include <cstdint>
#include <string>

namespace pcieval {

// `value` with `decimals` digits after the point ("%.*f"): "27.60".
[[nodiscard]] std::string fixed_text(double value, int decimals);

// A bandwidth with its unit: "27.6 GB/s" (one decimal, as verdict reasons
// write it), or with `decimals` digits ("27.60 GB/s", as nccl-tests prints).
[[nodiscard]] std::string gbps_text(double gbps, int decimals = 1);

// A fraction as a whole percentage: 0.85 -> "85%".
[[nodiscard]] std::string percent_text(double fraction);

// Binary units, as copy sizes are chosen: "4 KiB", "256 MiB", "1.5 GiB",
// "512 B" (one decimal when not whole, up to TiB).
[[nodiscard]] std::string binary_size_text(double bytes);

// The largest binary unit that divides `bytes` exactly, as a size is written
// in a probe's message: "256 MiB", "1 GiB", "1000 bytes".
[[nodiscard]] std::string exact_size_text(std::uint64_t bytes);

// `value` in lower-case hex, zero-padded to `digits`, as lspci and sysfs write
// IDs: hex_text(0x10de, 4) is "10de", a class code hex_text(0x030200, 6).
[[nodiscard]] std::string hex_text(std::uint32_t value, int digits);

// strerror's text of an errno value; "unknown error" for 0 (a call that
// failed without setting errno).
[[nodiscard]] std::string errno_text(int error_number);

}  // namespace pcieval
