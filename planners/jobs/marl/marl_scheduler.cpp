#include "planners/jobs/marl/marl_scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "planners/jobs/interference.hpp"
#include "planners/jobs/interference_mlp.hpp"
#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/marl/policy.hpp"
#include "planners/jobs/measured_speed.hpp"

namespace dnnsim {
namespace {

constexpr std::size_t kHeldOutStride = 5;  // as the held-out error in docs/cluster.md

float log_hours(double seconds) { return static_cast<float>(std::log1p(std::max(0.0, seconds) / 3600.0)); }

// One job on a server's GPUs, as the level-1 graph sees it.
struct Occupant {
  JobId id = 0;
  int gpus = 0;
  bool single = false;  // a one-GPU job: a packing host while not packed
  bool packed = false;
  float remaining_h = 0, sensitivity = 0, pressure = 0;
};

class MarlScheduler final : public JobScheduler {
 public:
  explicit MarlScheduler(const SchedulerContext& ctx)
      : speed_(&ctx.speed),
        learning_(ctx.learning),
        agents_(static_cast<int>(ctx.options.integer("agents"))),
        window_(static_cast<std::size_t>(ctx.options.integer("window"))),
        packing_(ctx.options.flag("packing")) {
    const std::string policy = *ctx.options.file("policy");
    try {
      policy_ = std::make_unique<MarlPolicy>(MarlPolicy::load(policy));
    } catch (const std::exception& error) {
      throw ctx.options.error("policy", fmt::format("cannot read the policy '{}': {}", policy, error.what()));
    }
    if (ctx.servers != nullptr && !policy_->trained_for(*ctx.servers))
      throw ctx.options.error("policy",
                              fmt::format("the policy '{}' was trained on another cluster ({}), not on this one "
                                          "({}): train one for this scenario with `dnnsim train-scheduler`",
                                          policy, policy_->cluster(), marl_cluster_key(*ctx.servers)));
    const bool mlp = ctx.options.flag("mlp");
    if (const auto tables = ctx.options.file("interference")) {
      for (const auto& [table, all_pairs] : read_gavel_colocated_tables(*tables)) {
        const auto pairs = split_pairs(all_pairs, kHeldOutStride).train;
        if (pairs.empty()) continue;
        interference_.emplace(table, InterferenceModel::fit(pairs));
        if (mlp) pair_predictor_.emplace(table, fit_interference_mlp(pairs, ctx.seed));
      }
    }
  }

  bool observes_every_event() const override { return learning_ != nullptr; }
  bool trainable() const override { return true; }

  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent) override {
    if (partition_.empty()) lay_out(state);
    const double gpus = std::max(1, state.total_gpus());
    if (learning_)
      learning_->advance(state.now.value(), static_cast<double>(state.queued.size() + state.running.size()) / gpus);
    if (state.queued.empty()) return {};

    Turn turn{state, state.free_gpus, occupants(state), {}, !state.running.empty(), {}};
    std::vector<std::vector<const JobView*>> windows(static_cast<std::size_t>(agents_));
    for (const JobView& job : state.queued) {
      auto& window = windows[job.id % static_cast<std::size_t>(agents_)];
      if (window.size() < window_) window.push_back(&job);
    }
    for (std::size_t k = 0; k < window_; ++k)
      for (int agent = 0; agent < agents_; ++agent)
        if (k < windows[static_cast<std::size_t>(agent)].size())
          act(turn, agent, *windows[static_cast<std::size_t>(agent)][k]);
    return std::move(turn.decisions);
  }

 private:
  struct Turn {
    const ClusterState& state;
    std::vector<int> free;
    std::vector<std::vector<Occupant>> on_server;
    std::vector<Decision> decisions;
    bool busy;                 // something runs or was started: a deferred job will see another event
    std::set<JobId> partners;  // hosts given a guest in this call
  };

