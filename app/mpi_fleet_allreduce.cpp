#include "app/mpi_fleet_allreduce.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "app/mpi_poll.hpp"

namespace pcieval::app {
namespace {

using Json = nlohmann::json;

// Tags of this exchange, apart from the results' (mpi_fleet.cpp, 7301-7302).
constexpr int kTagOfferSize = 7311;
constexpr int kTagOffer = 7312;
constexpr int kTagPlanSize = 7313;
constexpr int kTagPlan = 7314;
constexpr int kTagResultSize = 7315;
constexpr int kTagResult = 7316;

// A barrier's wait polls this often: nodes leave it within this of each
// other, which is what a trial's start skew across nodes is.
constexpr std::chrono::microseconds kBarrierPollInterval{20};

// Sends `text` to `to`: its size, then its bytes; waits for both.
void send_text(MPI_Comm comm, int to, int size_tag, int tag, const std::string& text) {
  const std::int64_t bytes = static_cast<std::int64_t>(text.size());
  MPI_Request requests[2];
  MPI_Isend(&bytes, 1, MPI_INT64_T, to, size_tag, comm, &requests[0]);
  MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, comm, &requests[1]);
  wait_for(requests[0]);
  wait_for(requests[1]);
}

// Receives what send_text sent; nullopt when `deadline` passed first (the
// request stays pending).
std::optional<std::string> receive_text(MPI_Comm comm, int from, int size_tag, int tag,
                                        std::optional<MpiClock::time_point> deadline) {
  std::int64_t bytes = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Irecv(&bytes, 1, MPI_INT64_T, from, size_tag, comm, &request);
  if (!wait_for(request, deadline)) return std::nullopt;
  std::string text(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), '\0');
  MPI_Irecv(text.data(), static_cast<int>(text.size()), MPI_CHAR, from, tag, comm, &request);
  if (!wait_for(request, deadline)) return std::nullopt;
  return text;
}

std::string hex_of(const NcclUniqueId& id) {
  std::string hex;
  hex.reserve(2 * kNcclUniqueIdBytes);
  for (char c : id.internal) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    hex += two;
  }
  return hex;
}

std::optional<NcclUniqueId> id_of(const std::string& hex) {
  if (hex.size() != 2 * kNcclUniqueIdBytes) return std::nullopt;
  NcclUniqueId id{};
  for (std::size_t i = 0; i < kNcclUniqueIdBytes; ++i) {
    unsigned value = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return std::nullopt;
    id.internal[i] = static_cast<char>(value);
  }
  return id;
}

// What this node offers, from the devices it found once (local_gpus).
Json offer_json(const Result<std::vector<int>>& gpus) {
  if (!gpus) return Json{{"gpus", 0}, {"why_not", gpus.error().message}};
  return Json{{"gpus", gpus.value().size()}, {"why_not", ""}};
}

// This node's share: runs it and says how it went, as sent to node 0.
Json run_share(MPI_Comm leaders, const Json& plan, const FleetAllReduceSettings& settings,
               const Result<std::vector<int>>& gpus, const FleetAllReduceHooks& hooks) {
  const auto id = id_of(plan.value("id", std::string()));
  if (!gpus || !id) return Json{{"error", !gpus ? gpus.error().message : "the plan's NCCL unique id is malformed"}};
  AllReducePart part;
  part.id = *id;
  part.first_rank = plan.value("first_rank", 0);
  part.total_ranks = plan.value("total_ranks", 0);
  part.ordinals = gpus.value();
  part.size_bytes = plan.value("size_bytes", std::uint64_t{0});
  part.warmup_trials = plan.value("warmup_trials", 1);
  part.trials = plan.value("trials", 5);
  bool barrier_pending = false;
  part.before_trial = [&]() -> Status {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibarrier(leaders, &request);
    if (wait_for(request, deadline_after(settings.barrier_timeout_s), kBarrierPollInterval)) return ok_status();
    barrier_pending = true;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", settings.barrier_timeout_s);
    return make_error(std::string("the other nodes did not reach the next trial within ") + seconds + " s");
  };
  auto result = hooks.run_part(part);
  Json share;
  if (!result) {
    share["error"] = result.error().message;
  } else {
    share["trial_s"] = result.value().trial_s;
    share["warnings"] = result.value().warnings;
  }
  share["abandoned"] = barrier_pending;
  return share;
}

Json parse_or_null(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  Json parsed = Json::parse(*text, nullptr, false);
  return parsed.is_discarded() ? Json(nullptr) : parsed;
}

FleetAllReduce skipped(int nodes, std::string reason) {
  FleetAllReduce entry;
  entry.status = FleetAllReduceStatus::kSkipped;
  entry.nodes = nodes;
  entry.reason = std::move(reason);
  return entry;
}

}  // namespace

FleetAllReduceHooks nccl_hooks() {
  return FleetAllReduceHooks{[] { return allreduce_part_ordinals(); }, [] { return make_nccl_unique_id(); },
                             [](const AllReducePart& part) { return run_allreduce_part(part); }};
}

