// The replay driver: runs a libFuzzer harness's LLVMFuzzerTestOneInput on
// every file of the directories (or files) it is given, once each, so that
// `make test` replays the committed corpus (tests/fuzz/corpus/<harness>/) and
// the capture fixtures through the normal build in seconds, without clang or
// libFuzzer. An input that crashes kills the process (ctest: failed); one
// that throws fails here, naming the file. Under `make test-sanitize` the
// same replay runs with ASan and UBSan.
//
//   fuzz_replay_<harness> DIR_OR_FILE...
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The files of `root` (itself if it is a file), sorted so that a failure
// names the same input on every run.
std::vector<fs::path> inputs_of(const fs::path& root) {
  std::vector<fs::path> files;
  if (fs::is_regular_file(root)) {
    files.push_back(root);
    return files;
  }
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::size_t replayed = 0;
  std::size_t bytes = 0;
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path root(argv[i]);
    if (!fs::exists(root)) {
      // A missing corpus is a broken checkout or a renamed harness, not "no inputs".
      std::fprintf(stderr, "FAIL: %s does not exist\n", root.c_str());
      ++failures;
      continue;
    }
    for (const fs::path& file : inputs_of(root)) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "FAIL: cannot read %s\n", file.c_str());
        ++failures;
        continue;
      }
      const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      // The harness, not the driver, decides what is a finding; libFuzzer
      // treats an escaping exception as a crash, and so does this.
      try {
        (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
      } catch (const std::exception& error) {
        std::fprintf(stderr, "FAIL: %s: exception: %s\n", file.c_str(), error.what());
        ++failures;
      } catch (...) {
        std::fprintf(stderr, "FAIL: %s: exception of an unknown type\n", file.c_str());
        ++failures;
      }
      ++replayed;
      bytes += data.size();
    }
  }
  std::printf("replayed %zu inputs (%zu bytes), %d failed\n", replayed, bytes, failures);
  if (replayed == 0) {
    std::fprintf(stderr, "FAIL: no inputs replayed\n");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
