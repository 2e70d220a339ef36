#include "validate/event_rate_rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "model/text.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval {
namespace {

using Kind = CapturedEvent::Kind;

// The default of ThresholdSet::correctable_errors_per_gb, which the burst
// rate is scaled against.
const double kDefaultCorrectablePerGb = ThresholdSet{}.correctable_errors_per_gb;

// The fastest link the 1e-12 rule covers: the bound for a port whose link
// the evidence does not know is the loosest one, so no port is flagged for a
// link it may not have.
constexpr LinkState kFastestSpecLink{PcieGen::kGen5, 16};

// What the evidence knows of the link `address` is an end of: the device's
// own capability, a path link's expectation, or nvidia-smi's Max.
std::optional<LinkState> known_link(const Evidence& evidence, const PciAddress& address) {
  for (const DeviceRecord& device : evidence.devices) {
    if (device.function.bdf == address && device.function.link) {
      if (auto capable = device.function.link->capable()) return capable.value();
    }
  }
  for (const DeviceRecord& device : evidence.devices) {
    for (const Link& link : device.path) {
      if (!(link.downstream == address) && !(link.upstream == address)) continue;
      if (auto expected = link.expected()) return expected.value();
    }
  }
  const DeviceRecord* device = find_device(evidence, address);
  if (device != nullptr && device->nvml && device->nvml->max_gen && device->nvml->max_width) {
    if (auto gen = gen_from_number(*device->nvml->max_gen)) return LinkState{gen.value(), *device->nvml->max_width};
  }
  return std::nullopt;
}

// The device's correctable errors, in the order read.
struct PortErrors {
  std::vector<const CapturedEvent*> events;
};

// The densest kBurstWindowS of time-stamped events, per source (stamps of
// two files need not share a clock): the first and last event of it.
struct Densest {
  std::size_t count = 0;
  const CapturedEvent* first = nullptr;
  const CapturedEvent* last = nullptr;
};

Densest densest_window(const std::vector<const CapturedEvent*>& events) {
  std::map<std::string, std::vector<const CapturedEvent*>> by_source;
  for (const CapturedEvent* event : events) {
    if (event->time_s && std::isfinite(*event->time_s)) by_source[event->source].push_back(event);
  }
  Densest best;
  for (auto& [source, stamped] : by_source) {
    std::stable_sort(stamped.begin(), stamped.end(),
                     [](const CapturedEvent* a, const CapturedEvent* b) { return *a->time_s < *b->time_s; });
    std::size_t begin = 0;
    for (std::size_t end = 0; end < stamped.size(); ++end) {
      while (*stamped[end]->time_s - *stamped[begin]->time_s >= kBurstWindowS) ++begin;
      const std::size_t count = end - begin + 1;
      if (count > best.count) best = Densest{count, stamped[begin], stamped[end]};
    }
  }
  return best;
}

std::string lines_of(const std::vector<const CapturedEvent*>& events) {
  if (events.size() == 1) return origin_of(*events.front());
  return origin_of(*events.front()) + " .. " + origin_of(*events.back());
}

bool has_capture_line(const Evidence& evidence, const PciAddress& address) {
  return std::any_of(evidence.capture_lines.begin(), evidence.capture_lines.end(),
                     [&](const CaptureLine& line) { return line.device && *line.device == address; });
}

void judge_port(const Evidence& evidence, const ThresholdProfile& profile, const PciAddress& address,
                const std::vector<const CapturedEvent*>& events, CapturedRates& out) {
  const std::string subject = to_string(address);
  const Densest densest = densest_window(events);
  std::string note = "correctable PCIe errors on " + subject + ": " + std::to_string(events.size()) + " in the log (" +
                     lines_of(events) + ")";
  const std::string counted = "the kernel logged " + std::to_string(events.size()) + " correctable PCIe error" +
                              (events.size() == 1 ? "" : "s") + " on " + subject + " (" + lines_of(events) + ")";
  // A device the log names gets a verdict of its own, whatever its rate:
  // a note alone left a log of a few errors with nothing judged at all.
  const auto unknown_rate = [&](const std::string& why) {
    Verdict verdict;
    verdict.subject = subject;
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kCorrectableErrorRateUnknown;
    verdict.reason = counted + ": " + why;
    verdict.remediation =
        "Capture the kernel log with its time stamps (`dmesg -T`, `journalctl -k -o short-iso`), or run `pcieval "
        "check` on the node to judge correctable errors per GB moved under load.";
    out.verdicts.push_back(std::move(verdict));
  };
  if (densest.count == 0) {
    out.notes.push_back(note + "; the lines carry no time stamps, so their rate is unknown");
    unknown_rate("the lines carry no time stamps, so their rate is unknown and was not judged");
    return;
  }
  note += ", at most " + std::to_string(densest.count) + " within " + fixed_text(kBurstWindowS, 0) + " s";
  if (densest.count < events.size()) {
    const std::size_t unstamped = static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [](const CapturedEvent* e) { return !e->time_s; }));
    if (unstamped > 0) note += " (" + std::to_string(unstamped) + " without a time stamp)";
  }

  const std::optional<LinkState> known = known_link(evidence, address);
  const LinkState link = known.value_or(kFastestSpecLink);
  if (generation_number(link.gen) > generation_number(PcieGen::kGen5)) {
    out.notes.push_back(note + "; " + to_string(link) +
                        " links are specified by their error rate before forward error correction: not judged");
    unknown_rate("its " + to_string(link) +
                 " link is specified by its error rate before forward error correction, which the log does not give");
    return;
  }
  const ThresholdSet thresholds = thresholds_for(profile, find_device(evidence, address));
  const double bound = burst_errors_per_minute(link, thresholds.correctable_errors_per_gb);
  const std::string link_text = known ? "its " + to_string(link) + " link" : "a Gen5 x16 link (its link is not known)";
  if (densest.count < kMinBurstErrors || static_cast<double>(densest.count) <= bound) {
    out.notes.push_back(note + ": below the " + fixed_text(bound, 1) + " per minute " + link_text +
                        " logs at the spec's bit error rate, not judged");
    Verdict verdict;
    verdict.subject = subject;
    verdict.status = VerdictStatus::kPass;
    verdict.code = ReasonCode::kCorrectableErrorsWithinSpecRate;
    verdict.reason = counted + ", at most " + std::to_string(densest.count) + " within " +
                     fixed_text(kBurstWindowS, 0) + " s: no faster than the " + fixed_text(bound, 1) + " per minute " +
                     link_text +
                     " logs at the spec's bit error rate of 1e-12; only the error rate was judged, not the link";
    out.verdicts.push_back(std::move(verdict));
    return;
  }
  out.notes.push_back(note);
  Verdict verdict;
  verdict.subject = subject;
  verdict.status = VerdictStatus::kLinkErrors;
  verdict.code = ReasonCode::kCorrectableErrorBurstLogged;
  verdict.reason = "the kernel logged " + std::to_string(densest.count) + " correctable PCIe errors on " + subject +
                   " within " + fixed_text(kBurstWindowS, 0) + " s (" + origin_of(*densest.first) + " .. " +
                   origin_of(*densest.last) + "), more than the " + fixed_text(bound, 1) + " per minute " + link_text +
                   " logs saturated at the spec's bit error rate of 1e-12";
  verdict.remediation =
      "A burst of correctable errors means a marginal link (signal integrity): reseat " + subject +
      " and the card below it, check the riser or cable and the slot's retimer, and update the BIOS; if the "
      "errors follow the slot with another card, the slot or the board is at fault. Run `pcieval check` under load "
      "to measure errors per GB moved.";
  out.verdicts.push_back(std::move(verdict));
}

