// Rhino-like planner (Zhang et al., "Auto-Parallelizing Large Models with Rhino: A Systematic
// Approach on Production AI Platform", arXiv 2302.08141; its open-source system alibaba/TePDist,
// auto_parallel.cc RunExplorationlMode / RunFastMode): proposals of how the devices are used, each
// planned and estimated, the cheapest that fits memory kept.
//  - `thorough` (TePDist's exploration mode): the SPMD search (rhino_search.hpp, finer cones) on a
//    mesh over all devices, one axis [p] and, on several nodes, two [nodes × GPUs per node] (the
//    "complete strategy space" of the paper; TePDist's code keeps one axis); and pipelines of
//    S = 2, 4, … ≤ max_stages stages (rhino_stages.hpp: the integer program on the cut bytes), each
//    stage data parallel over p/S devices, GPipe over `micro_batches`, estimated by the GPipe
//    recurrence of TePDist's evaluator (fwd_end[s] = max(fwd_end[s−1] + transfer, fwd_end[s]) +
//    duration over micro-batches, then the backwards) plus each stage's gradient all-reduce.
//  - `fast` (TePDist's fast mode: one pass): the SPMD search on [p] only, coarser cones, no pipeline.
// An SPMD proposal is estimated on the two streams the lowering runs (spmd_cost.hpp iteration_time:
// gradient all-reduces overlap the backward of earlier operators). The search's costs add up, so it
// cannot see which all-reduces will be hidden: it runs with them charged in full and as hidden
// (RhinoSearchOptions::sync_weight 1 and 0, the two bounds) and the proposal keeps the faster program.
// Memory: what a device holds at the end of the forward pass — its model state (weights, gradients
// and Adam's two moments, 4× the parameter bytes of its share) and its share of every output kept for
// the backward pass (spmd_cost.hpp device_memory, the lowering's allocations) — must fit
// `memory_limit`. An SPMD proposal whose time-optimal program does not fit is
// searched again with memory priced (rhino_search.hpp, the Lagrangian relaxation of the limit): the
// price starts where the whole memory costs as much as the whole predicted time and is multiplied by
// kPriceStep until the program fits (divided while it still fits), then bisected (geometrically,
// kPriceBisections times) between the highest price that did not fit and the lowest that did; the
// fastest program that fits is kept. A higher
// price never buys more memory: optima x1 at price λ1 and x2 at λ2 > λ1 satisfy t1 + λ1·m1 ≤ t2 + λ1·m2
// and t2 + λ2·m2 ≤ t1 + λ2·m1, whose sum is (λ2 − λ1)(m2 − m1) ≤ 0 — so the steps find the first fit.
// Pipeline proposals keep their stages data parallel: a stage holds its weights' state and, GPipe
// stashing every micro-batch, its operators' kept outputs over its replicas (TePDist's evaluator
// drops a stage that does not fit, counting parameters only). No proposal left is an infeasible plan,
// with the smallest need in its reason. TePDist's memory check counts model state only; activations
// are added here because a program chosen on state alone can run out of memory (GPT-3 175B's [128 ×
// 8] program: 31.5 GB of state, 273.8 GiB with its activations, on 80 GB A100s).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "planners/spmd/rhino_search.hpp"
#include "planners/spmd/rhino_stages.hpp"
#include "planners/spmd/spmd_cost.hpp"
#include "planners/spmd/spmd_planner.hpp"

