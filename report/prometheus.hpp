// Prometheus text exposition (format 0.0.4) of a results document, for
// node_exporter's textfile collector: write it atomically to
// <collector dir>/pcieval.prom and node_exporter serves it on every scrape.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "model/bandwidth_budget.hpp"
#include "model/results.hpp"

namespace pcieval {

// Every family is a gauge named pcieval_* with its unit in the name, written
// with `# HELP` and `# TYPE` once, its series together, labels in name order.
// A family with no series is left out entirely. Label values are valid UTF-8
// (stray bytes become U+FFFD) with backslash, double quote and newline
// escaped. The text ends with a newline.
//
//   pcieval_overall{result}                    1 for results.overall ("pass",
//                                              "fail", "inconclusive"), 0 for
//                                              the other two: all three are
//                                              always there, so alerts can
//                                              test `== 1` without absent().
//   pcieval_device_ok{bdf, kind}               1 when every verdict of the
//                                              subject is pass, else 0.
//   pcieval_device_verdict{bdf, code, kind, status}   1, one per verdict.
//   pcieval_link_speed_gigatransfers_per_second{[bdf, kind,] link_downstream,
//                                              link_upstream, position, state}
//   pcieval_link_width_lanes{same labels}
//   pcieval_gpus_found                         NVIDIA GPUs in the evidence
//                                              (SR-IOV virtual functions not
//                                              counted), judged or not.
//   pcieval_devices_judged                     distinct device subjects of the
//                                              verdicts ("node" not counted).
//   pcieval_bandwidth_gigabytes_per_second{aggregation, [bdf,] direction,
//                                              host_memory, probe, subject}
//                                              the median GB/s (1e9 B/s) of
//                                              each measurement, size sweep
//                                              ("sweep_ce") left out.
//   pcieval_bandwidth_cv_ratio{same labels}    its trials' coefficient of
//                                              variation, a fraction.
//   pcieval_bandwidth_budget_gigabytes_per_second{bdf, direction, expected_link}
//                                              one per entry of `budgets`
//                                              (subject as bdf, the link
//                                              state as expected_link,
//                                              "Gen5 x16"); none when empty.
//   pcieval_probe_status{probe, status}        per probe of the run, 1 for its
//                                              status ("ran", "skipped",
//                                              "failed"), 0 for the other two,
//                                              as pcieval_overall does.
//   pcieval_last_run_timestamp_seconds         when given: Unix time at which
//                                              the run started.
//   pcieval_last_run_duration_seconds          when given: its wall time.
//
// Device labels: bdf is the verdict's subject ("node" for node-wide verdicts
// such as missing GPUs); kind is that device's kind in the evidence ("gpu",
// "nic", "nvme", "other"), "node" for the node and "unknown" for a subject the
// evidence does not list.
//
// Link series and what makes them unique. A link is identified by its two
// ends, link_downstream and link_upstream: the links of every device that has
// a verdict are walked in evidence order, and a link met again (a switch
// uplink above several devices) is written once. So within each family
// (link_downstream, link_upstream, state) names one series, and nothing else
// is needed to tell series apart; the other labels describe it:
// - position: "device_link" (a device to the port above it) or "uplink" (a
//   switch upstream port to the port above it);
// - bdf and kind: on device links only, naming the device at the downstream
//   end (bdf equals link_downstream), so link series join to pcieval_device_ok
//   on bdf. Uplinks carry no device labels at all, whether one device or
//   eight sit below them: labels that depended on which devices were judged
//   would change the series' identity, and break its history, the day a
//   device behind the switch goes missing. (node_exporter serves them with
//   bdf="" and kind="", giving every series of a family the same label
//   names; Prometheus reads an empty label as an absent one.)
// - state: "expected" (the lower of both ends' capabilities), "negotiated"
//   (the downstream end's current state, or the upstream end's where the
//   downstream end's cannot be read), "downstream_max", "upstream_max".
// Measurement series: the labels are the measurement's probe key, subject
// (a GPU's address, "numa0", a group), direction ("h2d", "d2h", "h2h"),
// aggregation ("alone", "with_reverse", "with_peers",
// "total_over_wall_time") and host memory ("pinned", "pageable"), and bdf,
// the GPU's address, when exactly one GPU copied. Every probe
// measures a subject once per direction and aggregation, so these name one
// series; should a document repeat one, the first is written.
//
// Speed and width are computed each on its own, as the results document does,
// so a known width is not hidden by an unknown speed. A value that could not
// be read or derived is omitted: never NaN, never 0.
//
// The timestamp and duration are omitted when not given or not finite, and
// the duration also when negative. No sample carries a timestamp (the textfile
// collector refuses them). The document carries neither (nor a budget, nor
// a GPU index): the caller passes what it knows; `pcieval report` knows the
// budgets (computed from the document's links) but not the run times.
//
// Budgets are judgement (validate/ computes them) and report/ depends on
// model/ only, so the caller hands them in, as for render_check_table.
[[nodiscard]] std::string render_prometheus(const Results& results, std::optional<double> run_timestamp_seconds,
                                            std::optional<double> run_duration_seconds,
                                            std::span<const BandwidthBudget> budgets = {});

}  // namespace pcieval
