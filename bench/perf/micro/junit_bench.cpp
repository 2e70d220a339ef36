// Google Benchmark of report --junit's renderer on documents whose verdicts
// share one subject, the case that was quadratic (issue 29 item 7: 20,000
// verdicts took 24.5 s while every name was searched from "x (2)" again).
// Linear means the time per verdict stays flat as the count grows 10x.
#include <benchmark/benchmark.h>

#include <string>

#include "model/results.hpp"
#include "report/junit.hpp"

namespace {

pcieval::Results same_subject_results(std::size_t count) {
  pcieval::Results results;
  results.evidence.host.hostname = "gpu-node-017";
  results.verdicts.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    pcieval::Verdict verdict;
    verdict.subject = "0000:17:00.0";
    verdict.status = pcieval::VerdictStatus::kPass;
    verdict.code = pcieval::ReasonCode::kLinkAtExpectedState;
    verdict.reason = "Gen5 x16 as capable";
    results.verdicts.push_back(verdict);
  }
  return results;
}

void BM_JunitSameSubject(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const pcieval::Results results = same_subject_results(count);
  for (auto _ : state) {
    std::string xml = pcieval::render_junit(results, "pcieval");
    benchmark::DoNotOptimize(xml);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
}
BENCHMARK(BM_JunitSameSubject)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace
