// `pcieval check`: discover, measure, then judge and tell
// (judge_and_report.cpp, the half validate and diagnose share).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "app/commands.hpp"
#include "app/reference_copy.hpp"
#include "app/simulate.hpp"
#include "app/stop_signal.hpp"
#include "model/results.hpp"
#include "report/atomic_file.hpp"
#include "report/input_file.hpp"
#include "report/results_writer.hpp"
#include "topology/discover.hpp"

namespace pcieval::app {

DiscoveryOptions discovery_options(const SourceOptions& sources) {
  DiscoveryOptions options;
  options.sysfs_root = sources.sysfs_root;
  if (sources.topology_xml) options.topology_xml = *sources.topology_xml;
  // Fault injection for the tests of the sysfs deadline (tests/cli,
  // tests/mpi): a read of the file this names never returns, as a config
  // read held by a wedged device or root port would not. Nothing else can
  // stand in for one: sysfs reads refuse FIFOs and devices on their type.
  if (const char* stalled = std::getenv("PCIEVAL_TEST_STALL_SYSFS_READ"); stalled != nullptr && *stalled != '\0') {
    options.sysfs_read.before_read = [file = std::string(stalled)](const std::string& path) {
      if (path != file) return;
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    };
  }
  return options;
}

// The message may quote an argument, a path or a document's text: a newline
// or an escape in it must not break the one line an operator greps for.
void print_error(const std::string& message) { std::cerr << "pcieval: error: " << terminal_text(message) << "\n"; }

namespace {

// pcieval-copy-reference prints well under a kilobyte.
constexpr std::size_t kMaxReferenceBytes = std::size_t{1} << 20;

}  // namespace

int run_check(const CheckOptions& given) {
  CheckOptions options = given;
  if (!options.simulate) {
    if (const char* scenario = std::getenv("PCIEVAL_SIMULATE"); scenario != nullptr && *scenario != '\0') {
      options.simulate = scenario;
    }
  }
  // First, before any thread starts: the simulator is chosen by setenv.
  std::unique_ptr<SimulatedNode> simulated;
  if (options.simulate) {
    auto prepared = SimulatedNode::prepare_instead_of(
        *options.simulate, options.sources.sysfs_root != "/sys" || options.sources.topology_xml.has_value(),
        "--sysfs-root or --topology-xml");
    if (!prepared) {
      print_error(prepared.error().message);
      return kExitUsage;
    }
    simulated = std::move(prepared).value();
    options.sources = simulated->sources();
  }
  // Before anything is measured: an output that cannot be written, or that
  // would replace another output or an input, is found now, not after a soak
  // whose results it would have held.
  std::vector<NamedFile> inputs;
  if (options.reference_path) inputs.push_back({"--reference", *options.reference_path});
  if (const Status writable = check_outputs(options.judge, inputs); !writable) {
    print_error(writable.error().message);
    return kExitUsage;
  }
  // From the first step to the last: a signal at any moment of a run (while
  // discovering, measuring or judging) makes it interrupted, never a pass.
  const StopOnSignal stop(static_cast<long long>(options.stop_grace_s * 1e9));
  JudgeOptions judge_options = options.judge;
  judge_options.add_unjudged_notes = true;
  Results results;
  // A bad reference file is found before the probes run, not after.
  std::optional<ReferenceRun> reference;
  if (options.reference_path) {
    auto text = read_input_file(*options.reference_path, kMaxReferenceBytes, "pcieval-copy-reference output");
    if (!text) {
      print_error("--reference: " + text.error().message);
      return kExitUsage;
    }
    auto parsed = parse_reference_run(text.value());
    if (!parsed) {
      print_error("--reference: " + *options.reference_path + ": " + parsed.error().message);
      return kExitUsage;
    }
    reference = std::move(parsed).value();
  }
  // A bad profile is found before a 30-minute soak, not after it.
  if (judge_options.profile_path) {
    auto profile = load_profile(*judge_options.profile_path);
    if (!profile) return kExitUsage;
    results.thresholds = std::move(*profile);
    judge_options.profile_path.reset();
  }

  auto evidence = discover(discovery_options(options.sources));
  if (!evidence) {
    print_error(evidence.error().message);
    return kExitUsage;
  }

  results.evidence = std::move(evidence).value();
  Evidence& found = results.evidence;
  if (simulated) simulated->label(found);
  const bool any_gpu = std::any_of(found.devices.begin(), found.devices.end(),
                                   [](const DeviceRecord& d) { return d.function.kind == DeviceKind::kGpu; });
  // Probes measure the machine this runs on, so they never run against a tree
  // read from elsewhere: the numbers would be pinned to the wrong links.
  // A simulated node is the one machine they may run against: its links are
  // the ones the simulator times the copies by.
  const bool this_machine = simulated || (options.sources.sysfs_root == "/sys" && !options.sources.topology_xml);
  if (!options.probes.enabled) {
    found.notes.push_back("probes not run (--no-probes): links judged as read");
  } else if (!this_machine) {
    found.notes.push_back("probes not run: the PCI tree was read from --sysfs-root/--topology-xml, not this machine");
  } else {
    // Each complete round of a soak replaces -o FILE atomically, marked
    // unfinished: a crash or a power cut leaves the last round on disk.
    const bool flush = options.probes.soak() && judge_options.output_path && *judge_options.output_path != "-";
    const auto after_round = [&](const Evidence& so_far) {
      if (!flush) return;
      Results partial;
      partial.evidence = so_far;
      partial.thresholds = results.thresholds;
      judge(partial, judge_options.expected_gpus);
      if (const Status written = write_file_atomically(*judge_options.output_path, results_to_json(partial));
          !written) {
        print_error("-o: " + written.error().message);
      }
    };
    measure(found, options.probes, &stop.flag(), after_round);
    if (reference) found.reference_copies = compare_with_reference(*reference, found.measurements);
  }
  if (const int signal = stop.flag().load(); signal != 0 && !found.interrupted) found.interrupted = signal_name(signal);
  if (!any_gpu) {
    found.notes.push_back("no NVIDIA GPU found: GPU probes skipped; judged the host's PCIe links only");
  } else if (found.link_samples.empty()) {
    found.notes.push_back(
        "GPU links were read without load: an idle GPU's lower link speed is inconclusive, not a downgrade");
  }

  return judge_and_report(std::move(results), judge_options);
}

}  // namespace pcieval::app
