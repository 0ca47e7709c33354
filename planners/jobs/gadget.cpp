#include "planners/jobs/gadget.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

namespace dnnsim {

RingEstimate ring_estimate(const IterationCost& solo, const Placement& placement,
                           const std::vector<ServerInfo>& servers, const std::vector<int>& rings_through) {
  RingEstimate estimate;
  const int w = placement.gpus();
  if (w <= 1 || solo.sync_bytes.value() <= 0) {
    // Nothing to all-reduce, or a speed model that prices synchronisation without bytes (a measured
    // sync time, or a duration replay): its own time, which no ring shares.
    estimate.all_reduce = w <= 1 ? Seconds(0) : solo.sync;
    estimate.iteration = solo.compute + estimate.all_reduce;
    return estimate;
  }
  double bandwidth = std::numeric_limits<double>::infinity();
  Seconds latency{0};
  for (const auto& [server, gpus] : placement.slices) {
    const ServerInfo& info = servers[static_cast<std::size_t>(server)];
    if (gpus > 1) bandwidth = std::min(bandwidth, info.intra_bandwidth.value());
    if (placement.servers() > 1) {
      const int sharing = rings_through[static_cast<std::size_t>(server)] + 1;
      bandwidth = std::min(bandwidth, info.nic_bandwidth.value() / sharing);
      latency = std::max(latency, info.link_latency);
    }
  }
  estimate.bandwidth = BytesPerSecond(bandwidth);
  estimate.all_reduce = solo.sync_bytes / estimate.bandwidth + latency * (2.0 * (w - 1));
  estimate.iteration = solo.compute + estimate.all_reduce;
  return estimate;
}

namespace {

// The servers of `pool` by descending free GPUs (ties: lower index), taken until `w` are reached;
// the last one gives only what is missing. Nothing when the pool holds fewer than `w`.
std::optional<Placement> fill(const std::vector<int>& pool, const std::vector<int>& free, int w) {
  std::vector<int> order = pool;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return free[a] > free[b]; });
  Placement placement;
  int missing = w;
  for (int server : order) {
    if (missing == 0) break;
    const int take = std::min(missing, free[server]);
    if (take == 0) break;
    placement.slices.emplace_back(server, take);
    missing -= take;
  }
  if (missing > 0) return std::nullopt;
  std::sort(placement.slices.begin(), placement.slices.end());
  return placement;
}

}  // namespace

std::optional<Placement> ring_embedding(const std::vector<ServerInfo>& servers, const std::vector<int>& free, int w) {
  // 1. One server: the best fit keeps larger holes for larger rings.
  int best = -1;
  for (std::size_t s = 0; s < servers.size(); ++s)
    if (free[s] >= w && (best < 0 || free[s] < free[static_cast<std::size_t>(best)])) best = static_cast<int>(s);
  if (best >= 0) return Placement{{{best, w}}};
  // 2. One rack, fewest servers (descending free GPUs), the rack with the fewest GPUs left over.
  std::map<int, std::vector<int>> racks;
  std::vector<int> all;
  for (std::size_t s = 0; s < servers.size(); ++s) {
    racks[servers[s].rack].push_back(static_cast<int>(s));
    all.push_back(static_cast<int>(s));
  }
  std::optional<Placement> chosen;
  int chosen_left = std::numeric_limits<int>::max();
  std::size_t chosen_servers = std::numeric_limits<std::size_t>::max();
  for (const auto& [rack, members] : racks) {
    auto placement = fill(members, free, w);
    if (!placement) continue;
    int rack_free = 0;
    for (int s : members) rack_free += free[static_cast<std::size_t>(s)];
    const auto key = std::pair{placement->slices.size(), rack_free - w};
    if (key < std::pair{chosen_servers, chosen_left}) {
      chosen = std::move(placement);
      chosen_servers = key.first;
      chosen_left = key.second;
    }
  }
  if (chosen) return chosen;
  // 3. Across racks.
  return fill(all, free, w);
}

namespace {

class GadgetScheduler final : public JobScheduler {
 public:
  GadgetScheduler(const SchedulerContext& context, GadgetUtility utility)
      : speed_(&context.speed),
        utility_(utility),
        slot_(context.options.quantity<Seconds>("slot")),
        energy_weight_(utility == GadgetUtility::energy ? context.options.number("energy_weight") : 0.0),
        alpha_(utility == GadgetUtility::fair ? context.options.number("alpha") : 0.0) {}

  std::optional<Seconds> round() const override { return slot_; }

  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    const bool reallocate = event == SchedulerEvent::round;
    std::vector<int> residual = state.free_gpus;
    std::vector<int> rings(state.servers.size(), 0);
    std::vector<const JobView*> candidates;
    for (const JobView& job : state.running) {
      if (reallocate) {
        for (const auto& [server, n] : job.placement->slices) residual[static_cast<std::size_t>(server)] += n;
        candidates.push_back(&job);
      } else {
        add_ring(*job.placement, rings, +1);  // its GPUs are already out of free_gpus
      }
    }
    for (const JobView& job : state.queued) candidates.push_back(&job);

