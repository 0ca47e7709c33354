// PipeDream's hierarchical partitioning DP (Narayanan et al., "PipeDream: Generalized Pipeline
// Parallelism for DNN Training", SOSP'19 §3.1; papers-parallelism.md §7.2). The DP minimises the
// slowest stage (PipeDream's objective); the prediction follows the schedule the plan runs under:
//  - pipedream-async (PipeDream's own assumptions, §3.2–3.3: asynchronous 1F1B, no flush, weight
//    stashing): once warm every stage runs one micro-batch per period of the slowest stage, so an
//    iteration of M micro-batches takes M periods;
//  - any synchronous schedule (as DAPPLE's comparison, PPoPP'21 Table 6, runs PipeDream's partition):
//    (M + S − 1) periods, the fill and drain of every iteration included.
// Either way a stage's memory is checked for its position under that schedule (stage_cost.hpp: p − i
// stashed weight versions under pipedream-async).
#include <fmt/format.h>

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "planners/parallel/plan_clock.hpp"
#include "planners/parallel/planners.hpp"

namespace dnnsim {

Seconds pipedream_stage_time(const StageCostModel& cost, LayerRange layers, DeviceId device, int replicas,
                             BytesPerSecond bandwidth) {
  const Seconds sync = cost.gradient_bytes(layers) * (2.0 * (replicas - 1)) / bandwidth;
  return std::max(cost.single_device_time(layers, device), sync) / static_cast<double>(replicas);
}

Seconds pipedream_cut_time(const StageCostModel& cost, std::size_t last, BytesPerSecond bandwidth) {
  return cost.cut_bytes(last) * 2.0 / bandwidth;
}

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A^k(i→j, m) for every range and component count of one level. `inner(i, j)` is A^{k−1}(i→j,
// m_{k−1}), the time of the range on one whole component; infinity when it does not fit.
class Level {
 public:
  struct Choice {
    std::size_t split = 0;  // last layer of the left part (s); unused when replicated
    int right = 0;          // m' components of the right part; 0: the range is one replicated stage
  };

  Level(std::size_t layers, int components, const std::function<double(std::size_t, std::size_t, int)>& stage_time,
        const std::function<double(std::size_t)>& cut_time)
      : n_(layers),
        m_(components),
        best_(layers * layers * (components + 1), kInfinity),
        choice_(layers * layers * (components + 1)) {
    for (std::size_t length = 1; length <= n_; ++length)
      for (std::size_t i = 0; i + length <= n_; ++i) {
        const std::size_t j = i + length - 1;
        for (int m = 1; m <= m_; ++m) {
          double best = stage_time(i, j, m);
          Choice choice{};
          for (std::size_t s = i; s < j; ++s)
            for (int right = 1; right < m; ++right) {
              const double candidate = std::max({at(i, s, m - right), cut_time(s), stage_time(s + 1, j, right)});
              if (candidate < best) {
                best = candidate;
                choice = Choice{s, right};
              }
              ++candidates_;
            }
          best_[index(i, j, m)] = best;
          choice_[index(i, j, m)] = choice;
        }
      }
  }

  [[nodiscard]] double at(std::size_t i, std::size_t j, int m) const { return best_[index(i, j, m)]; }
  [[nodiscard]] Choice choice(std::size_t i, std::size_t j, int m) const { return choice_[index(i, j, m)]; }
  [[nodiscard]] std::size_t candidates() const { return candidates_; }

  // The stages of A^k(i→j, m) as (layers, first component, components), left to right.
  void stages(std::size_t i, std::size_t j, int m, int first,
              std::vector<std::tuple<LayerRange, int, int>>& out) const {
    const Choice c = choice(i, j, m);
    if (c.right == 0) {
      out.emplace_back(LayerRange{i, j + 1}, first, m);
      return;
    }
    stages(i, c.split, m - c.right, first, out);
    stages(c.split + 1, j, c.right, first + m - c.right, out);
  }

 private:
  [[nodiscard]] std::size_t index(std::size_t i, std::size_t j, int m) const {
    return (i * n_ + j) * (m_ + 1) + static_cast<std::size_t>(m);
  }

  std::size_t n_;
  int m_;
  std::vector<double> best_;
  std::vector<Choice> choice_;
  std::size_t candidates_ = 0;
};

// Slowest path between any two of `devices` (or between their groups when `across` is set).
BytesPerSecond slowest_bandwidth(const ClusterView& cluster, const std::vector<std::vector<DeviceId>>& groups,
                                 bool across) {
  double slowest = kInfinity;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t h = 0; h < groups.size(); ++h) {
      if ((g != h) != across) continue;
      for (DeviceId a : groups[g])
        for (DeviceId b : groups[h])
          if (a != b) slowest = std::min(slowest, cluster.path(a, b).bandwidth.value());
    }
  return BytesPerSecond(slowest);
}

}  // namespace

