// For the readers of pcieval's own documents: reading a JSON document field by
// field with the JSON pointer of every value at hand, so each problem can be
// named where it is. The results reader (report/) and the fleet reader
// (fleet/fleet_json.cpp) build on it, so both name problems the same way; no
// other layer includes it, and app/ and the tests only see text and models.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval::json_document {

// What an object that repeats a key means. JSON leaves it open and nlohmann
// keeps the last value; a threshold profile refuses it, since
// `"floor_fraction": 0.8, "floor_fraction": 0.01` would loosen a floor
// without a word.
enum class DuplicateKeys { kLastWins, kRefuse };

// Parses `text` in full. Text that is not one JSON value (truncated, malformed,
// trailing garbage, nested absurdly deep, with kRefuse a key repeated in one
// object) is an error "<source_name>: <pointer>: <problem>", the pointer
// saying where parsing stopped. Never throws for bad input.
[[nodiscard]] Result<nlohmann::json> parse(std::string_view text, std::string_view source_name,
                                           DuplicateKeys duplicates = DuplicateKeys::kLastWins);

// `text` in single quotes for a one-line message: control characters become
// '?' and long text is cut.
[[nodiscard]] std::string quote(std::string_view text);

// A value of the document and its JSON pointer ("" for the root).
struct Node {
  const nlohmann::json* json = nullptr;
  std::string pointer;
};

// Typed access that records the first problem and then keeps going with
// defaults, so the code that maps a document reads straight through and checks
// ok() once at the end. Messages: "<source>: <pointer>: <what was expected>".
class DocumentReader {
 public:
  explicit DocumentReader(std::string_view source_name) : source_(source_name) {}

  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  // REQUIRES: !ok().
  [[nodiscard]] const Error& error() const { return *error_; }
  // Records `what` at `node` unless a problem was recorded already.
  void fail(const Node& node, const std::string& what);

  // The member `key` of an object: "missing" when absent.
  [[nodiscard]] Node member(const Node& object, std::string_view key);
  // The member `key`, or nullopt when the object has none (a field that
  // older documents lack). Not an object is still a problem.
  [[nodiscard]] std::optional<Node> member_if_present(const Node& object, std::string_view key);
  // true for an object, false for null; anything else is a problem.
  [[nodiscard]] bool object_or_null(const Node& node);
  [[nodiscard]] std::vector<Node> items(const Node& array);
  [[nodiscard]] std::vector<std::pair<std::string, Node>> members(const Node& object);

  [[nodiscard]] std::string text(const Node& node);
  [[nodiscard]] std::optional<std::string> text_or_null(const Node& node);
  [[nodiscard]] std::vector<std::string> strings(const Node& node);
  [[nodiscard]] bool boolean(const Node& node);
  // An integer in [min, max], or nullopt for null.
  [[nodiscard]] std::optional<std::int64_t> integer_or_null(const Node& node, std::int64_t min, std::int64_t max);
  // An integer in [min, max]; null is a problem.
  [[nodiscard]] std::int64_t integer(const Node& node, std::int64_t min, std::int64_t max);
  [[nodiscard]] std::optional<double> number_or_null(const Node& node);
  [[nodiscard]] double number(const Node& node);
  [[nodiscard]] std::optional<bool> boolean_or_null(const Node& node);
  // A counter: an integer >= 0 (up to 2^64 - 1).
  [[nodiscard]] std::uint64_t count(const Node& node);
  [[nodiscard]] std::optional<std::uint64_t> count_or_null(const Node& node);
  // Exactly `digits` lowercase hex digits, as lspci -n prints ids.
  [[nodiscard]] std::uint32_t hex_id(const Node& node, int digits);
  [[nodiscard]] PciAddress address(const Node& node);

  // The value of `values` whose to_string() is the node's text.
  template <class E, std::size_t N>
  [[nodiscard]] E one_of(const Node& node, const std::array<E, N>& values) {
    const std::string name = text(node);
    if (!ok()) return values.front();
    std::string names;
    for (E value : values) {
      if (to_string(value) == name) return value;
      names += (names.empty() ? "" : ", ") + std::string(to_string(value));
    }
    fail(node, "unknown value " + quote(name) + "; expected one of " + names);
    return values.front();
  }

 private:
  // Stands in for missing values once a problem is recorded.
  static const nlohmann::json& null_value();

  std::string source_;
  std::optional<Error> error_;
};

}  // namespace pcieval::json_document