void note_replays(const Evidence& evidence, CapturedRates& out) {
  std::size_t zero = 0;
  for (const DeviceRecord& device : evidence.devices) {
    if (!device.nvml || !device.nvml->replay_counter || !has_capture_line(evidence, device.function.bdf)) continue;
    const std::uint64_t replays = *device.nvml->replay_counter;
    if (replays == 0) {
      ++zero;
      continue;
    }
    const std::string name = device.nvml->name ? " (" + *device.nvml->name + ")" : std::string();
    out.notes.push_back(to_string(device.function.bdf) + name + ": nvidia-smi counts " + std::to_string(replays) +
                        " PCIe replay" + (replays == 1 ? "" : "s") +
                        " since reset; the capture does not say over how long, so the rate is not judged (run "
                        "`pcieval check` to judge replays per GB moved)");
  }
  if (zero > 0) {
    out.notes.push_back(std::to_string(zero) + (zero == 1 ? " GPU" : " GPUs") +
                        " captured by nvidia-smi count 0 PCIe replays since reset");
  }
}

}  // namespace

double burst_errors_per_minute(const LinkState& link, double correctable_errors_per_gb) {
  constexpr double kDirections = 2.0;
  constexpr double kSecondsPerMinute = 60.0;
  const double bits_per_s = transfer_rate_gts(link.gen) * 1e9 * link.width * kDirections;
  const double scale = correctable_errors_per_gb > 0 ? correctable_errors_per_gb / kDefaultCorrectablePerGb : 0.0;
  return bits_per_s * kSpecBitErrorRate * kSecondsPerMinute * scale;
}

CapturedRates judge_captured_rates(const Evidence& evidence, const ThresholdProfile& profile) {
  CapturedRates out;
  std::map<PciAddress, std::vector<const CapturedEvent*>> by_device;
  for (const CapturedEvent& event : evidence.captured_events) {
    if (event.kind == Kind::kCorrectableError) by_device[event.device].push_back(&event);
  }
  for (const auto& [address, events] : by_device) judge_port(evidence, profile, address, events, out);
  note_replays(evidence, out);
  return out;
}

}  // namespace pcieval