OptionSchema PipeDreamPlanner::options() {
  OptionSchema schema;
  schema.boolean("flat", false,
                 "one level over all GPUs (the slowest path between any two) instead of GPUs of a node, then nodes");
  return schema;
}

PlanResult PipeDreamPlanner::plan(const PlanRequest& request) const {
  const PlanClock timer;
  const bool asynchronous = request.schedule && request.schedule->asynchronous();
  const std::string cost_model = asynchronous ? "PipeDream slowest stage × M (asynchronous steady state)"
                                              : "PipeDream slowest stage × (M + S − 1)";
  if (std::string problem = request_problem(request, false); !problem.empty())
    return infeasible(std::move(problem), cost_model, 0, timer.elapsed());
  const StageCostModel cost(request);
  const ClusterView& cluster = request.cluster;
  const std::size_t layers = cost.layer_count();
  // The DP's units: the request's blocks (PlanRequest::boundaries), or every layer. Unit ranges
  // [i, j] are layer ranges [bounds[i], bounds[j + 1]).
  std::vector<std::size_t> bounds = request.boundaries;
  if (bounds.empty())
    for (std::size_t l = 0; l <= layers; ++l) bounds.push_back(l);
  const std::size_t units = bounds.size() - 1;
  const auto range_of = [&](std::size_t i, std::size_t j) { return LayerRange{bounds[i], bounds[j + 1]}; };

  // Levels from the topology: GPUs within a node, then nodes. Nodes of different sizes, a single
  // node, or one GPU per node: one level over all GPUs.
  std::map<std::uint32_t, std::vector<DeviceId>> by_node;
  for (DeviceId d = 0; d < cluster.size(); ++d) by_node[cluster.devices[d].node].push_back(d);
  std::vector<std::vector<DeviceId>> nodes;
  for (auto& [id, members] : by_node) nodes.push_back(members);
  bool two_levels = !request.options.flag("flat") && nodes.size() > 1 && nodes.front().size() > 1;
  for (const auto& node : nodes) two_levels = two_levels && node.size() == nodes.front().size();
  if (!two_levels)
    nodes = {[&] {
      std::vector<DeviceId> all;
      for (DeviceId d = 0; d < cluster.size(); ++d) all.push_back(d);
      return all;
    }()};
  const int per_node = static_cast<int>(nodes.front().size());
  const BytesPerSecond intra = per_node > 1 ? slowest_bandwidth(cluster, nodes, false) : BytesPerSecond(kInfinity);

  // PipeDream assumes identical GPUs: time every layer on the slowest one of the cluster.
  DeviceId slowest_gpu = 0;
  for (DeviceId d = 0; d < cluster.size(); ++d)
    if (cost.single_device_time({0, layers}, d) > cost.single_device_time({0, layers}, slowest_gpu)) slowest_gpu = d;
  const int micro_batch = cost.micro_batch_size();
  const auto stage_fits = [&](LayerRange range, int replicas) {
    // The DP knows neither a stage's position nor the replication above it: it keeps a stage that
    // fits as the last one (one micro-batch in flight) on this level's replicas, and the chosen plan
    // is checked exactly below (infeasible with the reason if a stage then does not fit).
    const std::vector<DeviceId> group(nodes.front().begin(), nodes.front().begin() + replicas);
    return cost.fits(range, group, 0, 1);
  };
  const Level level1(
      units, per_node,
      [&](std::size_t i, std::size_t j, int m) {
        if (m > micro_batch || !stage_fits(range_of(i, j), m)) return kInfinity;
        return pipedream_stage_time(cost, range_of(i, j), slowest_gpu, m, intra).value();
      },
      [&](std::size_t s) { return pipedream_cut_time(cost, bounds[s + 1] - 1, intra).value(); });
  std::size_t candidates = level1.candidates();
  std::vector<std::tuple<LayerRange, int, int>> outer;  // (units, first node, nodes)
  double objective = level1.at(0, units - 1, per_node);
  std::optional<Level> level2;
  if (two_levels) {
    const int node_count = static_cast<int>(nodes.size());
    const BytesPerSecond inter = slowest_bandwidth(cluster, nodes, true);
    level2.emplace(
        units, node_count,
        [&](std::size_t i, std::size_t j, int m) {
          const double sync = (cost.gradient_bytes(range_of(i, j)) * (2.0 * (m - 1)) / inter).value();
          return std::max(level1.at(i, j, per_node), sync) / m;
        },
        [&](std::size_t s) { return pipedream_cut_time(cost, bounds[s + 1] - 1, inter).value(); });
    candidates += level2->candidates();
    objective = level2->at(0, units - 1, node_count);
    level2->stages(0, units - 1, node_count, 0, outer);
  } else {
    outer.emplace_back(LayerRange{0, units}, 0, 1);
  }
  if (!(objective < kInfinity))
    return infeasible(fmt::format("no partition fits in GPU memory ({} candidates scored); one stage on one GPU: {}",
                                  candidates, cost.memory_problem({0, layers}, {&nodes.front()[0], 1}, 0, 1)),
                      cost_model, candidates, timer.elapsed());

  // Flatten: inner stage (layers, GPUs [a, a+g)) of an outer stage on nodes [c, c+n) runs on those
  // GPUs of each of the n nodes.
  std::vector<StageSpec> stages;
  for (const auto& [range, first_node, node_count] : outer) {
    std::vector<std::tuple<LayerRange, int, int>> inner;
    level1.stages(range.begin, range.end - 1, per_node, 0, inner);
    for (const auto& [inner_range, first_gpu, gpus] : inner) {
      StageSpec stage{LayerRange{bounds[inner_range.begin], bounds[inner_range.end]}, {}};
      for (int node = first_node; node < first_node + node_count; ++node)
        for (int gpu = first_gpu; gpu < first_gpu + gpus; ++gpu) stage.devices.push_back(nodes[node][gpu]);
      stages.push_back(std::move(stage));
    }
  }
  const PlanEvaluation evaluation = evaluate_synchronous(cost, stages);
  if (!evaluation.problem.empty()) return infeasible(evaluation.problem, cost_model, candidates, timer.elapsed());
  // Replication multiplies across levels: a flattened stage may hold more replicas than samples.
  if (const auto problems = make_plan(stages, request).problems(layers, cluster.size()); !problems.empty())
    return infeasible(problems.front(), cost_model, candidates, timer.elapsed());
  PlanResult result;
  result.feasible = true;
  result.plan = make_plan(stages, request);
  const int periods =
      asynchronous ? request.micro_batches : request.micro_batches + static_cast<int>(stages.size()) - 1;
  result.predicted_iteration_time = Seconds(objective * static_cast<double>(periods));
  result.cost_model = cost_model;
  result.statistics = PlanStatistics{candidates, timer.elapsed()};
  if (!request.boundaries.empty()) result.searched_blocks = units;
  return result;
}

}  // namespace dnnsim
