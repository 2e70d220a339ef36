#include "report/json_document.hpp"

#include <charconv>
#include <limits>

namespace pcieval::json_document {
namespace {

using Json = nlohmann::json;

// Results documents nest six levels; far deeper input is not one, and
// stopping early bounds the memory a hostile file can take.
constexpr std::size_t kMaxDepth = 64;
constexpr std::size_t kMaxQuoted = 60;
constexpr std::size_t kMaxParserMessage = 200;

// RFC 6901: "~" and "/" inside a key are escaped.
std::string pointer_token(std::string_view key) {
  std::string token;
  for (char c : key) token += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return token;
}

// "<source>: <where>: <what>"; the root has no pointer to show.
std::string located(std::string_view source, const std::string& where, const std::string& what) {
  return std::string(source) + ": " + (where.empty() ? "" : where + ": ") + what;
}

// Builds the DOM as nlohmann's own parser does, but knows at every step the
// JSON pointer of the value being read, so a truncated document is reported
// where it breaks off and not only at a byte offset.
class TrackingBuilder : public nlohmann::json_sax<Json> {
 public:
  // Containers on the stack point into root_: never copied or moved.
  // NOLINTNEXTLINE(bugprone-exception-escape): only std::bad_alloc; results_from_json catches it.
  explicit TrackingBuilder(DuplicateKeys duplicates) : duplicates_(duplicates) {}
  TrackingBuilder(const TrackingBuilder&) = delete;
  TrackingBuilder& operator=(const TrackingBuilder&) = delete;
  TrackingBuilder(TrackingBuilder&&) = delete;
  TrackingBuilder& operator=(TrackingBuilder&&) = delete;
  ~TrackingBuilder() override = default;

  bool null() override { return put(nullptr); }
  bool boolean(bool value) override { return put(value); }
  bool number_integer(number_integer_t value) override { return put(value); }
  bool number_unsigned(number_unsigned_t value) override { return put(value); }
  bool number_float(number_float_t value, const string_t& /*text*/) override { return put(value); }
  bool string(string_t& value) override { return put(std::move(value)); }
  bool binary(binary_t& /*value*/) override { return put(nullptr); }  // JSON text has no binary values
  bool start_object(std::size_t /*size*/) override { return open(Json::object()); }
  bool start_array(std::size_t /*size*/) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override {
    Frame& top = frames_.back();
    top.key = std::move(name);
    top.has_key = true;
    top.key_seen = true;
    if (duplicates_ == DuplicateKeys::kRefuse && top.container->contains(top.key)) {
      problem_ = "duplicate key " + quote(top.key) + ": which of its values was meant is not known";
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/, const Json::exception& error) override {
    // "[json.exception.parse_error.101] parse error at line 3, column 1: ..."
    std::string message = error.what();
    if (const auto end = message.find("] "); message.starts_with("[json.") && end != std::string::npos) {
      message.erase(0, end + 2);
    }
    if (message.size() > kMaxParserMessage) message = message.substr(0, kMaxParserMessage) + "...";
    problem_ = "not valid JSON (truncated or malformed): " + message;
    return false;
  }

  [[nodiscard]] Json& root() { return root_; }
  [[nodiscard]] const std::string& problem() const { return problem_; }

  // Where parsing stopped: every open container's current member. In the
  // innermost array that is the element after the last complete one; in the
  // innermost object, the member whose value is pending, or "after" the last
  // complete one.
  [[nodiscard]] std::string location() const {
    std::string pointer;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      const bool innermost = i + 1 == frames_.size();
      if (frame.container->is_array()) {
        const std::size_t size = frame.container->size();
        pointer += "/" + std::to_string(innermost ? size : size - 1);
      } else if (frame.has_key || (innermost && frame.key_seen)) {
        pointer += "/" + pointer_token(frame.key);
        if (!frame.has_key) return "after " + pointer;
      }
    }
    return pointer;
  }

 private:
  struct Frame {
    Json* container = nullptr;  // stable: only the innermost container grows
    std::string key;            // the last key read, in an object
    bool key_seen = false;
    bool has_key = false;  // and its value is not complete yet
  };

