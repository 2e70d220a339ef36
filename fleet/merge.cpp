#include "fleet/merge.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "fleet/node_document.hpp"

namespace pcieval {
namespace {

// When the file was last written, which decides between two documents of one
// host: results documents carry no run time of their own. 0 when unknown.
double modified_s(const std::string& path) {
  struct stat info {};
  if (path == "-" || ::stat(path.c_str(), &info) != 0) return 0;
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) * 1e-9;
}

struct Slot {
  FleetInput input;
  std::optional<std::string> problem;
};

void read_one(NodeDocumentReader& reader, const std::string& path, std::size_t order, Slot& slot) {
  slot.input.order = order;
  slot.input.written_s = modified_s(path);
  auto read = reader.read_file(path);
  if (read) {
    slot.input.node = std::move(read.value());
    return;
  }
  // Never abort the merge: the file is a node that could not be judged,
  // named by its path, and a problem line says why.
  slot.problem = read.error().message;
  slot.input.node =
      node_without_results(path, path, kExitUsage, "unreadable results document: " + read.error().message);
}

}  // namespace

ReadInputs read_node_documents(const std::vector<std::string>& paths, std::size_t jobs) {
  // Every slot is written by exactly one thread and read after all joined, so
  // the order of the answer is the order of the paths whatever the timing.
  std::vector<Slot> slots(paths.size());
  std::atomic<std::size_t> next{0};
  // Out of memory in a helper thread must reach main's one-line handler, not
  // std::terminate: the first one is kept, the others stop, and it is thrown
  // again once every thread has joined.
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto work = [&] {
    try {
      NodeDocumentReader reader;
      for (std::size_t i = next.fetch_add(1); i < paths.size(); i = next.fetch_add(1)) {
        read_one(reader, paths[i], i, slots[i]);
      }
    } catch (...) {
      next.store(paths.size());
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(jobs, 1, std::max<std::size_t>(paths.size(), 1));
  {
    // The calling thread is one of the workers; jthreads join on leaving.
    std::vector<std::jthread> helpers;
    helpers.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
  }
  if (failure) std::rethrow_exception(failure);
  ReadInputs read;
  read.inputs.reserve(slots.size());
  for (Slot& slot : slots) {
    if (slot.problem) read.problems.push_back(std::move(*slot.problem));
    read.inputs.push_back(std::move(slot.input));
  }
  return read;
}

Fleet merge_node_documents(const std::vector<std::string>& paths, std::size_t jobs, ToolInfo tool,
                           const OutlierRule& rule) {
  ReadInputs read = read_node_documents(paths, jobs);
  std::vector<FleetNode> nodes = deduplicate_hosts(std::move(read.inputs), read.problems);
  return build_fleet(std::move(nodes), std::move(read.problems), "merge", std::move(tool), rule);
}

}  // namespace pcieval
