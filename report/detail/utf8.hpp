// Internal to report/: walking text as UTF-8 code points, so every renderer
// that promises its consumer valid UTF-8 (Prometheus label values, XML) turns
// stray bytes into U+FFFD the same way the results JSON does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pcieval::utf8 {

inline constexpr char32_t kReplacement = U'\uFFFD';

// The code point starting at text[pos], advancing pos past it. A byte that
// does not start a well-formed sequence (a stray continuation byte, a
// truncated, overlong or surrogate encoding, anything above U+10FFFF) yields
// kReplacement and advances pos by that one byte, so the bytes after it are
// read again as text of their own. REQUIRES: pos < text.size().
[[nodiscard]] char32_t next_code_point(std::string_view text, std::size_t& pos);

// Appends `code_point` (<= U+10FFFF, not a surrogate) encoded as UTF-8.
void append(std::string& out, char32_t code_point);

// `text` with every ill-formed byte replaced by U+FFFD.
[[nodiscard]] std::string sanitized(std::string_view text);

}  // namespace pcieval::utf8
