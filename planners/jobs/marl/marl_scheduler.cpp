#include "planners/jobs/marl/marl_scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
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
        packing_(ctx.options.flag("packing")),
        remote_when_no_local_fit_(ctx.options.choice("remote") == kMarlRemoteWhenNoLocalFit),
        dispatch_best_fit_(ctx.options.choice("dispatch") == "best_fit") {
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
    if (!policy_->trained_with_remote(ctx.options.choice("remote")))
      throw ctx.options.error("policy", fmt::format("the policy '{}' was trained with `remote: {}`, not with this "
                                                    "scenario's `remote: {}`: its agents' masks would differ; set the "
                                                    "option it was trained with, or train one with this one",
                                                    policy, policy_->remote(), ctx.options.choice("remote")));
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

    Turn turn{state, state.free_gpus, occupants(state), {}, !state.running.empty(), {}, {}, 0.0};
    if (learning_) turn.remaining_h = predicted_remaining(state, turn.hours);
    dispatch(state);
    std::vector<std::vector<const JobView*>> waiting(static_cast<std::size_t>(agents_));  // the sub-queues
    for (const JobView& job : state.queued) waiting[static_cast<std::size_t>(agent_of_.at(job.id))].push_back(&job);
    // Agents take turns, one job each, until none serves another: which of the first `window` jobs of
    // its sub-queue to serve is each agent's choice; a served job makes room for the next in line.
    std::vector<bool> done(static_cast<std::size_t>(agents_), false);
    for (bool any = true; any;) {
      any = false;
      for (int agent = 0; agent < agents_; ++agent) {
        auto& queue = waiting[static_cast<std::size_t>(agent)];
        if (done[static_cast<std::size_t>(agent)] || queue.empty()) continue;
        const std::vector<const JobView*> window(
            queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(std::min(window_, queue.size())));
        if (const auto served = act(turn, agent, window)) {
          queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(*served));
          any = true;
        } else {
          done[static_cast<std::size_t>(agent)] = true;
        }
      }
    }
    return std::move(turn.decisions);
  }

 private:
  struct Turn {
    const ClusterState& state;
    std::vector<int> free;
    std::vector<std::vector<Occupant>> on_server;
    std::vector<Decision> decisions;
    bool busy;                 // something runs or was started: a job left waiting will see another event
    std::set<JobId> partners;  // hosts given a guest in this call
    std::map<JobId, double> hours;  // training: each job's predicted remaining hours (the potential)
    double remaining_h;             // their sum
  };

  // Each job joins one agent's sub-queue when the scheduler first sees it (its arrival: every arrival
  // is a decision) and stays there. `job_id`: job id mod agents. `best_fit`: the agent owning the
  // server where the job fits alone with the fewest GPUs left, counting the GPUs its sub-queue already
  // waits for as taken; when it fits on none, the agent whose sub-queue waits for the fewest GPUs
  // (join the shortest queue). Ties: the lowest agent. Simultaneous arrivals are dispatched in id
  // order, each counted in its agent's sub-queue for the next.
  void dispatch(const ClusterState& state) {
    const auto agents = static_cast<std::size_t>(agents_);
    std::vector<int> waits(agents, 0);  // GPUs each sub-queue waits for
    std::map<JobId, int> kept;
    for (const JobView& job : state.queued)
      if (const auto it = agent_of_.find(job.id); it != agent_of_.end()) {
        kept.emplace(job.id, it->second);
        waits[static_cast<std::size_t>(it->second)] += job.gpus;
      }
    for (const JobView& job : state.queued) {
      if (kept.count(job.id)) continue;
      int agent = static_cast<int>(job.id % agents);
      if (dispatch_best_fit_) {
        std::optional<std::pair<int, int>> fit;  // (GPUs left on the server, its agent)
        for (std::size_t s = 0; s < partition_.size(); ++s) {
          const int a = partition_[s];
          const int left = state.free_gpus[s] - waits[static_cast<std::size_t>(a)] - job.gpus;
          if (left >= 0 && (!fit || std::pair(left, a) < *fit)) fit = std::pair(left, a);
        }
        agent = fit ? fit->second : static_cast<int>(std::min_element(waits.begin(), waits.end()) - waits.begin());
      }
      kept.emplace(job.id, agent);
      waits[static_cast<std::size_t>(agent)] += job.gpus;
    }
    agent_of_ = std::move(kept);
  }

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

  // Training's potential (policy.hpp): the hours each job in the system is predicted to still need —
  // a running job its remaining work at its placement's speed (times its packed pair's predicted
  // slowdown), a waiting one at its solo speed — and their sum.
  double predicted_remaining(const ClusterState& state, std::map<JobId, double>& hours) const {
    double total = 0.0;
    for (const JobView& job : state.running) {
      if (!job.placement) continue;
      double h = job.remaining_iterations() /
                 speed_->iterations_per_second(*job.record, *job.placement, state.servers) / 3600.0;
      if (job.packed_with)
        if (const JobView* partner = running(state, *job.packed_with))
          if (const auto slowdowns = packed_slowdowns(state, job.placement->slices.front().first, job, *partner))
            h *= slowdowns->first;
      total += hours[job.id] = h;
    }
    for (const JobView& job : state.queued)
      total += hours[job.id] = job.solo_rate > 0 ? job.remaining_iterations() / job.solo_rate / 3600.0 : 0.0;
    return total;
  }

  static void set_hours(Turn& turn, JobId job, double h) {
    double& old = turn.hours[job];
    turn.remaining_h += h - old;
    old = h;
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

  // One agent's move: which of its waiting jobs (`window`) to serve and where. Returns the served
  // job's position in the window; nothing when the agent has no move left or stops.
  std::optional<std::size_t> act(Turn& turn, int agent, const std::vector<const JobView*>& window) {
    const ClusterState& state = turn.state;
    const int S = static_cast<int>(state.servers.size());
    const int C = static_cast<int>(window.size());
    const int total_free = std::accumulate(turn.free.begin(), turn.free.end(), 0);
    const double total = std::max(1, state.total_gpus());
    MarlObservation o;
    o.servers = S;
    o.racks = racks_;
    o.candidates = C;
    o.server_rack = rack_;
    o.mask.assign(static_cast<std::size_t>(o.actions()), 0);
    const auto features = static_cast<std::size_t>(C * S * MarlObservation::kActionFeatures);
    o.place_action.assign(features, 0.0f);
    o.pack_action.assign(features, 0.0f);
    for (int s = 0; s < S; ++s) {
      const auto us = static_cast<std::size_t>(s);
      const ServerInfo& server = state.servers[us];
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
          {server.gpus > 0 ? static_cast<float>(turn.free[us]) / static_cast<float>(server.gpus) : 0.0f,
           static_cast<float>(server.gpus) / static_cast<float>(max_server_gpus_), static_cast<float>(server.gpu_speed),
           max_nic_ > 0 ? static_cast<float>(server.nic_bandwidth.value() / max_nic_) : 0.0f});
    }
    // Place: on the agent's own servers; on any (remote) server when none of them has a free GPU, and
    // with `remote: when_no_local_fit` also a candidate that fits alone on none of them.
    int own_free = 0;  // the most free GPUs on one of the agent's servers
    for (int s = 0; s < S; ++s)
      if (partition_[static_cast<std::size_t>(s)] == agent)
        own_free = std::max(own_free, turn.free[static_cast<std::size_t>(s)]);
    std::vector<std::optional<std::pair<double, JobId>>> partner(static_cast<std::size_t>(C * S));
    bool placeable = false;
    for (int c = 0; c < C; ++c) {
      const JobView& job = *window[static_cast<std::size_t>(c)];
      const Occupant self = occupant(job, 0, job.gpus, state);  // its features under the first server's table
      o.job.insert(o.job.end(),
                   {static_cast<float>(job.gpus) / static_cast<float>(max_server_gpus_), self.remaining_h,
                    self.sensitivity, self.pressure, log_hours(state.now.value() - job.queued_since.value()),
                    static_cast<float>(static_cast<double>(c) / static_cast<double>(window_))});
      const bool remote = own_free == 0 || (remote_when_no_local_fit_ && own_free < job.gpus);
      for (int s = 0; s < S; ++s) {
        const auto us = static_cast<std::size_t>(s);
        const auto at = static_cast<std::size_t>((c * S + s) * MarlObservation::kActionFeatures);
        const int free = turn.free[us];
        if ((remote || partition_[us] == agent) && free > 0 && total_free >= job.gpus) {
          o.mask[static_cast<std::size_t>(o.place_action_of(c, s))] = 1;
          placeable = true;
          const Placement placement = anchored(turn, s, job.gpus);
          float* f = &o.place_action[at];
          f[0] = free >= job.gpus ? 1.0f : 0.0f;
          f[1] = static_cast<float>(placement.servers()) / static_cast<float>(std::max(1, job.gpus));
          f[2] = job.solo_rate > 0
                     ? static_cast<float>(speed_->iterations_per_second(*job.record, placement, state.servers) /
                                          job.solo_rate)
                     : 1.0f;
        }
        auto& best = partner[static_cast<std::size_t>(c * S + s)];
        if (packing_ && job.gpus == 1 && partition_[us] == agent && (best = best_partner(turn, s, job))) {
          o.mask[static_cast<std::size_t>(o.pack_action_of(c, s))] = 1;
          float* f = &o.pack_action[at];
          f[0] = 1.0f;
          f[3] = static_cast<float>(best->first - 1.0);
        }
      }
    }
    if (o.feasible_moves() == 0) return std::nullopt;
    // Work-conserving: while a job can be placed, one is (the agents choose which and where); stop is
    // the alternative to packing only.
    o.mask[static_cast<std::size_t>(o.stop_action())] = turn.busy && !placeable ? 1 : 0;
    o.queue = {static_cast<float>(static_cast<double>(state.queued.size()) / total),
               static_cast<float>(static_cast<double>(state.running.size()) / total),
               static_cast<float>(total_free / total)};

    const int action = learning_ ? learning_->sample(o, -turn.remaining_h / total) : policy_->greedy(o);
    if (action == o.stop_action()) return std::nullopt;
    const int c = action / (2 * S);
    const int s = action % (2 * S);
    const JobView& job = *window[static_cast<std::size_t>(c)];
    if (s < S) {
      Placement placement = anchored(turn, s, job.gpus);
      if (learning_)
        set_hours(
            turn, job.id,
            job.remaining_iterations() / speed_->iterations_per_second(*job.record, placement, state.servers) / 3600.0);
      for (const auto& [server, gpus] : placement.slices) {
        turn.free[static_cast<std::size_t>(server)] -= gpus;
        Occupant occ = occupant(job, server, gpus, state);
        occ.single = false;  // not running before this call's decisions apply
        turn.on_server[static_cast<std::size_t>(server)].push_back(occ);
      }
      turn.decisions.push_back(Decision{Decision::Kind::start, job.id, std::move(placement), 0});
    } else {
      const int server = s - S;
      const JobId host_id = partner[static_cast<std::size_t>(c * S + server)]->second;
      const JobView& host = *running(state, host_id);
      if (learning_) {
        const auto [guest_slowdown, host_slowdown] = *packed_slowdowns(state, server, job, host);
        set_hours(turn, job.id,
                  job.remaining_iterations() * guest_slowdown /
                      speed_->iterations_per_second(*job.record, *host.placement, state.servers) / 3600.0);
        set_hours(turn, host_id, turn.hours[host_id] * host_slowdown);
      }
      turn.partners.insert(host_id);
      for (Occupant& occ : turn.on_server[static_cast<std::size_t>(server)])
        if (occ.id == host_id) occ.packed = true;
      turn.decisions.push_back(Decision{Decision::Kind::pack, job.id, {}, host_id});
    }
    turn.busy = true;
    return static_cast<std::size_t>(c);
  }

  const JobSpeedModel* speed_;
  LearningEpisode* learning_;
  int agents_;
  std::size_t window_;
  bool packing_;
  bool remote_when_no_local_fit_;
  bool dispatch_best_fit_;
  std::map<JobId, int> agent_of_;  // each waiting job's agent (its sub-queue)
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
  schema.integer("window", 8, "waiting jobs of its sub-queue each agent chooses among per move").range(1, 1 << 20);
  schema.boolean("packing", true, "single-GPU jobs may be packed in pairs on one GPU");
  schema.choice("remote", std::string(kMarlRemoteWhenPartitionFull),
                {std::string(kMarlRemoteWhenPartitionFull), std::string(kMarlRemoteWhenNoLocalFit)},
                "when an agent may place outside its partition: when none of its servers has a free GPU, or also "
                "a job that fits alone on none of them (the policy must be trained with the same)");
  schema.choice("dispatch", std::string("job_id"), {"job_id", "best_fit"},
                "which agent's sub-queue an arriving job joins: job id mod agents, or the agent owning the server "
                "where it fits alone with the fewest GPUs left (else the one waiting for the fewest GPUs)");
  schema.file("interference", "Gavel's measured throughputs, to fit the co-location interference predictor on");
  schema.boolean("mlp", false, "the interference predictor is an MLP (else the factorised model)");
  return schema;
}

std::unique_ptr<JobScheduler> make_marl_scheduler(const SchedulerContext& context) {
  return std::make_unique<MarlScheduler>(context);
}

}  // namespace dnnsim
