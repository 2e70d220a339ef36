#include "report/outputs.hpp"

#include <filesystem>
#include <system_error>

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
      failures.push_back(written.error());
    }
  }
  return failures;
}

std::vector<Error> write_outputs(const Results& results, const ReportContext& context, const OutputPaths& paths) {
  const OutputFile files[] = {
      {paths.results_json, [&] { return results_to_json(results); }},
      {paths.prometheus,
       [&] { return render_prometheus(results, context.started_s, context.duration_s, context.budgets); }},
      {paths.junit, [&] { return render_junit(results, "pcieval", context.started_s); }},
      {paths.html, [&] { return render_html(results, context.budgets); }},
  };
  return write_files(files);
}

std::string missing_directory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return {};
  std::error_code error;
  const auto status = std::filesystem::status(parent, error);
  if (status.type() == std::filesystem::file_type::not_found) return "directory " + parent.string() + " does not exist";
  if (!error && status.type() != std::filesystem::file_type::directory) return parent.string() + " is not a directory";
  return {};
}

Status check_output_directory(std::string_view flag, const std::optional<std::string>& path) {
  if (!path || path->empty() || *path == "-") return ok_status();
  if (const std::string problem = missing_directory(*path); !problem.empty()) {
    return make_error(std::string(flag) + ": cannot write " + *path + ": " + problem);
  }
  return ok_status();
}

}  // namespace pcieval
