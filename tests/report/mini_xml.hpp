// A small, strict XML 1.0 reader for the tests: it enforces well-formedness
// for the subset a JUnit document uses (declaration, elements, attributes,
// text, comments, the five predefined entities and character references;
// no DOCTYPE, CDATA or processing instructions besides the declaration) and
// returns the element tree with text and attributes read back as an XML
// parser reports them (attribute values normalised, CR LF folded to LF).
// tests/report/junit_check.py repeats the check with Python's expat.
#pragma once

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pcieval::testing {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<XmlElement> children;
  std::string text;  // all character data directly inside, concatenated

  [[nodiscard]] std::optional<std::string> attribute(const std::string& key) const {
    for (const auto& [name_, value] : attributes) {
      if (name_ == key) return value;
    }
    return std::nullopt;
  }
  [[nodiscard]] std::vector<const XmlElement*> all(const std::string& tag) const {
    std::vector<const XmlElement*> found;
    for (const XmlElement& child : children) {
      if (child.name == tag) found.push_back(&child);
    }
    return found;
  }
};

class MiniXmlReader {
 public:
  explicit MiniXmlReader(std::string text) : text_(std::move(text)) {}

  // The root element, or nullopt with error() saying where the text breaks.
  std::optional<XmlElement> read() {
    if (!check_characters()) return std::nullopt;
    if (text_.rfind("<?xml ", 0) == 0) {
      const auto end = text_.find("?>");
      if (end == std::string::npos) return fail("unterminated XML declaration");
      pos_ = end + 2;
    }
    skip_misc();
    XmlElement root;
    if (!element(root)) return std::nullopt;
    skip_misc();
    if (pos_ != text_.size()) return fail("content after the root element");
    return root;
  }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  std::nullopt_t fail(const std::string& what) {
    if (error_.empty()) error_ = "offset " + std::to_string(pos_) + ": " + what;
    return std::nullopt;
  }
  bool failed(const std::string& what) {
    fail(what);
    return false;
  }
  bool failed_at(std::size_t offset, const std::string& what) {
    pos_ = offset;
    return failed(what);
  }

  // Every character is UTF-8 and an XML 1.0 Char.
  bool check_characters() {
    for (std::size_t i = 0; i < text_.size();) {
      const auto lead = static_cast<unsigned char>(text_[i]);
      const std::size_t length = lead < 0x80         ? 1
                                 : (lead >> 5) == 6  ? 2
                                 : (lead >> 4) == 14 ? 3
                                 : (lead >> 3) == 30 ? 4
                                                     : 0;
      if (length == 0 || i + length > text_.size()) return failed_at(i, "not UTF-8");
      std::uint32_t cp = length == 1 ? lead : lead & (0x7fU >> length);
      for (std::size_t k = 1; k < length; ++k) {
        const auto next = static_cast<unsigned char>(text_[i + k]);
        if ((next & 0xc0) != 0x80) return failed_at(i, "not UTF-8");
        cp = (cp << 6) | (next & 0x3fU);
      }
      static constexpr std::uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
      if (cp < kMinimum[length] || !is_char(cp)) return failed_at(i, "character not allowed in XML 1.0");
      i += length;
    }
    return true;
  }
  static bool is_char(std::uint32_t cp) {
    return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
           (cp >= 0x10000 && cp <= 0x10ffff);
  }
  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  bool at(const char* literal) const { return text_.compare(pos_, std::string(literal).size(), literal) == 0; }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  void skip_misc() {
    for (;;) {
      skip_space();
      if (!at("<!--")) return;
      const auto end = text_.find("-->", pos_ + 4);
      if (end == std::string::npos) return void(fail("unterminated comment"));
      pos_ = end + 3;
    }
  }

  bool name(std::string& out) {
    const std::size_t start = pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      const bool first = pos_ == start;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
          (!first && (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.'))) {
        ++pos_;
      } else {
        break;
      }
    }
    out = text_.substr(start, pos_ - start);
    return !out.empty() || failed("name expected");
  }

  // A reference at pos_ ('&'), appended decoded.
  bool reference(std::string& out) {
    const auto end = text_.find(';', pos_);
    if (end == std::string::npos || end - pos_ > 12) return failed("bare '&'");
    const std::string body = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    static const std::pair<const char*, char> kEntities[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    for (const auto& [entity, c] : kEntities) {
      if (body == entity) {
        out += c;
        return true;
      }
    }
    if (body.size() < 2 || body[0] != '#') return failed("unknown entity '" + body + "'");
    const bool hex = body[1] == 'x';
    const std::string digits = body.substr(hex ? 2 : 1);
    if (digits.empty() ||
        digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos) {
      return failed("bad character reference");
    }
    const auto cp = static_cast<std::uint32_t>(std::stoul(digits, nullptr, hex ? 16 : 10));
    if (!is_char(cp)) return failed("reference to a character XML 1.0 forbids");
    append_utf8(out, cp);
    return true;
  }

  bool attribute_value(std::string& out) {
    if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) return failed("quoted value expected");
    const char quote = text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != quote) {
      const char c = text_[pos_];
      if (c == '<') return failed("'<' in an attribute value");
      if (c == '&') {
        if (!reference(out)) return false;
        continue;
      }
      // Normalisation: a literal CR LF, CR, LF or tab reads as one space.
      if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
      out += is_space(c) ? ' ' : c;
      ++pos_;
    }
    if (pos_ >= text_.size()) return failed("unterminated attribute value");
    ++pos_;
    return true;
  }

  bool element(XmlElement& out) {
    if (!at("<")) return failed("'<' expected");
    ++pos_;
    if (!name(out.name)) return false;
    for (;;) {
      const std::size_t before = pos_;
      skip_space();
      if (at("/>")) {
        pos_ += 2;
        return true;
      }
      if (at(">")) break;
      if (pos_ == before) return failed("space expected before an attribute");
      std::string key;
      std::string value;
      if (!name(key)) return false;
      skip_space();
      if (!at("=")) return failed("'=' expected");
      ++pos_;
      skip_space();
      if (!attribute_value(value)) return false;
      if (out.attribute(key)) return failed("attribute " + key + " repeated");
      out.attributes.emplace_back(key, value);
    }
    ++pos_;
    for (;;) {
      if (pos_ >= text_.size()) return failed("</" + out.name + "> missing");
      if (at("</")) {
        pos_ += 2;
        std::string closing;
        if (!name(closing)) return false;
        if (closing != out.name) return failed("</" + closing + "> closes <" + out.name + ">");
        skip_space();
        if (!at(">")) return failed("'>' expected");
        ++pos_;
        return true;
      }
      if (at("<!--")) {
        const auto end = text_.find("-->", pos_ + 4);
        if (end == std::string::npos) return failed("unterminated comment");
        pos_ = end + 3;
      } else if (at("<![CDATA[") || at("<?") || at("<!")) {
        return failed("markup this reader does not take");
      } else if (at("<")) {
        out.children.emplace_back();
        if (!element(out.children.back())) return false;
      } else if (at("&")) {
        if (!reference(out.text)) return false;
      } else if (at("]]>")) {
        return failed("']]>' in text");
      } else {
        const char c = text_[pos_++];
        if (c == '\r') {
          if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
          out.text += '\n';
        } else {
          out.text += c;
        }
      }
    }
  }

  std::string text_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace pcieval::testing
