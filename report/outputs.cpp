#include "report/outputs.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "report/atomic_file.hpp"
#include "report/html.hpp"
#include "report/junit.hpp"
#include "report/prometheus.hpp"
#include "report/results_writer.hpp"

namespace pcieval {

std::vector<Error> write_files(std::span<const OutputFile> files) {
  std::vector<Error> failures;
  for (const OutputFile& file : files) {
    if (!file.path) continue;
    if (Status written = write_file_atomically(*file.path, file.render()); !written) {
      failures.push_back(file.flag.empty() ? written.error()
                                           : make_error(std::string(file.flag) + ": " + written.error().message));
    }
  }
  return failures;
}

std::vector<Error> write_outputs(const Results& results, const ReportContext& context, const OutputPaths& paths) {
  const OutputFile files[] = {
      {paths.results_json, [&] { return results_to_json(results); }, "-o"},
      {paths.prometheus,
       [&] { return render_prometheus(results, context.started_s, context.duration_s, context.budgets); }, "--prom"},
      {paths.junit, [&] { return render_junit(results, "pcieval", context.started_s); }, "--junit"},
      {paths.html, [&] { return render_html(results, context.budgets, context.loaded_links); }, "--html"},
  };
  return write_files(files);
}

namespace {

// What a named file is, for telling whether two names are one file.
struct FileIdentity {
  bool is_stdout = false;
  // A device: several writes there replace nothing.
  bool shared_device = false;
  std::string resolved;  // absolute, links followed, "." and ".." gone
  std::optional<std::pair<dev_t, ino_t>> inode;
};

// nullopt for what identifies no file: an empty path, an input "-" (stdin).
std::optional<FileIdentity> identity_of(const std::string& path, bool output) {
  if (path.empty() || (path == "-" && !output)) return std::nullopt;
  FileIdentity identity;
  struct stat info {};
  if (path == "-") {
    identity.is_stdout = true;
    if (::fstat(STDOUT_FILENO, &info) != 0) return identity;
  } else {
    auto target = output_target(path);
    const std::string followed = target ? target->path : path;
    std::error_code error;
    std::filesystem::path resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(followed), error);
    if (error) resolved = std::filesystem::absolute(followed, error).lexically_normal();
    identity.resolved = resolved.string();
    if (::stat(followed.c_str(), &info) != 0) return identity;
  }
  if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) {
    identity.shared_device = true;
  } else {
    identity.inode = std::pair{info.st_dev, info.st_ino};
  }
  return identity;
}

bool same_file(const FileIdentity& a, const FileIdentity& b) {
  if (a.shared_device || b.shared_device) return false;
  if (a.is_stdout && b.is_stdout) return true;
  if (a.inode && b.inode && *a.inode == *b.inode) return true;
  return !a.is_stdout && !b.is_stdout && a.resolved == b.resolved;
}

// "-o r.json", "-o (standard output)".
std::string named(const NamedFile& file) {
  return file.flag + " " + (file.path == "-" ? std::string("- (standard output)") : file.path);
}

}  // namespace

Status check_distinct_files(std::span<const NamedFile> outputs, std::span<const NamedFile> inputs) {
  std::vector<std::optional<FileIdentity>> written;
  written.reserve(outputs.size());
  for (const NamedFile& output : outputs) written.push_back(identity_of(output.path, true));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!written[i]) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (!written[j] || !same_file(*written[i], *written[j])) continue;
      return make_error(named(outputs[j]) + " and " + named(outputs[i]) +
                        " are one file: one output would replace the other; give each its own file");
    }
  }
  for (const NamedFile& input : inputs) {
    const auto read = identity_of(input.path, false);
    if (!read) continue;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (!written[i] || !same_file(*read, *written[i])) continue;
      if (!input.rewritten_by.empty() && outputs[i].flag == input.rewritten_by) continue;
      return make_error(named(outputs[i]) + " would replace the input " + named(input) +
                        ", which this command reads: give the output its own file");
    }
  }
  return ok_status();
}

std::string missing_directory(const std::string& path) {
  auto target = output_target(path);
  const std::filesystem::path parent = std::filesystem::path(target ? target->path : path).parent_path();
  if (parent.empty()) return {};
  std::error_code error;
  const auto status = std::filesystem::status(parent, error);
  if (status.type() == std::filesystem::file_type::not_found) return "directory " + parent.string() + " does not exist";
  if (!error && status.type() != std::filesystem::file_type::directory) return parent.string() + " is not a directory";
  return {};
}

Status check_output_directory(std::string_view flag, const std::optional<std::string>& path) {
  if (!path || path->empty() || *path == "-") return ok_status();
  // A loop of symbolic links is found now, not after the run.
  if (auto target = output_target(*path); !target) return make_error(std::string(flag) + ": " + target.error().message);
  if (const std::string problem = missing_directory(*path); !problem.empty()) {
    return make_error(std::string(flag) + ": cannot write " + *path + ": " + problem);
  }
  return ok_status();
}

}  // namespace pcieval
