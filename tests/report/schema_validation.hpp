// Validates JSON text against a JSON Schema file with valijson, for the report
// tests and the CLI tests. Header-only; needs PCIEVAL_SOURCE_DIR.
//
// valijson 1.0 knows drafts 4 and 7 and never reads "$schema", so the results
// schema (declared 2020-12) is parsed as draft 7; the schema keeps to keywords
// that mean the same in both (see its "$comment").
#pragma once

// Without this valijson aborts the process on a schema it cannot parse; a
// test should fail with the reason instead.
#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif

#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#include <vector>

namespace pcieval::testing {

inline std::filesystem::path results_schema_path() {
  return std::filesystem::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "pcieval-results.schema.json";
}

inline std::filesystem::path results_examples_dir() {
  return std::filesystem::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "examples";
}

// The example results documents: every .json there but the fleet documents
// (fleet-*.json), which follow pcieval-fleet.schema.json.
inline bool is_results_example(const std::filesystem::path& path) {
  return path.extension() == ".json" && path.filename().string().rfind("fleet-", 0) != 0;
}

// Documents kept for the report tests only (a 1.0.0 document, for one).
inline std::filesystem::path report_test_data_dir() {
  return std::filesystem::path(PCIEVAL_SOURCE_DIR) / "tests" / "report" / "data";
}

inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Every reason `document_text` does not conform, one per line as
// "<root>/devices/0/link: <description>"; empty when it conforms. A schema or
// document that cannot be read or parsed is reported as an error too, so a
// broken setup never passes as "no errors".
inline std::vector<std::string> schema_errors(const std::string& document_text,
                                              const std::filesystem::path& schema_path = results_schema_path()) {
  std::vector<std::string> errors;
  const std::string schema_text = read_text_file(schema_path);
  if (schema_text.empty()) return {"cannot read schema " + schema_path.string()};
  const auto schema_json = nlohmann::json::parse(schema_text, nullptr, false);
  if (schema_json.is_discarded()) return {"schema " + schema_path.string() + " is not JSON"};
  const auto document = nlohmann::json::parse(document_text, nullptr, false);
  if (document.is_discarded()) return {"document is not JSON"};

  try {
    valijson::Schema schema;
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    const valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_json);
    parser.populateSchema(schema_adapter, schema);

    valijson::Validator validator;  // strong types: "16" is not a number
    valijson::ValidationResults results;
    const valijson::adapters::NlohmannJsonAdapter document_adapter(document);
    if (validator.validate(schema, document_adapter, &results)) return {};
    for (const auto& error : results) {
      std::string where;
      for (const auto& part : error.context) where += part;
      errors.push_back(where + ": " + error.description);
    }
    if (errors.empty()) errors.push_back("invalid, with no reason given");
  } catch (const std::exception& e) {
    errors.push_back(std::string("schema ") + schema_path.string() + " cannot be used: " + e.what());
  }
  return errors;
}

inline std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

}  // namespace pcieval::testing