  Json* place(Json value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& top = frames_.back();
    if (top.container->is_array()) {
      top.container->push_back(std::move(value));
      return &top.container->back();
    }
    Json& slot = (*top.container)[top.key];
    slot = std::move(value);
    return &slot;
  }

  bool put(Json value) {
    place(std::move(value));
    if (!frames_.empty()) frames_.back().has_key = false;
    return true;
  }

  bool open(Json container) {
    if (frames_.size() >= kMaxDepth) {
      problem_ = "nested deeper than " + std::to_string(kMaxDepth) + " levels: not a pcieval results document";
      return false;
    }
    Json* slot = place(std::move(container));
    frames_.push_back(Frame{slot, {}, false, false});
    return true;
  }

  bool close() {
    frames_.pop_back();
    if (!frames_.empty()) frames_.back().has_key = false;
    return true;
  }

  DuplicateKeys duplicates_;
  Json root_;
  std::vector<Frame> frames_;
  std::string problem_;
};

}  // namespace

Result<Json> parse(std::string_view text, std::string_view source_name, DuplicateKeys duplicates) {
  TrackingBuilder builder(duplicates);
  bool parsed = false;
  try {
    parsed = Json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::exception& e) {
    return make_error(located(source_name, builder.location(), std::string("cannot parse: ") + e.what()));
  }
  if (!parsed) {
    const std::string problem = builder.problem().empty() ? "not valid JSON" : builder.problem();
    return make_error(located(source_name, builder.location(), problem));
  }
  return std::move(builder.root());
}

std::string quote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text.substr(0, kMaxQuoted)) {
    const auto byte = static_cast<unsigned char>(c);
    quoted += byte < 0x20 || byte == 0x7f ? '?' : c;
  }
  if (text.size() > kMaxQuoted) quoted += "...";
  return quoted + "'";
}

const Json& DocumentReader::null_value() {
  static const Json kNull;
  return kNull;
}

void DocumentReader::fail(const Node& node, const std::string& what) {
  if (!error_) error_ = make_error(located(source_, node.pointer, what));
}

Node DocumentReader::member(const Node& object, std::string_view key) {
  Node found{&null_value(), object.pointer + "/" + pointer_token(key)};
  if (!ok()) return found;
  if (!object.json->is_object()) {
    fail(object, "expected an object");
    return found;
  }
  const auto it = object.json->find(std::string(key));
  if (it == object.json->end()) {
    fail(found, "missing");
  } else {
    found.json = &*it;
  }
  return found;
}

std::optional<Node> DocumentReader::member_if_present(const Node& object, std::string_view key) {
  if (!ok()) return std::nullopt;
  if (!object.json->is_object()) {
    fail(object, "expected an object");
    return std::nullopt;
  }
  const auto it = object.json->find(std::string(key));
  if (it == object.json->end()) return std::nullopt;
  return Node{&*it, object.pointer + "/" + pointer_token(key)};
}

bool DocumentReader::object_or_null(const Node& node) {
  if (!ok() || node.json->is_null()) return false;
  if (node.json->is_object()) return true;
  fail(node, "expected an object or null");
  return false;
}

std::vector<Node> DocumentReader::items(const Node& array) {
  std::vector<Node> nodes;
  if (!ok()) return nodes;
  if (!array.json->is_array()) {
    fail(array, "expected an array");
    return nodes;
  }
  nodes.reserve(array.json->size());
  for (std::size_t i = 0; i < array.json->size(); ++i) {
    nodes.push_back(Node{&(*array.json)[i], array.pointer + "/" + std::to_string(i)});
  }
  return nodes;
}

std::vector<std::pair<std::string, Node>> DocumentReader::members(const Node& object) {
  std::vector<std::pair<std::string, Node>> nodes;
  if (!ok()) return nodes;
  if (!object.json->is_object()) {
    fail(object, "expected an object");
    return nodes;
  }
  for (const auto& [key, value] : object.json->items()) {
    nodes.emplace_back(key, Node{&value, object.pointer + "/" + pointer_token(key)});
  }
  return nodes;
}

std::string DocumentReader::text(const Node& node) {
  if (ok() && node.json->is_string()) return node.json->get<std::string>();
  fail(node, "expected a string");
  return {};
}

