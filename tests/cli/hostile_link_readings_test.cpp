// A property beside pass_needs_evidence_test (issue 29, item 1): a broken
// reading of a GPU's link is never a pass. For every fixture machine with a
// GPU, each link attribute (current_link_speed, current_link_width,
// max_link_speed, max_link_width) of the GPU and of the port above it is
// replaced, one at a time, with each hostile value a reliability test found
// passing: the all-ones width of a device that no longer answers (63), a link
// that is down (0), numbers no kernel prints, "Unknown", an empty file, NUL
// bytes, 100 KB of text, a directory, a dangling symlink, a FIFO. `check` must then
// not exit 0, and no verdict of that GPU may be a pass. A capability that
// cannot be read leaves the link's expectation unknown, so the max_link_*
// files are held to the same rule.
//
// One GPU per machine (the first whose untouched verdict is a pass, else the
// first GPU): every GPU of every machine would be about 7,000 runs, several
// minutes on the 2 cores CI has; one GPU is about 1,300 runs. The GPUs of one
// machine share one code path, and every machine's shape (switch, root port,
// emulated port, no port) is covered.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string> kAttributes = {"current_link_speed", "current_link_width", "max_link_speed",
                                              "max_link_width"};

struct Hostile {
  std::string name;
  enum class Kind { kText, kDirectory, kDanglingSymlink, kFifo } kind = Kind::kText;
  std::string text;
};

std::vector<Hostile> hostile_values() {
  std::vector<Hostile> values;
  for (const char* text : {"63", "0", "-16", "x16", "0x10", "999 GT/s", "nan", "-16.0", "Unknown"}) {
    values.push_back({text, Hostile::Kind::kText, std::string(text) + "\n"});
  }
  values.push_back({"empty", Hostile::Kind::kText, ""});
  values.push_back({"NUL bytes", Hostile::Kind::kText, std::string(8, '\0')});
  std::string big;
  while (big.size() < 100 * 1024) big += "the quick brown fox jumps over the lazy dog 16.0 GT/s PCIe x16\n";
  values.push_back({"100 KB of text", Hostile::Kind::kText, big});
  values.push_back({"a directory", Hostile::Kind::kDirectory, ""});
  values.push_back({"a dangling symlink", Hostile::Kind::kDanglingSymlink, ""});
  // Item 12: a FIFO with no writer blocked open() for ever; now refused on its type.
  values.push_back({"a FIFO", Hostile::Kind::kFifo, ""});
  return values;
}

// Puts `value` where `file` was (or would be: a fixture may lack one on
// purpose); the destructor puts back what was there.
class Replaced {
 public:
  Replaced(fs::path file, const Hostile& value)
      : file_(std::move(file)), existed_(fs::is_regular_file(file_)), original_(existed_ ? slurp(file_) : "") {
    fs::remove(file_);
    switch (value.kind) {
      case Hostile::Kind::kText:
        std::ofstream(file_, std::ios::binary) << value.text;
        break;
      case Hostile::Kind::kDirectory:
        fs::create_directory(file_);
        break;
      case Hostile::Kind::kDanglingSymlink:
        fs::create_symlink("no-such-attribute", file_);
        break;
      case Hostile::Kind::kFifo:
        if (::mkfifo(file_.c_str(), 0644) != 0) ADD_FAILURE() << "mkfifo " << file_;
        break;
    }
  }
  Replaced(const Replaced&) = delete;
  Replaced& operator=(const Replaced&) = delete;
  ~Replaced() {
    fs::remove_all(file_);
    if (existed_) std::ofstream(file_, std::ios::binary) << original_;
  }

 private:
  fs::path file_;
  bool existed_;
  std::string original_;
};

class HostileLinkReadings : public ScratchDirTest {
 protected:
  // Runs `check --no-probes` on the copy of the machine at `root`.
  json check(const fs::path& root, int* exit_code) {
    const std::string out = path("out.json");
    fs::remove(out);
    const CliRun run =
        run_pcieval("check --no-probes --sysfs-root " + shell_quote((root / "sys").string()) + " --topology-xml " +
                    shell_quote((root / "topology.xml").string()) + " -q -o " + shell_quote(out));
    *exit_code = run.exit_code;
    return json::parse(slurp(out), nullptr, false);
  }

  static const json* verdict_of(const json& document, const std::string& subject) {
    for (const json& v : document["verdicts"]) {
      if (v["subject"] == subject) return &v;
    }
    return nullptr;
  }
};

// The GPU to attack and the port above it (nullopt: a guest's GPU with no port).
struct Target {
  std::string gpu;
  std::optional<std::string> port;
};

std::optional<Target> pick_gpu(const json& document) {
  std::optional<Target> first;
  for (const json& device : document["devices"]) {
    if (device["kind"] != "gpu" || device["virtual_function"] == true) continue;
    Target target{device["bdf"], std::nullopt};
    if (!device["path"].empty()) target.port = device["path"][0]["upstream"];
    bool passes = false;
    for (const json& v : document["verdicts"]) passes = passes || (v["subject"] == target.gpu && v["status"] == "pass");
    if (passes) return target;
    if (!first) first = target;
  }
  return first;
}

TEST_F(HostileLinkReadings, NeverPassTheGpuWhoseLinkReadsThem) {
  const std::vector<Hostile> values = hostile_values();
  std::size_t machines = 0;
  std::size_t runs = 0;
  for (const std::string& machine : fixture_machines()) {
    const fs::path root = dir_ / machine;
    fs::copy(fixture(machine), root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    int untouched_exit = -1;
    const json untouched = check(root, &untouched_exit);
    ASSERT_FALSE(untouched.is_discarded()) << machine;
    const std::optional<Target> target = pick_gpu(untouched);
    if (!target) continue;
    ++machines;
    std::vector<std::string> ends = {target->gpu};
    if (target->port) ends.push_back(*target->port);
    for (const std::string& end : ends) {
      const fs::path attributes = fs::canonical(root / "sys" / "bus" / "pci" / "devices" / end);
      for (const std::string& attribute : kAttributes) {
        for (const Hostile& value : values) {
          const std::string what = machine + ": " + end + "/" + attribute + " = " + value.name;
          int exit_code = -1;
          json document;
          {
            const Replaced replaced(attributes / attribute, value);
            document = check(root, &exit_code);
          }
          ++runs;
          ASSERT_FALSE(document.is_discarded()) << what << ": no results document (exit " << exit_code << ")";
          EXPECT_NE(exit_code, 0) << what;
          EXPECT_NE(exit_code, 2) << what << ": a broken reading is a verdict, not a usage or output error";
          const json* verdict = verdict_of(document, target->gpu);
          ASSERT_NE(verdict, nullptr) << what << ": the GPU has no verdict";
          EXPECT_NE((*verdict)["status"], "pass") << what << ": " << (*verdict)["reason"];
        }
      }
    }
    // Put back, the machine judges as before: the attack left nothing behind.
    int again_exit = -1;
    (void)check(root, &again_exit);
    EXPECT_EQ(again_exit, untouched_exit) << machine;
    fs::remove_all(root);
  }
  EXPECT_GE(machines, 10U);
  EXPECT_GE(runs, machines * kAttributes.size() * values.size());
}

}  // namespace
}  // namespace pcieval::testing
