#include "report/detail/utf8.hpp"

namespace pcieval::utf8 {

char32_t next_code_point(std::string_view text, std::size_t& pos) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) {
    ++pos;
    return lead;
  }
  // Sequence length and the smallest code point it may encode (anything below
  // is an overlong form, which UTF-8 forbids).
  std::size_t length = 0;
  char32_t minimum = 0;
  char32_t code_point = 0;
  if ((lead & 0xe0U) == 0xc0U) {
    length = 2;
    minimum = 0x80;
    code_point = lead & 0x1fU;
  } else if ((lead & 0xf0U) == 0xe0U) {
    length = 3;
    minimum = 0x800;
    code_point = lead & 0x0fU;
  } else if ((lead & 0xf8U) == 0xf0U) {
    length = 4;
    minimum = 0x10000;
    code_point = lead & 0x07U;
  } else {
    ++pos;
    return kReplacement;
  }
  if (pos + length > text.size()) {
    ++pos;
    return kReplacement;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char next = byte(pos + i);
    if ((next & 0xc0U) != 0x80U) {
      ++pos;
      return kReplacement;
    }
    code_point = (code_point << 6U) | (next & 0x3fU);
  }
  if (code_point < minimum || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) {
    ++pos;
    return kReplacement;
  }
  pos += length;
  return code_point;
}

void append(std::string& out, char32_t code_point) {
  const auto put = [&out](char32_t bits) { out.push_back(static_cast<char>(bits)); };
  if (code_point < 0x80) {
    put(code_point);
  } else if (code_point < 0x800) {
    put(0xc0U | (code_point >> 6U));
    put(0x80U | (code_point & 0x3fU));
  } else if (code_point < 0x10000) {
    put(0xe0U | (code_point >> 12U));
    put(0x80U | ((code_point >> 6U) & 0x3fU));
    put(0x80U | (code_point & 0x3fU));
  } else {
    put(0xf0U | (code_point >> 18U));
    put(0x80U | ((code_point >> 12U) & 0x3fU));
    put(0x80U | ((code_point >> 6U) & 0x3fU));
    put(0x80U | (code_point & 0x3fU));
  }
}

std::string sanitized(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) append(out, next_code_point(text, pos));
  return out;
}

}  // namespace pcieval::utf8