std::optional<std::string> DocumentReader::text_or_null(const Node& node) {
  if (!ok() || node.json->is_null()) return std::nullopt;
  if (node.json->is_string()) return node.json->get<std::string>();
  fail(node, "expected a string or null");
  return std::nullopt;
}

std::vector<std::string> DocumentReader::strings(const Node& node) {
  std::vector<std::string> out;
  for (const Node& item : items(node)) {
    if (!item.json->is_string()) {
      fail(item, "expected a string");
      break;
    }
    out.push_back(item.json->get<std::string>());
  }
  return out;
}

bool DocumentReader::boolean(const Node& node) {
  if (ok() && node.json->is_boolean()) return node.json->get<bool>();
  fail(node, "expected true or false");
  return false;
}

std::optional<std::int64_t> DocumentReader::integer_or_null(const Node& node, std::int64_t min, std::int64_t max) {
  if (!ok() || node.json->is_null()) return std::nullopt;
  if (!node.json->is_number_integer()) {
    fail(node, "expected an integer or null");
    return std::nullopt;
  }
  // Unsigned above INT64_MAX is out of every range asked for here.
  const bool too_big =
      node.json->is_number_unsigned() &&
      node.json->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int64_t>::max());
  const std::int64_t value = too_big ? std::numeric_limits<std::int64_t>::max() : node.json->get<std::int64_t>();
  if (too_big || value < min || value > max) {
    fail(node, node.json->dump() + " is out of range (" + std::to_string(min) + " to " + std::to_string(max) + ")");
    return std::nullopt;
  }
  return value;
}

std::int64_t DocumentReader::integer(const Node& node, std::int64_t min, std::int64_t max) {
  if (ok() && !node.json->is_number_integer()) fail(node, "expected an integer");
  return integer_or_null(node, min, max).value_or(min);
}

std::optional<double> DocumentReader::number_or_null(const Node& node) {
  if (!ok() || node.json->is_null()) return std::nullopt;
  if (node.json->is_number()) return node.json->get<double>();
  fail(node, "expected a number or null");
  return std::nullopt;
}

double DocumentReader::number(const Node& node) {
  if (ok() && node.json->is_number()) return node.json->get<double>();
  fail(node, "expected a number");
  return 0;
}

std::optional<bool> DocumentReader::boolean_or_null(const Node& node) {
  if (!ok() || node.json->is_null()) return std::nullopt;
  if (node.json->is_boolean()) return node.json->get<bool>();
  fail(node, "expected true, false or null");
  return std::nullopt;
}

std::uint64_t DocumentReader::count(const Node& node) {
  if (ok() && node.json->is_number_unsigned()) return node.json->get<std::uint64_t>();
  fail(node, node.json->is_number_integer() ? "expected a count (an integer >= 0)" : "expected an integer");
  return 0;
}

std::optional<std::uint64_t> DocumentReader::count_or_null(const Node& node) {
  if (!ok() || node.json->is_null()) return std::nullopt;
  if (node.json->is_number_unsigned()) return node.json->get<std::uint64_t>();
  fail(node, node.json->is_number_integer() ? "expected a count (an integer >= 0)" : "expected an integer or null");
  return std::nullopt;
}

std::uint32_t DocumentReader::hex_id(const Node& node, int digits) {
  const std::string value = text(node);
  if (!ok()) return 0;
  const bool lower_hex =
      value.find_first_not_of("0123456789abcdef") == std::string::npos && value.size() == static_cast<size_t>(digits);
  if (!lower_hex) {
    fail(node, "expected " + std::to_string(digits) + " lowercase hex digits, got " + quote(value));
    return 0;
  }
  std::uint32_t id = 0;
  std::from_chars(value.data(), value.data() + value.size(), id, 16);
  return id;
}

PciAddress DocumentReader::address(const Node& node) {
  const std::string value = text(node);
  if (!ok()) return {};
  const auto parsed = parse_pci_address(value);
  if (parsed) return parsed.value();
  fail(node, quote(value) + " is not a PCI address (domain:bus:device.function, such as 0000:17:00.0)");
  return {};
}

}  // namespace pcieval::json_document
