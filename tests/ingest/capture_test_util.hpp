// Helpers shared by the nvidia-smi, kernel log and detection tests: fixture
// text, the line a marker sits on (so tests never hard-code line numbers),
// and hostile inputs every parser must survive.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/lspci_test_util.hpp"

namespace pcieval::testing {

inline constexpr const char* kSmiBusy = "nvsmi_esc8000a_e12_4xrtx6000ada_busy_c1_gen3.txt";
inline constexpr const char* kSmiIdleXml = "nvsmi_esc8000a_e12_4xrtx6000ada_idle.xml";
inline constexpr const char* kDmesgEsc = "dmesg_esc8000a_e12_c1_aer_corrected.txt";
inline constexpr const char* kJournalIcelake = "journal_icelake_plx_a100_xid79_fatal.txt";

// 1-based line of the `occurrence`-th line (0-based) containing `marker`; 0 when absent.
inline std::size_t line_of(std::string_view text, std::string_view marker, std::size_t occurrence = 0) {
  std::size_t number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    if (text.substr(start, end - start).find(marker) != std::string_view::npos && occurrence-- == 0) return number;
    start = end + 1;
  }
  return 0;
}

// Inputs no parser may crash or hang on: binary, NULs, one huge line, a
// million newlines, random bytes.
inline std::vector<std::string> hostile_inputs() {
  std::vector<std::string> inputs = {
      "",
      std::string("\x7f"
                  "ELF\x02\x01\x01\0\0\0\xff\xfe\n\t\x01",
                  15),
      std::string(1 << 20, '\0'),
      std::string(4 << 20, 'x'),
      std::string(1 << 20, '\n'),
      std::string(100000, '['),
      std::string(100000, ':'),
  };
  std::mt19937 random(20261203);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 20; ++i) {
    std::string text(4096, '\0');
    for (char& c : text) c = static_cast<char>(byte(random));
    inputs.push_back(std::move(text));
  }
  return inputs;
}

}  // namespace pcieval::testing