    // Lazy greedy over entries (gain, −job id, w) in a max-heap (ties: the earlier job, then fewer
    // GPUs). A job's gain is marginal: (U(w) − U(current)) / (w − current), so a job already placed
    // can still grow into GPUs nobody else gains more from.
    using Entry = std::tuple<double, long long, int>;
    std::priority_queue<Entry> heap;
    std::map<JobId, const JobView*> by_id;
    std::map<JobId, Allocation> chosen;
    const auto push = [&](const JobView& job) {
      const Allocation* current = chosen.contains(job.id) ? &chosen.at(job.id) : nullptr;
      for (int w : worker_counts(job.gpus))
        if (!current || w > current->gpus())
          if (auto option = evaluate(state, residual, rings, job, w, current))
            heap.emplace(option->gain, -static_cast<long long>(job.id), w);
    };
    for (const JobView* job : candidates) {
      by_id[job->id] = job;
      push(*job);
    }
    while (!heap.empty()) {
      const auto [stale_gain, negative_id, w] = heap.top();
      heap.pop();
      const JobId id = static_cast<JobId>(-negative_id);
      const JobView& job = *by_id.at(id);
      Allocation* current = chosen.contains(id) ? &chosen.at(id) : nullptr;
      if (current && w <= current->gpus()) continue;
      auto fresh = evaluate(state, residual, rings, job, w, current);
      if (!fresh || fresh->gain <= 0) continue;
      if (!heap.empty() && fresh->gain < std::get<0>(heap.top())) {
        heap.emplace(fresh->gain, negative_id, w);
        continue;
      }
      if (current) take(current->placement, residual, rings, -1);
      take(fresh->placement, residual, rings, +1);
      chosen[id] = std::move(*fresh);
      push(job);  // its larger counts, priced from the new allocation
    }

    std::vector<Decision> decisions;
    if (reallocate)
      for (const JobView& job : state.running) {
        auto it = chosen.find(job.id);
        if (it != chosen.end() && it->second.placement == *job.placement) continue;
        decisions.push_back(Decision{Decision::Kind::preempt, job.id, {}});
      }
    for (const JobView* job : candidates) {
      auto it = chosen.find(job->id);
      if (it == chosen.end() || (job->placement && it->second.placement == *job->placement)) continue;
      decisions.push_back(Decision{Decision::Kind::start, job->id, it->second.placement});
    }
    return decisions;
  }

 private:
  static std::vector<int> worker_counts(int asked) {
    std::vector<int> counts;
    for (int w = 1; w < asked; w *= 2) counts.push_back(w);
    counts.push_back(asked);
    return counts;
  }

  struct Allocation {
    Placement placement;
    double utility = 0;  // U of the next slot on it
    double gain = 0;     // what it added per GPU over the job's previous allocation
    [[nodiscard]] int gpus() const { return placement.gpus(); }
  };

  static void add_ring(const Placement& placement, std::vector<int>& rings, int delta) {
    if (placement.servers() < 2) return;
    for (const auto& [server, n] : placement.slices) rings[static_cast<std::size_t>(server)] += delta;
  }

  // Takes (+1) or gives back (−1) a placement's GPUs and ring.
  static void take(const Placement& placement, std::vector<int>& residual, std::vector<int>& rings, int sign) {
    for (const auto& [server, n] : placement.slices) residual[static_cast<std::size_t>(server)] -= sign * n;
    add_ring(placement, rings, sign);
  }

  // The job on w GPUs — embedded on the residual GPUs plus those of its `current` allocation, which
  // it would give up — with its utility and marginal gain; nothing when w GPUs do not fit. A running
  // job being re-allocated keeps its own GPUs when it is offered its own count and they are free.
  std::optional<Allocation> evaluate(const ClusterState& state, std::vector<int> residual, std::vector<int> rings,
                                     const JobView& job, int w, const Allocation* current) const {
    if (current) take(current->placement, residual, rings, -1);
    std::optional<Placement> placement;
    if (job.placement && job.placement->gpus() == w &&
        std::all_of(job.placement->slices.begin(), job.placement->slices.end(),
                    [&](const auto& slice) { return residual[static_cast<std::size_t>(slice.first)] >= slice.second; }))
      placement = job.placement;
    else
      placement = ring_embedding(state.servers, residual, w);
    if (!placement) return std::nullopt;
    const IterationCost solo = speed_->iteration(*job.record, *placement, state.servers);
    const Seconds iteration = ring_estimate(solo, *placement, state.servers, rings).iteration;
    const double needed = std::max(job.total_iterations, 1e-12);
    const double progress = std::min(slot_.value() / iteration.value(), job.remaining_iterations()) / needed;
    double utility = progress;
    if (utility_ == GadgetUtility::energy) utility -= energy_weight_ * w * slot_.value() / 3600.0;
    if (utility_ == GadgetUtility::fair) utility = std::pow(progress, 1.0 - alpha_) / (1.0 - alpha_);
    const double before = current ? current->utility : 0.0;
    const int added = w - (current ? current->gpus() : 0);
    return Allocation{std::move(*placement), utility, (utility - before) / added};
  }

  const JobSpeedModel* speed_;
  GadgetUtility utility_;
  Seconds slot_;
  double energy_weight_;
  double alpha_;
};

}  // namespace

OptionSchema gadget_options(GadgetUtility utility) {
  OptionSchema schema;
  schema.quantity<Seconds>("slot", Seconds(600), "Δ: the progress horizon and the re-allocation period").at_least(1e-3);
  if (utility == GadgetUtility::energy)
    schema.number("energy_weight", 0.01, "ε, the utility lost per GPU-hour").range(0, 1e9);
  if (utility == GadgetUtility::fair) schema.number("alpha", 0.5, "a, the fairness exponent").range(0, 0.99);
  return schema;
}

std::unique_ptr<JobScheduler> make_gadget_scheduler(const SchedulerContext& context, GadgetUtility utility) {
  return std::make_unique<GadgetScheduler>(context, utility);
}

}  // namespace dnnsim