namespace dnnsim {

namespace {

OptionSchema rhino_options() {
  OptionSchema schema;
  schema.choice(
      "level", "thorough", {"fast", "thorough"},
      "fast: one mesh over all devices, coarse cones, no pipeline; thorough: meshes, finer cones and pipeline "
      "stage proposals (Rhino's two optimization levels)");
  schema.integer("max_stages", 8, "pipeline stages proposed at most (thorough)").at_least(1);
  schema.integer("micro_batches", 8, "GPipe micro-batches of a pipeline proposal").at_least(1);
  schema
      .quantity<Bytes>("memory_limit", std::nullopt,
                       "memory allowed per device at the end of the forward pass (model state, 4× its parameter "
                       "bytes, and the outputs kept for the backward pass); none: each GPU's memory")
      .at_least(0);
  schema.integer("group", 1, "critical nodes per sub-graph (TePDist's critical_inst_num_per_group)").at_least(1);
  schema
      .number("unbalanced_ratio", 0.08,
              "pipeline stages' FLOPs tolerance, a fraction of a stage (TePDist UNBALANCED_RATIO 8%)")
      .range(0.0, 0.99);
  schema.quantity<Seconds>("ilp_time_limit", Seconds(60), "Cbc's limit per integer program").at_least(0.001);
  return schema;
}

struct Proposal {
  std::string describe;
  double predicted = std::numeric_limits<double>::infinity();
  double memory_bytes = 0;  // the most a device holds (spmd_cost.hpp device_memory)
  SpmdPlan plan;
};

double peak_memory(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios) {
  const std::vector<double> memory = device_memory(graph, program, ratios);
  return *std::max_element(memory.begin(), memory.end());
}

// The price's step while bracketing (×4; 20 steps span 4^20 ≈ 10^12 either way, up from "the memory
// costs the whole time" to "a 10^-12 share of it outweighs the whole time"), and the bisections after
// (6 halve the bracket's ratio of 4 down to 4^(1/64), 2%).
constexpr double kPriceStep = 4;
constexpr int kPriceSteps = 20;
constexpr int kPriceBisections = 6;

Proposal searched(const OpGraph& graph, const SpmdCluster& cluster, const RhinoSearchOptions& options) {
  Proposal p;
  RhinoStatistics stats;
  p.plan.program = rhino_search(graph, cluster, options, &stats);
  p.plan.ratios = ShardRatios::even(options.mesh);
  p.predicted = p.plan.predicted_iteration_s = iteration_time(graph, p.plan.program, p.plan.ratios, cluster);
  p.memory_bytes = peak_memory(graph, p.plan.program, p.plan.ratios);
  p.plan.statistics.states += stats.cones;
  p.describe =
      fmt::format("mesh {}: predicted {:.4g} s ({} sub-graphs, {} cones, {} integer programs solved, {} reused{})",
                  options.mesh.describe(), p.predicted, stats.subgraphs, stats.cones, stats.ilps, stats.ilps_reused,
                  stats.optimal ? "" : ", some not proven optimal");
  return p;
}

// The fastest program the search finds with `options` whose memory fits `limit`, memory priced as
// needed; when none does, the one of least memory.
Proposal fitted(const OpGraph& graph, const SpmdCluster& cluster, RhinoSearchOptions options, double limit) {
  Proposal p = searched(graph, cluster, options);
  if (p.memory_bytes <= limit || p.memory_bytes <= 0) return p;
  const double free_memory = p.memory_bytes, free_time = p.predicted;
  int searches = 1;
  std::optional<Proposal> best;  // the fastest that fits
  double best_price = 0;
  Proposal least = p;  // the least memory seen
  const auto attempt = [&](double price) {
    options.memory_price = price;
    Proposal q = searched(graph, cluster, options);
    ++searches;
    const bool fits = q.memory_bytes <= limit;
    if (q.memory_bytes < least.memory_bytes) least = q;
    if (fits && (!best || q.predicted < best->predicted)) {
      best = std::move(q);
      best_price = price;
    }
    return fits;
  };
  // Bracket the least price that fits: up from the first while nothing fits, down while it does.
  double below = 0, price = p.predicted / p.memory_bytes;
  if (attempt(price)) {
    for (int step = 0; step < kPriceSteps && below == 0; ++step)
      if (attempt(price / kPriceStep))
        price /= kPriceStep;
      else
        below = price / kPriceStep;
  } else {
    below = price;
    for (int step = 0; step < kPriceSteps && !attempt(price *= kPriceStep); ++step) below = price;
  }
  if (best && below > 0)
    for (int b = 0; b < kPriceBisections; ++b) {
      const double middle = std::sqrt(below * price);
      (attempt(middle) ? price : below) = middle;
    }
  Proposal result = best ? std::move(*best) : std::move(least);
  result.describe +=
      fmt::format("; {} {:.4g} GB of memory per GPU (unpriced: {:.4g} GB, predicted {:.4g} s), {} searches",
                  best ? fmt::format("memory priced at {:.3g} s/GB:", best_price * 1e9)
                       : std::string("at any memory price at least"),
                  result.memory_bytes / 1e9, free_memory / 1e9, free_time, searches);
  return result;
}

// The search on `mesh` with gradient all-reduces charged in full and as hidden (RhinoSearchOptions::
// sync_weight), each fitted to memory; the one that fits and runs faster on the lowering's two streams.
Proposal spmd_proposal(const OpGraph& graph, const SpmdCluster& cluster, const Mesh& mesh, bool fine, int group,
                       double ilp_seconds, double limit) {
  Proposal charged = fitted(graph, cluster, RhinoSearchOptions{mesh, group, fine, ilp_seconds}, limit);
  RhinoSearchOptions hiding{mesh, group, fine, ilp_seconds};
  hiding.sync_weight = 0;
  Proposal hidden = fitted(graph, cluster, hiding, limit);
  const bool hidden_fits = hidden.memory_bytes <= limit, charged_fits = charged.memory_bytes <= limit;
  const bool better = hidden_fits != charged_fits ? hidden_fits
                      : hidden_fits               ? hidden.predicted < charged.predicted
                                                  : hidden.memory_bytes < charged.memory_bytes;
  Proposal& kept = better ? hidden : charged;
  kept.describe +=
      fmt::format(" (gradient all-reduces searched as {}; as {}: predicted {:.4g} s)", better ? "hidden" : "exposed",
                  better ? "exposed" : "hidden", (better ? charged : hidden).predicted);
  return std::move(kept);
}

// S stages of p/S devices each, data parallel inside, GPipe over M micro-batches.
Proposal pipeline_proposal(const OpGraph& graph, const SpmdCluster& cluster, int stages, int micro_batches,
                           double unbalanced, double ilp_seconds) {
  Proposal p;
  const std::optional<StagePartition> partition = partition_stages(graph, stages, unbalanced, ilp_seconds);
  const auto empty = [&] {
    std::vector<bool> used(static_cast<std::size_t>(stages), false);
    for (OpId id = 0; id < graph.size(); ++id)
      if (graph.op(id).kind != OpKind::parameter) used[static_cast<std::size_t>(partition->stage[id])] = true;
    return std::find(used.begin(), used.end(), false) != used.end();
  };
  if (!partition || empty()) {
    p.describe = fmt::format("{} stages: no balanced partition", stages);
    return p;
  }
  const int replicas = static_cast<int>(cluster.size()) / stages;
  const int samples = std::max(1, graph.samples());
  int m = std::min(micro_batches, samples);
  while (samples % m != 0) --m;
  // Per micro-batch and replica: each stage's forward time on its slowest device, its gradients, and the
  // bytes leaving it.
  std::vector<double> forward(static_cast<std::size_t>(stages), 0.0), weights(static_cast<std::size_t>(stages), 0.0),
      leaving(static_cast<std::size_t>(stages), 0.0), memory(static_cast<std::size_t>(stages), 0.0);
  for (OpId id = 0; id < graph.size(); ++id) {
    const auto s = static_cast<std::size_t>(partition->stage[id]);
    double slowest = std::numeric_limits<double>::infinity();
    for (int r = 0; r < replicas; ++r)
      slowest = std::min(
          slowest, cluster.flops_per_second[s * static_cast<std::size_t>(replicas) + static_cast<std::size_t>(r)]);
    forward[s] += graph.op(id).forward_flops.value() / m / replicas / slowest;
    if (graph.op(id).kind == OpKind::parameter) weights[s] += graph.bytes(id).value();
    memory[s] += memory_multiplier(graph, id) * graph.bytes(id).value() /
                 (graph.op(id).kind == OpKind::parameter ? 1 : replicas);
    for (OpId in : graph.op(id).inputs)
      if (partition->stage[in] < partition->stage[id] && graph.op(in).kind != OpKind::parameter)
        leaving[static_cast<std::size_t>(partition->stage[in])] += graph.bytes(in).value() / m / replicas;
  }
  const LinearCost& send = cluster.all.all_gather;  // a transfer between stages: the cluster's per-byte rate
  // TePDist's recurrence over micro-batches, forwards then backwards (GPipe).
  std::vector<double> end(static_cast<std::size_t>(stages), 0.0);
  for (int mb = 0; mb < m; ++mb)
    for (std::size_t s = 0; s < end.size(); ++s)
      end[s] = std::max(end[s], s > 0 ? end[s - 1] + send.at(leaving[s - 1]) : 0.0) + forward[s];
  std::vector<double> back(static_cast<std::size_t>(stages), end.back());
  for (int mb = 0; mb < m; ++mb)
    for (std::size_t s = end.size(); s-- > 0;)
      back[s] = std::max(back[s], s + 1 < end.size() ? back[s + 1] + send.at(leaving[s]) : end.back()) + 2 * forward[s];
  const Mesh mesh{{stages, replicas}};
  const CollectiveLines replica_lines = cluster.lines(mesh, 1);
  double sync = 0;
  for (double w : weights) sync = std::max(sync, replicas > 1 ? replica_lines.all_reduce.at(w) : 0.0);
  p.predicted = *std::max_element(back.begin(), back.end()) + sync;
  p.memory_bytes = *std::max_element(memory.begin(), memory.end());
  SpmdPipeline pipeline;
  pipeline.stage = partition->stage;
  pipeline.micro_batches = m;
  pipeline.cut_bytes = partition->cut_bytes;
  for (int s = 0; s < stages; ++s) {
    std::vector<DeviceId> devices;
    for (int r = 0; r < replicas; ++r) devices.push_back(static_cast<DeviceId>(s * replicas + r));
    pipeline.devices.push_back(std::move(devices));
  }
  p.plan.pipeline = std::move(pipeline);
  p.plan.predicted_iteration_s = p.predicted;
  p.describe = fmt::format(
      "{} stages × {} GPUs (data parallel), M = {}: predicted {:.4g} s, {:.4g} MB cut per iteration{}", stages,
      replicas, m, p.predicted, partition->cut_bytes / 1e6, partition->optimal ? "" : " (not proven optimal)");
  return p;
}

class RhinoPlanner final : public SpmdPlanner {
 public:
  SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& options) const override {
    const bool thorough = options.choice("level") == "thorough";
    const int p = static_cast<int>(cluster.size());
    const int per_node = cluster.gpus_per_node;
    const int group = static_cast<int>(options.integer("group"));
    const double seconds = options.quantity<Seconds>("ilp_time_limit").value();
    double limit = std::numeric_limits<double>::infinity();
    for (double m : cluster.memory_bytes) limit = std::min(limit, m > 0 ? m : limit);
    if (options.has("memory_limit")) limit = options.quantity<Bytes>("memory_limit").value();
    std::vector<Proposal> proposals;
    proposals.push_back(spmd_proposal(graph, cluster, Mesh{{p}}, thorough, group, seconds, limit));
    if (thorough) {
      // A node's GPUs as the inner axis, when the devices fill several nodes evenly.
      if (per_node > 1 && per_node < p && p % per_node == 0)
        proposals.push_back(spmd_proposal(graph, cluster, Mesh{{p / per_node, per_node}}, true, group, seconds, limit));
      for (int s = 2; s <= options.integer("max_stages") && s <= p; s *= 2)
        if (p % s == 0)
          proposals.push_back(pipeline_proposal(graph, cluster, s, static_cast<int>(options.integer("micro_batches")),
                                                options.number("unbalanced_ratio"), seconds));
    }
    SpmdPlan best;
    const Proposal* chosen = nullptr;
    double smallest = std::numeric_limits<double>::infinity();
    for (const Proposal& proposal : proposals) {
      const bool fits = proposal.memory_bytes <= limit;
      best.report.push_back(
          fmt::format("{}{}", proposal.describe,
                      fits ? "" : fmt::format(" — needs {:.4g} GB of memory per GPU", proposal.memory_bytes / 1e9)));
      if (proposal.predicted < std::numeric_limits<double>::infinity())
        smallest = std::min(smallest, proposal.memory_bytes);
      if (fits && (chosen == nullptr || proposal.predicted < chosen->predicted)) chosen = &proposal;
    }
    if (chosen == nullptr || chosen->predicted == std::numeric_limits<double>::infinity()) {
      best.feasible = false;
      best.reason = fmt::format(
          "no proposal fits the memory limit of {:.4g} GB per GPU (the smallest needs {:.4g} GB: model "
          "state and activations)",
          limit / 1e9, smallest / 1e9);
      best.program.mesh = Mesh{{p}};
      return best;
    }
    std::vector<std::string> report = std::move(best.report);
    best = chosen->plan;
    best.report = std::move(report);
    if (best.pipeline) {
      // Stages run data parallel: the program is every operator's data-parallel rule on one axis.
      best.program = data_parallel_program(graph, cluster);
      best.ratios = ShardRatios::even(best.program.mesh);
    }
    best.rounds = static_cast<int>(proposals.size());
    return best;
  }
};

}  // namespace

void register_rhino_planner(SpmdPlannerRegistry& registry) {
  registry.add("rhino",
               "Rhino-like: per-operator strategies (split, replicate, partial, strided) chosen by cones, an ILP (Cbc) "
               "within sub-graphs and a DP across them; meshes and pipeline stages by an ILP on cut bytes; fast or "
               "thorough",
               "Zhang et al., Rhino, arXiv 2302.08141; alibaba/TePDist @12af478", std::make_shared<RhinoPlanner>(),
               rhino_options());
}

}  // namespace dnnsim
