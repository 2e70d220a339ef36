#include <chrono>
#include <string>
#include <utility>

#include "bench/host_ceiling.hpp"
#include "bench/probe.hpp"

namespace pcieval {

std::string_view to_string(ProbeMode mode) { return mode == ProbeMode::kQuick ? "quick" : "full"; }

ProbeRegistry make_probe_registry() {
  ProbeRegistry registry;
  add_gpu_probes(registry);
  // The host ceiling runs last: on a GPU node its number is the context for
  // the GPU numbers above it, and it is the probe that always runs.
  registry.push_back(make_host_ceiling_probe());
  return registry;
}

namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

}  // namespace

EngineOutput run_probes(const ProbeRegistry& registry, const ProbeContext& context) {
  EngineOutput output;
  for (const auto& probe : registry) {
    ProbeRun run;
    run.key = std::string(probe->key());
    if (context.config.mode == ProbeMode::kQuick && !probe->in_quick()) {
      run.status = ProbeStatus::kSkipped;
      run.reason = "runs with --full only";
      output.runs.push_back(std::move(run));
      continue;
    }
    if (auto reason = probe->skip_reason(context)) {
      run.status = ProbeStatus::kSkipped;
      run.reason = std::move(*reason);
      output.runs.push_back(std::move(run));
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    ProbeOutput result = probe->run(context);
    run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // A probe that measured nothing and gave no error has failed just the same:
    // an empty result must not read as a pass.
    if (result.measurements.empty() && result.errors.empty()) {
      result.errors.push_back("the probe returned no measurement");
    }
    run.status = result.errors.empty() ? ProbeStatus::kRan : ProbeStatus::kFailed;
    run.reason = join(result.errors);
    run.warnings = std::move(result.warnings);
    for (auto& measurement : result.measurements) output.measurements.push_back(std::move(measurement));
    output.runs.push_back(std::move(run));
  }
  return output;
}

}  // namespace pcieval