FleetAllReduceOutcome run_fleet_allreduce(MPI_Comm leaders, const std::vector<std::string>& hosts, bool all_answered,
                                          const FleetAllReduceSettings& settings, const FleetAllReduceHooks& hooks) {
  int node = 0;
  int nodes = 1;
  MPI_Comm_rank(leaders, &node);
  MPI_Comm_size(leaders, &nodes);
  FleetAllReduceOutcome outcome;
  // Asked once: the offer and the share use the same devices.
  const Result<std::vector<int>> gpus = hooks.local_gpus();

  if (node != 0) {
    send_text(leaders, 0, kTagOfferSize, kTagOffer, offer_json(gpus).dump());
    const Json plan = parse_or_null(receive_text(leaders, 0, kTagPlanSize, kTagPlan, std::nullopt));
    if (!plan.is_object() || !plan.value("go", false)) return outcome;
    const Json share = run_share(leaders, plan, settings, gpus, hooks);
    outcome.abandoned = share.value("abandoned", false);
    send_text(leaders, 0, kTagResultSize, kTagResult, share.dump());
    return outcome;
  }

  auto host = [&](int i) {
    return static_cast<std::size_t>(i) < hosts.size() ? hosts[static_cast<std::size_t>(i)]
                                                      : "node " + std::to_string(i);
  };
  if (!all_answered) {
    // The nodes that answered wait for a plan; the job ends with MPI_Abort.
    outcome.entry = skipped(nodes, "not every node answered, and a collective would wait for the missing ones");
    outcome.abandoned = true;
    return outcome;
  }
  // Offers: node 0's own, then every other node's.
  std::vector<AllReduceOffer> offers;
  const Json own_offer = offer_json(gpus);
  offers.push_back({host(0), own_offer.value("gpus", 0), own_offer.value("why_not", std::string())});
  const auto offers_deadline = deadline_after(settings.timeout_s);
  for (int i = 1; i < nodes; ++i) {
    const Json offer = parse_or_null(receive_text(leaders, i, kTagOfferSize, kTagOffer, offers_deadline));
    if (!offer.is_object()) {
      outcome.abandoned = true;
      offers.push_back({host(i), 0, "no offer of GPUs received"});
      continue;
    }
    offers.push_back({host(i), offer.value("gpus", 0), offer.value("why_not", std::string())});
  }
  AllReducePlan plan = plan_fleet_allreduce(offers);
  std::optional<NcclUniqueId> id;
  if (plan.go) {
    auto made = hooks.unique_id();
    if (!made) {
      plan.go = false;
      plan.reason = "node 0 (" + host(0) + ") could not make the NCCL unique id: " + made.error().message;
    } else {
      id = made.value();
    }
  }
  int fleet_gpus = 0;
  for (const AllReduceOffer& offer : offers) fleet_gpus += offer.gpus;
  Json base{{"go", plan.go},
            {"total_ranks", plan.total_ranks},
            {"size_bytes", settings.size_bytes},
            {"warmup_trials", settings.warmup_trials},
            {"trials", settings.trials},
            {"id", id ? hex_of(*id) : std::string()}};
  if (!outcome.abandoned) {
    for (int i = 1; i < nodes; ++i) {
      Json plan_i = base;
      plan_i["first_rank"] = plan.go ? plan.first_ranks[static_cast<std::size_t>(i)] : 0;
      send_text(leaders, i, kTagPlanSize, kTagPlan, plan_i.dump());
    }
  }
  if (!plan.go || outcome.abandoned) {
    outcome.entry = skipped(nodes, plan.go ? "not every node offered its GPUs in time" : plan.reason);
    return outcome;
  }

  Json own_plan = base;
  own_plan["first_rank"] = 0;
  std::vector<Json> shares{run_share(leaders, own_plan, settings, gpus, hooks)};
  const auto results_deadline = deadline_after(settings.timeout_s);
  for (int i = 1; i < nodes; ++i) {
    shares.push_back(parse_or_null(receive_text(leaders, i, kTagResultSize, kTagResult, results_deadline)));
  }
  std::vector<std::vector<double>> node_trial_s;
  std::vector<std::string> notes;
  std::string errors;
  for (int i = 0; i < nodes; ++i) {
    const Json& share = shares[static_cast<std::size_t>(i)];
    if (!share.is_object()) {
      outcome.abandoned = true;
      errors += (errors.empty() ? "" : "; ") + host(i) + ": no result within the fleet timeout";
      continue;
    }
    outcome.abandoned = outcome.abandoned || share.value("abandoned", false);
    for (const auto& warning : share.value("warnings", std::vector<std::string>()))
      notes.push_back(host(i) + ": " + warning);
    if (share.contains("error")) {
      const std::string error = share.value("error", std::string());
      errors += (errors.empty() ? "" : "; ") + host(i) + ": " + error;
      notes.push_back(host(i) + ": " + error);
      continue;
    }
    node_trial_s.push_back(share.value("trial_s", std::vector<double>()));
  }
  if (!errors.empty()) {
    FleetAllReduce entry;
    entry.status = FleetAllReduceStatus::kFailed;
    entry.reason = errors;
    entry.nodes = nodes;
    entry.gpus = fleet_gpus;
    entry.size_bytes = settings.size_bytes;
    entry.notes = std::move(notes);
    // Nodes that failed may have left their peers at a barrier.
    outcome.abandoned = true;
    outcome.entry = std::move(entry);
    return outcome;
  }
  outcome.entry = measured_fleet_allreduce(nodes, fleet_gpus, settings.size_bytes, node_trial_s, std::move(notes));
  return outcome;
}

}  // namespace pcieval::app
