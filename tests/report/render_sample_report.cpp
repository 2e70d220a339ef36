// Prints a renderer's output for the hand-built sample results, for the
// tests that hand it to a real consumer (node_exporter, an XML parser). The
// plain modes render the sample with its probe evidence (measurements, a
// failed and a skipped probe), so the consumers see every family and suite:
//   render_sample_report prom|prom-hostile|junit|junit-hostile|html|html-hostile
// (html-hostile adds markup to the hostname, for the browser to refuse.)
// Exit 2 on any other argument.
#include <cstdio>
#include <string>
#include <string_view>

#include "report/hostile_results.hpp"
#include "report/html.hpp"
#include "report/junit.hpp"
#include "report/prometheus.hpp"
#include "report/sample_results.hpp"

namespace {

// 2024-06-10T06:13:20.25Z and 12.5 s: fractions on purpose, so the consumer
// parses a non-integer value.
constexpr double kRunStart = 1718000000.25;
constexpr double kRunDuration = 12.5;

// Input, not a result: a budget for the x8 GPU's h2d row, so the consumers
// see the budget family and the curve's budget line (validate/ computes the
// real one; report/ may not depend on it).
const pcieval::BandwidthBudget kSampleBudget{"0000:17:00.0", pcieval::Direction::kHostToDevice, "Gen5 x16", 58.4};

}  // namespace

int main(int argc, char** argv) {
  using namespace pcieval;
  const std::string_view mode = argc == 2 ? argv[1] : "";
  std::string text;
  if (mode == "prom") {
    text = render_prometheus(testing::hgx_spr_results_probed(), kRunStart, kRunDuration, {&kSampleBudget, 1});
  } else if (mode == "prom-hostile") {
    text = render_prometheus(testing::hostile_results(), kRunStart, kRunDuration);
  } else if (mode == "junit") {
    text = render_junit(testing::hgx_spr_results_probed(), "pcieval", kRunStart);
  } else if (mode == "junit-hostile") {
    text = render_junit(testing::hostile_results(), "pcieval \"burn-in\" & <more>", kRunStart);
  } else if (mode == "html") {
    text = render_html(testing::hgx_spr_results_probed(), {&kSampleBudget, 1});
  } else if (mode == "html-hostile") {
    Results results = testing::hostile_results();
    results.evidence.host.hostname += "<script>document.title='injected'</script><img src=\"http://127.0.0.1:9/x\">";
    results.evidence.devices[1].nvml = NvmlGpuLink{};
    results.evidence.devices[1].nvml->name = "H100 <style>body{display:none}</style>";
    text = render_html(results);
  } else {
    std::fprintf(stderr, "usage: render_sample_report prom|prom-hostile|junit|junit-hostile|html|html-hostile\n");
    return 2;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
