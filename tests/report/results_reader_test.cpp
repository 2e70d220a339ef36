// Reading the results document back: write -> read -> write gives the same
// text for the hand-built node of sample_results.hpp and for the examples of
// results_schema/, and every broken document is an error naming its source
// and the JSON pointer of the problem, never a crash.
#include "report/results_reader.hpp"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "report/results_json.hpp"
#include "report/sample_results.hpp"
#include "report/schema_validation.hpp"

namespace pcieval {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

std::string rewrite(const std::string& text) {
  const auto read = results_from_json(text, "results.json");
  if (!read) return "read failed: " + read.error().message;
  return results_to_json(read.value());
}

std::string example(const std::string& name) { return testing::read_text_file(testing::results_examples_dir() / name); }

// Every document the tests break: the sample written once, and both examples.
std::vector<std::pair<std::string, std::string>> documents() {
  return {{"sample", results_to_json(testing::hgx_spr_results())},
          {"pass-1gpu-l40s-genoa.json", example("pass-1gpu-l40s-genoa.json")},
          {"fail-downgraded-h100-spr.json", example("fail-downgraded-h100-spr.json")}};
}

// The error of reading `document` (the sample unless given), or "read".
std::string error_of(const Json& document) {
  const auto read = results_from_json(document.dump(2), "results.json");
  return read ? std::string("read") : read.error().message;
}

Json sample() { return Json::parse(results_to_json(testing::hgx_spr_results())); }

TEST(ResultsReaderTest, SampleRoundTripsToTheSameText) {
  const std::string text = results_to_json(testing::hgx_spr_results());
  EXPECT_EQ(rewrite(text), text);
}

TEST(ResultsReaderTest, EmptyResultsRoundTrip) {
  const std::string text = results_to_json(Results{});
  EXPECT_EQ(rewrite(text), text);
}

TEST(ResultsReaderTest, EveryReadingUnknownRoundTrips) {
  Results results = testing::hgx_spr_results();
  for (DeviceRecord& record : results.evidence.devices) {
    record.function.numa_node = make_error("not read");
    record.function.local_cpulist = make_error("numa_node: wrong attribute named");
    if (record.function.link) record.function.link = PortLinkReading::unknown(make_error("Input/output error"));
    for (Link& link : record.path) link.upstream_end = PortLinkReading::unknown(make_error("not read"));
  }
  const std::string text = results_to_json(results);
  EXPECT_EQ(rewrite(text), text);
}

TEST(ResultsReaderTest, ExamplesRoundTripAndKeepEveryValue) {
  for (const std::string name : {"pass-1gpu-l40s-genoa.json", "fail-downgraded-h100-spr.json"}) {
    const std::string original = example(name);
    const std::string once = rewrite(original);
    EXPECT_EQ(rewrite(once), once) << name;
    // Hand-written layout aside, the writer gives back the same document.
    EXPECT_EQ(Json::parse(once), Json::parse(original)) << name;
    EXPECT_THAT(testing::schema_errors(once), ::testing::IsEmpty()) << name;
  }
}

TEST(ResultsReaderTest, RebuildsEvidenceVerdictsAndSummary) {
  const Results want = testing::hgx_spr_results();
  const auto read = results_from_json(results_to_json(want), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  const Results& got = read.value();
  EXPECT_EQ(got.tool.version, "0.1.0");
  EXPECT_EQ(got.evidence.host.hostname, "hgx-b07");
  EXPECT_EQ(got.evidence.topology, std::optional<std::string>("live hwloc"));
  EXPECT_FALSE(got.evidence.gpus_under_load);
  ASSERT_EQ(got.evidence.devices.size(), 5U);
  EXPECT_FALSE(got.evidence.devices[0].function.link.has_value());

  const DeviceRecord& gpu = got.evidence.devices[1];
  EXPECT_EQ(gpu.function.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.function.vendor_id, 0x10de);
  EXPECT_EQ(gpu.function.class_code, 0x030200U);
  ASSERT_EQ(gpu.path.size(), 2U);
  EXPECT_EQ(gpu.path[0].negotiated().value(), (LinkState{PcieGen::kGen1, 8}));
  EXPECT_EQ(gpu.path[1].position, LinkPosition::kUplink);
  EXPECT_EQ(gpu.path[1].upstream, testing::bdf("0000:14:01.0"));
  EXPECT_EQ(gpu.function.aer.correctable->counts.at("BadDLLP"), 41U);
  EXPECT_EQ(gpu.function.aer.correctable->total, 56U);
  EXPECT_FALSE(gpu.function.aer.nonfatal.has_value());
  ASSERT_TRUE(gpu.locality.has_value());
  EXPECT_EQ(gpu.locality->ancestor_bridges.size(), 3U);

  ASSERT_EQ(got.verdicts.size(), want.verdicts.size());
  for (std::size_t i = 0; i < want.verdicts.size(); ++i) {
    EXPECT_EQ(got.verdicts[i].status, want.verdicts[i].status) << i;
    EXPECT_EQ(got.verdicts[i].code, want.verdicts[i].code) << i;
    EXPECT_EQ(got.verdicts[i].reason, want.verdicts[i].reason) << i;
  }
  EXPECT_EQ(got.overall, Overall::kFail);
  EXPECT_EQ(got.summary, want.summary);
  EXPECT_EQ(got.evidence.notes, want.evidence.notes);
}

TEST(ResultsReaderTest, NullReadingsTakeTheirReasonFromTheUnknownList) {
  const auto read = results_from_json(results_to_json(testing::hgx_spr_results()), "results.json");
  ASSERT_TRUE(read);
  const DeviceRecord& nvme = read->evidence.devices[3];
  EXPECT_EQ(nvme.path[0].upstream_end.max_speed.error().message,
            "max_link_speed: kernel reports link speed 'Unknown speed'");
  EXPECT_EQ(nvme.path[0].upstream_end.max_width.value(), 4);
  // numa_node shows hwloc's 0, but sysfs had none: the reading stays failed.
  EXPECT_EQ(nvme.function.numa_node.error().message, "numa_node: no NUMA affinity");
  EXPECT_EQ(nvme.locality->numa_node, 0);
  EXPECT_FALSE(nvme.path[0].expected());
}

TEST(ResultsReaderTest, NullReadingWithoutAnEntryIsNotInTheDocument) {
  Json document = sample();
  document["devices"][1]["path"][1]["upstream_current"]["width"] = nullptr;
  // An entry for a longer attribute name does not explain it.
  document["devices"][1]["unknown"] = {"0000:14:01.0 current_link_widths: other"};
  const auto read = results_from_json(document.dump(), "results.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->evidence.devices[1].path[1].upstream_end.current_width.error().message,
            "not in the results document");
}

// to_string() of an enumerator the model does not name falls back on a
// default; every other value must be one the reader knows.
TEST(ResultsReaderTest, EveryStatusAndCodeTheModelNamesIsRead) {
  for (int i = 0; i < 64; ++i) {
    const auto code = static_cast<ReasonCode>(i);
    const auto status = static_cast<VerdictStatus>(i);
    Json document = sample();
    if (code == ReasonCode::kLinkStateUnknown || to_string(code) != to_string(ReasonCode::kLinkStateUnknown)) {
      document["verdicts"][0]["code"] = to_string(code);
      const auto read = results_from_json(document.dump(), "results.json");
      ASSERT_TRUE(read) << read.error().message;
      EXPECT_EQ(read->verdicts[0].code, code);
    }
    if (status == VerdictStatus::kInconclusive || to_string(status) != to_string(VerdictStatus::kInconclusive)) {
      document["verdicts"][0]["status"] = to_string(status);
      const auto read = results_from_json(document.dump(), "results.json");
      ASSERT_TRUE(read) << read.error().message;
      EXPECT_EQ(read->verdicts[0].status, status);
    }
  }
}

TEST(ResultsReaderTest, LaterMinorVersionWithNewFieldsIsRead) {
  Json document = sample();
  document["schema_version"] = "1.7.2";
  document["devices"][1]["bandwidth"] = {{"h2d_gbps", 25.1}};
  document["tool"]["build"] = "abc";
  EXPECT_EQ(error_of(document), "read");
}

TEST(ResultsReaderTest, OtherMajorVersionIsRefusedNamingIt) {
  Json document = sample();
  document["schema_version"] = "2.0.0";
  EXPECT_EQ(error_of(document),
            "results.json: /schema_version: schema version 2.0.0 is not supported: this pcieval reads 1.x (it writes "
            "1.0.0)");
  document["schema_version"] = "0.9.1";
  EXPECT_THAT(error_of(document), HasSubstr("schema version 0.9.1 is not supported"));
  document["schema_version"] = "1.0";
  EXPECT_EQ(error_of(document), "results.json: /schema_version: '1.0' is not a schema version MAJOR.MINOR.PATCH");
  document["schema_version"] = 1;
  EXPECT_EQ(error_of(document), "results.json: /schema_version: expected a string");
}

TEST(ResultsReaderTest, WrongTypesAreNamedByPointer) {
  const auto with = [](const Json::json_pointer& where, const Json& value) {
    Json document = sample();
    document[where] = value;
    return error_of(document);
  };
  EXPECT_EQ(with("/devices/1/path/0/expected/width"_json_pointer, "16"),
            "results.json: /devices/1/path/0/expected/width: expected an integer or null");
  EXPECT_EQ(with("/devices/1/link/max/generation"_json_pointer, 9),
            "results.json: /devices/1/link/max/generation: 9 is out of range (1 to 7)");
  EXPECT_EQ(with("/devices/1/link/max/speed_gts"_json_pointer, 8.0),
            "results.json: /devices/1/link/max/speed_gts: 8 GT/s is not the rate of Gen5 (32 GT/s)");
  EXPECT_EQ(with("/devices/1/path/0/downstream_current/width"_json_pointer, 16.5),
            "results.json: /devices/1/path/0/downstream_current/width: expected an integer or null");
  EXPECT_EQ(with("/devices/1/aer/correctable/counts/RxErr"_json_pointer, -1),
            "results.json: /devices/1/aer/correctable/counts/RxErr: expected a count (an integer >= 0)");
  EXPECT_EQ(with("/devices/2/bdf"_json_pointer, "18:00"),
            "results.json: /devices/2/bdf: '18:00' is not a PCI address (domain:bus:device.function, such as "
            "0000:17:00.0)");
  EXPECT_EQ(with("/devices/2/vendor_id"_json_pointer, "15B3"),
            "results.json: /devices/2/vendor_id: expected 4 lowercase hex digits, got '15B3'");
  EXPECT_EQ(with("/devices/0/kind"_json_pointer, "fpga"),
            "results.json: /devices/0/kind: unknown value 'fpga'; expected one of gpu, nic, nvme, other");
  EXPECT_EQ(with("/verdicts/0/status"_json_pointer, "fine"),
            "results.json: /verdicts/0/status: unknown value 'fine'; expected one of pass, link_downgraded, "
            "bandwidth_low, link_errors, missing, inconclusive");
  EXPECT_EQ(with("/devices/4/locality"_json_pointer, "numa 1"),
            "results.json: /devices/4/locality: expected an object or null");
  EXPECT_EQ(with("/devices"_json_pointer, Json::object()), "results.json: /devices: expected an array");
  EXPECT_EQ(with("/sources/gpus_under_load"_json_pointer, "no"),
            "results.json: /sources/gpus_under_load: expected true or false");
  EXPECT_EQ(with("/notes/0"_json_pointer, 3), "results.json: /notes/0: expected a string");
  EXPECT_EQ(with("/overall"_json_pointer, "ok"),
            "results.json: /overall: unknown value 'ok'; expected one of pass, fail, inconclusive");
  EXPECT_EQ(with("/host"_json_pointer, Json::array()), "results.json: /host: expected an object");
}

TEST(ResultsReaderTest, MissingFieldsAreNamedByPointer) {
  const auto without = [](const Json::json_pointer& parent, const std::string& key) {
    Json document = sample();
    document[parent].erase(key);
    return error_of(document);
  };
  EXPECT_EQ(without(""_json_pointer, "host"), "results.json: /host: missing");
  EXPECT_EQ(without(""_json_pointer, "schema_version"), "results.json: /schema_version: missing");
  EXPECT_EQ(without("/verdicts/1"_json_pointer, "code"), "results.json: /verdicts/1/code: missing");
  EXPECT_EQ(without("/devices/3/path/0"_json_pointer, "negotiated"),
            "results.json: /devices/3/path/0/negotiated: missing");
  EXPECT_EQ(without("/devices/1/aer"_json_pointer, "fatal"), "results.json: /devices/1/aer/fatal: missing");
  EXPECT_EQ(without("/devices/4"_json_pointer, "unknown"), "results.json: /devices/4/unknown: missing");
}

TEST(ResultsReaderTest, FirstProblemInDocumentOrderIsTheOneNamed) {
  Json document = sample();
  document["devices"][1]["unknown"] = "none";
  document["devices"][1]["numa_node"] = "0";
  document["verdicts"][0]["status"] = 3;
  EXPECT_EQ(error_of(document), "results.json: /devices/1/numa_node: expected an integer or null");
}

TEST(ResultsReaderTest, NotAResultsDocument) {
  const auto error = [](std::string_view text) {
    const auto read = results_from_json(text, "in.json");
    return read ? std::string("read") : read.error().message;
  };
  EXPECT_EQ(error("[]"), "in.json: expected a JSON object (a pcieval results document)");
  EXPECT_EQ(error("null"), "in.json: expected a JSON object (a pcieval results document)");
  EXPECT_EQ(error("{}"), "in.json: /schema_version: missing");
  EXPECT_THAT(error(""), StartsWith("in.json: not valid JSON (truncated or malformed): "));
  EXPECT_THAT(error("hello"), StartsWith("in.json: not valid JSON"));
  EXPECT_THAT(error("{\"schema_version\": \"1.0.0\"} trailing"), StartsWith("in.json: not valid JSON"));
  EXPECT_THAT(error(std::string(100000, '[')), HasSubstr("nested deeper than 64 levels"));
  EXPECT_THAT(error("{\"schema_version\": \"1.0.0\", \"tool\": {}"),
              StartsWith("in.json: after /tool: not valid JSON (truncated or malformed): "));
  EXPECT_THAT(error("{\"devices\": [{\"path\": [{\"a/b~\": [1, "),
              StartsWith("in.json: /devices/0/path/0/a~1b~0/1: not valid JSON (truncated or malformed): "));
}

TEST(ResultsReaderTest, TruncatedDocumentsAreErrorsNamingWhereTheyBreakOff) {
  for (const auto& [name, text] : documents()) {
    // Up to the last byte but one: only the final newline may go unnoticed.
    for (std::size_t size = 0; size + 1 < text.size(); size += 97) {
      const auto read = results_from_json(std::string_view(text).substr(0, size), "cut.json");
      ASSERT_FALSE(read) << name << " cut at " << size;
      const std::string& message = read.error().message;
      EXPECT_THAT(message, StartsWith("cut.json: ")) << name << " cut at " << size;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      if (size > 1) EXPECT_THAT(message, ContainsRegex("^cut.json: (after )?/")) << name << " cut at " << size;
    }
  }
}

TEST(ResultsReaderTest, EveryCutOfTheSmallExampleFails) {
  const std::string text = example("pass-1gpu-l40s-genoa.json");
  for (std::size_t size = 0; size + 1 < text.size(); ++size) {
    EXPECT_FALSE(results_from_json(std::string_view(text).substr(0, size), "cut.json")) << size;
  }
}

TEST(ResultsReaderTest, MutatedDocumentsNeverCrash) {
  std::mt19937 random(20240611);
  const std::string chars = "{}[]\":,0-9.enull \x01\xff";
  for (const auto& [name, text] : documents()) {
    for (int round = 0; round < 400; ++round) {
      std::string mutated = text;
      const int edits = 1 + static_cast<int>(random() % 4);
      for (int i = 0; i < edits; ++i) {
        mutated[random() % mutated.size()] = chars[random() % chars.size()];
      }
      const auto read = results_from_json(mutated, "mutated.json");
      if (!read) EXPECT_EQ(read.error().message.find('\n'), std::string::npos) << read.error().message;
    }
  }
}

TEST(ReadResultsFileTest, ReadsAFileAndNamesItInErrors) {
  const auto dir = std::filesystem::temp_directory_path() / ("pcieval-reader-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.json").string();
  const std::string text = results_to_json(testing::hgx_spr_results());
  std::ofstream(good) << text;
  const auto read = read_results_file(good);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(results_to_json(read.value()), text);

  const std::string cut = (dir / "cut.json").string();
  std::ofstream(cut) << text.substr(0, 1000);
  const auto truncated = read_results_file(cut);
  ASSERT_FALSE(truncated);
  EXPECT_THAT(truncated.error().message, StartsWith(cut + ": /devices/"));

  const std::string missing = (dir / "missing.json").string();
  EXPECT_EQ(read_results_file(missing).error().message, "cannot open " + missing + ": No such file or directory");
  EXPECT_EQ(read_results_file(dir.string()).error().message, "cannot read " + dir.string() + ": Is a directory");

  // "-" reads standard input.
  const int saved = ::dup(STDIN_FILENO);
  const int file = ::open(good.c_str(), O_RDONLY);
  ASSERT_GE(file, 0);
  ::dup2(file, STDIN_FILENO);
  const auto from_stdin = read_results_file("-");
  ::dup2(saved, STDIN_FILENO);
  ::close(file);
  ::close(saved);
  ASSERT_TRUE(from_stdin) << from_stdin.error().message;
  EXPECT_EQ(results_to_json(from_stdin.value()), text);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pcieval
