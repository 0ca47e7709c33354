// HAP (Zhang et al., EuroSys'24, §5.1): Q⁽ˢ⁾ = argmin_Q t(Q, B⁽ˢ⁻¹⁾), B⁽ˢ⁾ = argmin_B t(Q⁽ˢ⁾, B), from
// B⁽⁰⁾ ∝ FLOP/s, until the cost stops improving (its code's stopping rule); the best pair is kept. The
// program is cut into segments of about equal FLOPs, each with its ratio vector (§5.5; HAP's models
// mark them with new_segment after every layer, and its experiments' config turns them off): the
// `segments` option, `auto` trying 1, 2, 4 and 8 and keeping the cheapest. And the OneFlow-SBP-like
// planner: the same search priced with SBP's boxing table, even shares.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

#include "models/common/units.hpp"
#include "planners/spmd/hap_ratios.hpp"
#include "planners/spmd/spmd_planner.hpp"

namespace dnnsim {

namespace {

// `count` contiguous ranges of operators with about equal forward FLOPs: an operator goes to the
// segment its FLOPs so far fall in (parameters, without FLOPs, with the operator after them).
std::vector<int> cut_segments(const OpGraph& graph, int count) {
  if (count <= 1) return {};
  const double total = graph.forward_flops().value();
  std::vector<int> segment(graph.size(), 0);
  double before = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    segment[id] = std::min(count - 1, static_cast<int>(count * before / std::max(total, 1.0)));
    before += graph.op(id).forward_flops.value();
  }
  return segment;
}

OptionSchema hap_options() {
  OptionSchema schema;
  schema
      .integer("segments", std::nullopt,
               "program segments, each with its own ratio vector and all-to-alls between them (HAP §5.5); auto: "
               "1, 2, 4 and 8 tried, the cheapest kept")
      .at_least(1)
      .keywords({"auto"});
  schema.boolean("sfb", true, "sufficient-factor broadcasting of data-parallel matmuls' weight gradients (HAP §5.6)");
  schema.boolean("grouped", true,
                 "grouped Broadcast/Reduce of uneven shards as alternatives to padded collectives (HAP §5.6)");
  schema.integer("max_rounds", 10, "program-synthesis and LP alternations at most (HAP §5.1)").at_least(1);
  schema.integer("max_states", 4096, "search states kept per operator, the cheapest (never binds on the zoo)")
      .at_least(1);
  return schema;
}

class HapPlanner final : public SpmdPlanner {
 public:
  SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& options) const override {
    std::vector<int> counts{1, 2, 4, 8};
    if (options.has("segments") && !options.keyword("segments"))
      counts = {static_cast<int>(options.integer("segments"))};
    ProgramSearchOptions search;
    search.sfb = options.flag("sfb");
    search.grouped = options.flag("grouped");
    search.max_states = static_cast<std::size_t>(options.integer("max_states"));
    const int max_rounds = static_cast<int>(options.integer("max_rounds"));
    SpmdPlan best;
    best.predicted_iteration_s = std::numeric_limits<double>::infinity();
    SearchStatistics totals;
    std::vector<std::string> lines;
    for (int count : counts) {
      SpmdPlan candidate = alternate(graph, cluster, cut_segments(graph, count), count, search, max_rounds);
      totals.states += candidate.statistics.states;
      totals.transitions += candidate.statistics.transitions;
      totals.pruned += candidate.statistics.pruned;
      lines.push_back(fmt::format("{}: predicted {:.4g} s after {}", counted(count, "segment"),
                                  candidate.predicted_iteration_s, counted(candidate.rounds, "round")));
      if (candidate.predicted_iteration_s < best.predicted_iteration_s * (1 - 1e-9)) best = std::move(candidate);
    }
    best.statistics = totals;
    best.report = std::move(lines);
    best.report.push_back(fmt::format("search: {} states kept, {} transitions, {} pruned", totals.states,
                                      totals.transitions, totals.pruned));
    return best;
  }

 private:
  static SpmdPlan alternate(const OpGraph& graph, const SpmdCluster& cluster, const std::vector<int>& segment,
                            int count, const ProgramSearchOptions& search, int max_rounds) {
    SpmdPlan best;
    best.predicted_iteration_s = std::numeric_limits<double>::infinity();
    ShardRatios ratios;
    ratios.values.assign(
        1, std::vector<std::vector<double>>(static_cast<std::size_t>(count), proportional_to_speed(cluster)));
    for (int round = 1; round <= max_rounds; ++round) {
      SearchStatistics statistics;
      SpmdProgram program = search_program(graph, segment, ratios, cluster, search, &statistics);
      best.statistics.states += statistics.states;
      best.statistics.transitions += statistics.transitions;
      best.statistics.pruned += statistics.pruned;
      ShardRatios balanced = balance_ratios(graph, program, cluster);
      const double cost = program_cost(graph, program, balanced, cluster);
      if (cost >= best.predicted_iteration_s * (1 - 1e-9)) break;
      best.program = std::move(program);
      best.ratios = balanced;
      best.predicted_iteration_s = cost;
      best.rounds = round;
      ratios = std::move(balanced);
    }
    return best;
  }
};

// OneFlow-SBP-like: the search priced with the boxing table, even shares; predicted by HAP's model.
class SbpPlanner final : public SpmdPlanner {
 public:
  SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& /*options*/) const override {
    SpmdPlan plan;
    const Mesh mesh{{static_cast<int>(cluster.size())}};
    plan.ratios = ShardRatios::even(mesh);
    ProgramSearchOptions search;
    search.model = SpmdCostModel::sbp;
    plan.program = search_program(graph, {}, plan.ratios, cluster, search, &plan.statistics);
    plan.predicted_iteration_s = program_cost(graph, plan.program, plan.ratios, cluster);
    plan.rounds = 1;
    return plan;
  }
};

}  // namespace

std::vector<double> proportional_to_speed(const SpmdCluster& cluster) {
  const double total = std::accumulate(cluster.flops_per_second.begin(), cluster.flops_per_second.end(), 0.0);
  std::vector<double> ratios;
  for (double f : cluster.flops_per_second) ratios.push_back(f / total);
  return ratios;
}

void register_hap_planners(SpmdPlannerRegistry& registry) {
  registry.add("hap",
               "HAP: program synthesis over sharding rules (SFB, grouped collectives, segments) alternated with "
               "the uneven-ratio LP (Clp)",
               "Zhang et al., HAP, EuroSys'24, §5.1–5.6", std::make_shared<HapPlanner>(), hap_options());
  registry.add("sbp", "OneFlow-SBP-like: HAP's search priced with SBP boxing bytes, even split",
               "Yuan et al., OneFlow, arXiv 2110.15032, §6.1 boxing table", std::make_shared<SbpPlanner>());
}

}  // namespace dnnsim