  // Agents' partitions: servers sorted by (rack, index), cut into `agents` contiguous blocks; racks
  // renumbered densely for the level-2 graph.
  void lay_out(const ClusterState& state) {
    const int servers = static_cast<int>(state.servers.size());
    agents_ = std::min(agents_, std::max(1, servers));  // every agent owns at least one server
    std::vector<int> order(static_cast<std::size_t>(servers));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return state.servers[a].rack < state.servers[b].rack; });
    partition_.assign(static_cast<std::size_t>(servers), 0);
    for (int k = 0; k < servers; ++k)
      partition_[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] =
          static_cast<int>(static_cast<long>(k) * agents_ / servers);
    std::map<int, std::int64_t> dense;
    for (const ServerInfo& server : state.servers) dense.emplace(server.rack, 0);
    std::int64_t next = 0;
    for (auto& [rack, index] : dense) index = next++;
    for (const ServerInfo& server : state.servers) rack_.push_back(dense.at(server.rack));
    racks_ = static_cast<int>(dense.size());
    max_server_gpus_ = 1;
    for (const ServerInfo& server : state.servers) max_server_gpus_ = std::max(max_server_gpus_, server.gpus);
    for (const ServerInfo& server : state.servers) max_nic_ = std::max(max_nic_, server.nic_bandwidth.value());
  }

  const InterferenceModel* model_for(int server, const ClusterState& state) const {
    const auto it = interference_.find(gavel_gpu_type(state.servers[static_cast<std::size_t>(server)].gpu_type));
    return it == interference_.end() ? nullptr : &it->second;
  }

  // A pair's predicted slowdowns: the MLP variant with `mlp: 1`, else the additive model.
  const InterferencePredictor* pair_model_for(int server, const ClusterState& state) const {
    const auto it = pair_predictor_.find(gavel_gpu_type(state.servers[static_cast<std::size_t>(server)].gpu_type));
    return it != pair_predictor_.end() ? it->second.get() : model_for(server, state);
  }

  Occupant occupant(const JobView& job, int server, int gpus, const ClusterState& state) const {
    Occupant o{job.id, gpus, job.gpus == 1 && !job.packed_with, false, 0, 0, 0};
    o.remaining_h = log_hours(job.solo_rate > 0 ? job.remaining_iterations() / job.solo_rate : 0.0);
    if (const auto* model = model_for(server, state)) {
      o.sensitivity = static_cast<float>(model->sensitivity(job.record->model));
      o.pressure = static_cast<float>(model->pressure(job.record->model));
    }
    return o;
  }

  std::vector<std::vector<Occupant>> occupants(const ClusterState& state) const {
    std::vector<std::vector<Occupant>> on_server(state.servers.size());
    std::map<JobId, std::pair<int, std::size_t>> where;  // a running job's (server, slot), to mark packing
    for (const JobView& job : state.running) {
      if (!job.placement) continue;
      if (job.packed_with) {
        if (auto it = where.find(*job.packed_with); it != where.end()) {
          on_server[static_cast<std::size_t>(it->second.first)][it->second.second].packed = true;
          continue;
        }
      }
      for (const auto& [server, gpus] : job.placement->slices) {
        auto& list = on_server[static_cast<std::size_t>(server)];
        where[job.id] = {server, list.size()};
        list.push_back(occupant(job, server, gpus, state));
        if (job.packed_with) list.back().packed = true;
      }
    }
    return on_server;
  }

  // The slowdowns (guest beside host, host beside guest) the agents expect of a packed pair: the
  // interference predictor's, else the speed model's measured ones; nothing when the speed model
  // cannot run the pair packed (Gavel did not measure them fitting together).
  std::optional<std::pair<double, double>> packed_slowdowns(const ClusterState& state, int server, const JobView& guest,
                                                            const JobView& host) const {
    const std::string& gpu_type = state.servers[static_cast<std::size_t>(server)].gpu_type;
    const auto guest_slowdown = speed_->packed_slowdown(*guest.record, *host.record, gpu_type);
    const auto host_slowdown = speed_->packed_slowdown(*host.record, *guest.record, gpu_type);
    if (!guest_slowdown || !host_slowdown) return std::nullopt;
    if (const InterferencePredictor* model = pair_model_for(server, state))
      return std::pair{model->slowdown(guest.record->model, {host.record->model}),
                       model->slowdown(host.record->model, {guest.record->model})};
    return std::pair{*guest_slowdown, *host_slowdown};
  }

  // Expected combined throughput 1/ŝ_gh + 1/ŝ_hg of `guest` beside the best host on `server`, and
  // that host.
  std::optional<std::pair<double, JobId>> best_partner(const Turn& turn, int server, const JobView& guest) const {
    std::optional<std::pair<double, JobId>> best;
    for (const Occupant& o : turn.on_server[static_cast<std::size_t>(server)]) {
      if (!o.single || o.packed || turn.partners.count(o.id)) continue;
      const JobView* host = running(turn.state, o.id);
      if (host == nullptr) continue;  // started in this call: not running yet
      const auto slowdowns = packed_slowdowns(turn.state, server, guest, *host);
      if (!slowdowns) continue;
      const double throughput = 1.0 / slowdowns->first + 1.0 / slowdowns->second;
      if (!best || throughput > best->first) best = std::pair{throughput, o.id};
    }
    return best;
  }

  // Job-hours a packed pair is expected to add to Σ JCT: both jobs' remaining work at their expected
  // slowdowns instead of alone.
  double predicted_packing_cost(const ClusterState& state, int server, const JobView& guest,
                                const JobView& host) const {
    const auto [guest_slowdown, host_slowdown] = *packed_slowdowns(state, server, guest, host);
    const double guest_rate = speed_->iterations_per_second(*guest.record, *host.placement, state.servers);
    const double host_rate = speed_->iterations_per_second(*host.record, *host.placement, state.servers);
    const double guest_extra =
        guest.solo_rate > 0 ? guest.remaining_iterations() * (guest_slowdown / guest_rate - 1.0 / guest.solo_rate)
                            : 0.0;
    return (guest_extra + host.remaining_iterations() * (host_slowdown - 1.0) / host_rate) / 3600.0;
  }

  static const JobView* running(const ClusterState& state, JobId id) {
    const auto it = std::lower_bound(state.running.begin(), state.running.end(), id,
                                     [](const JobView& j, JobId v) { return j.id < v; });
    return it != state.running.end() && it->id == id ? &*it : nullptr;
  }

  // The anchor server's free GPUs, then its rack's, then any server's, most free first (index on ties).
  Placement anchored(const Turn& turn, int anchor, int gpus) const {
    const auto& free = turn.free;
    std::vector<int> order(free.size());
    std::iota(order.begin(), order.end(), 0);
    const auto rank = [&](int s) {
      return std::tuple(s != anchor, rack_[static_cast<std::size_t>(s)] != rack_[static_cast<std::size_t>(anchor)],
                        -free[static_cast<std::size_t>(s)], s);
    };
    std::sort(order.begin(), order.end(), [&](int a, int b) { return rank(a) < rank(b); });
    Placement placement;
    for (int s : order) {
      if (gpus == 0) break;
      const int take = std::min(gpus, free[static_cast<std::size_t>(s)]);
      if (take > 0) placement.slices.emplace_back(s, take);
      gpus -= take;
    }
    std::sort(placement.slices.begin(), placement.slices.end());
    return placement;
  }

  void act(Turn& turn, int agent, const JobView& job) {
    const ClusterState& state = turn.state;
    const int S = static_cast<int>(state.servers.size());
    const int total_free = std::accumulate(turn.free.begin(), turn.free.end(), 0);
    MarlObservation o;
    o.servers = S;
    o.racks = racks_;
    o.server_rack = rack_;
    o.mask.assign(static_cast<std::size_t>(o.actions()), 0);
    o.place_action.assign(static_cast<std::size_t>(S * MarlObservation::kActionFeatures), 0.0f);
    o.pack_action = o.place_action;
    std::vector<std::optional<std::pair<double, JobId>>> partner(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
      const auto us = static_cast<std::size_t>(s);
      const ServerInfo& server = state.servers[us];
      const int free = turn.free[us];
      for (int g = 0; g < server.gpus; ++g) o.gpu_server.push_back(s);
      int slot = 0;
      for (const Occupant& occ : turn.on_server[us])
        for (int g = 0; g < occ.gpus && slot < server.gpus; ++g, ++slot)
          o.gpu.insert(o.gpu.end(), {1.0f, occ.packed ? 1.0f : 0.0f, occ.remaining_h, occ.sensitivity, occ.pressure,
                                     static_cast<float>(server.gpu_speed)});
      for (; slot < server.gpus; ++slot)
        o.gpu.insert(o.gpu.end(), {0, 0, 0, 0, 0, static_cast<float>(server.gpu_speed)});
      o.server.insert(
          o.server.end(),
          {server.gpus > 0 ? static_cast<float>(free) / static_cast<float>(server.gpus) : 0.0f,
           static_cast<float>(server.gpus) / static_cast<float>(max_server_gpus_), static_cast<float>(server.gpu_speed),
           max_nic_ > 0 ? static_cast<float>(server.nic_bandwidth.value() / max_nic_) : 0.0f});
      if (packing_ && job.gpus == 1 && partition_[us] == agent && (partner[us] = best_partner(turn, s, job))) {
        o.mask[static_cast<std::size_t>(S + s)] = 1;
        float* f = &o.pack_action[us * MarlObservation::kActionFeatures];
        f[0] = 1.0f;
        f[2] = static_cast<float>(partner[us]->first - 1.0);
      }
    }
    // Place: on the agent's own servers; when none of them has a free GPU, on any (remote) server.
    bool own = false;
    for (int s = 0; s < S; ++s)
      own = own || (partition_[static_cast<std::size_t>(s)] == agent && turn.free[static_cast<std::size_t>(s)] > 0);
    for (int s = 0; s < S; ++s) {
      const auto us = static_cast<std::size_t>(s);
      const int free = turn.free[us];
      if (own && partition_[us] != agent) continue;
      if (free > 0 && total_free >= job.gpus) {
        o.mask[us] = 1;
        const auto span = anchored(turn, s, job.gpus).servers();
        float* f = &o.place_action[us * MarlObservation::kActionFeatures];
        f[0] = free >= job.gpus ? 1.0f : 0.0f;
        f[1] = static_cast<float>(span) / static_cast<float>(std::max(1, job.gpus));
      }
    }
    if (o.feasible_moves() == 0) return;
    // Work-conserving: a job that fits is placed (the agents choose where, not whether); defer is
    // the alternative to packing only.
    bool placeable = false;
    for (int s = 0; s < S; ++s) placeable = placeable || o.mask[static_cast<std::size_t>(s)];
    o.mask[static_cast<std::size_t>(o.defer_action())] = turn.busy && !placeable ? 1 : 0;
    // The job's own features under the first server's table (it is not placed yet).
    const Occupant self = occupant(job, 0, job.gpus, state);
    const double total = std::max(1, state.total_gpus());
    o.job = {static_cast<float>(job.gpus) / static_cast<float>(max_server_gpus_),
             self.remaining_h,
             self.sensitivity,
             self.pressure,
             log_hours(state.now.value() - job.queued_since.value()),
             static_cast<float>(static_cast<double>(state.queued.size()) / total)};
    o.queue = {static_cast<float>(static_cast<double>(state.queued.size()) / total),
               static_cast<float>(static_cast<double>(state.running.size()) / total),
               static_cast<float>(total_free / total)};

    const int action = learning_ ? learning_->sample(o) : policy_->greedy(o);
    if (action < S) {
      Placement placement = anchored(turn, action, job.gpus);
      if (learning_ && job.solo_rate > 0) {
        // Predicted added JCT: the rest of its work at this placement's speed instead of the solo one.
        const double rate = speed_->iterations_per_second(*job.record, placement, state.servers);
        learning_->add_predicted(-job.remaining_iterations() * (1.0 / rate - 1.0 / job.solo_rate) / 3600.0 / total);
      }
      for (const auto& [server, gpus] : placement.slices) {
        turn.free[static_cast<std::size_t>(server)] -= gpus;
        Occupant occ = occupant(job, server, gpus, state);
        occ.single = false;  // not running before this call's decisions apply
        turn.on_server[static_cast<std::size_t>(server)].push_back(occ);
      }
      turn.decisions.push_back(Decision{Decision::Kind::start, job.id, std::move(placement), 0});
      turn.busy = true;
    } else if (action < 2 * S) {
      const auto host = partner[static_cast<std::size_t>(action - S)]->second;
      if (learning_)
        learning_->add_predicted(-predicted_packing_cost(state, action - S, job, *running(state, host)) / total);
      turn.partners.insert(host);
      for (Occupant& occ : turn.on_server[static_cast<std::size_t>(action - S)])
        if (occ.id == host) occ.packed = true;
      turn.decisions.push_back(Decision{Decision::Kind::pack, job.id, {}, host});
      turn.busy = true;
    }
  }

  const JobSpeedModel* speed_;
  LearningEpisode* learning_;
  int agents_;
  std::size_t window_;
  bool packing_;
  std::unique_ptr<MarlPolicy> policy_;
  std::map<std::string, InterferenceModel> interference_;                         // by Gavel table
  std::map<std::string, std::unique_ptr<InterferencePredictor>> pair_predictor_;  // `mlp: 1`
  std::vector<int> partition_;                                                    // agent of each server
  std::vector<std::int64_t> rack_;
  int racks_ = 0;
  int max_server_gpus_ = 1;
  double max_nic_ = 0.0;
};

}  // namespace

OptionSchema marl_options() {
  OptionSchema schema;
  schema
      .file("policy",
            "the trained policy, a file written by `dnnsim train-scheduler` "
            "(scenarios/papers/cluster/policies/ has trained ones)")
      .required();
  schema.integer("agents", 4, "agents, each serving the servers of its partition").range(1, 1 << 16);
  schema.integer("window", 8, "queued jobs each agent considers per decision").range(1, 1 << 20);
  schema.boolean("packing", true, "single-GPU jobs may be packed in pairs on one GPU");
  schema.file("interference", "Gavel's measured throughputs, to fit the co-location interference predictor on");
  schema.boolean("mlp", false, "the interference predictor is an MLP (else the factorised model)");
  return schema;
}

std::unique_ptr<JobScheduler> make_marl_scheduler(const SchedulerContext& context) {
  return std::make_unique<MarlScheduler>(context);
}

}  // namespace dnnsim
