// The baselines of HAP's evaluation (Zhang et al., EuroSys'24, §5.7): HAP's search restricted to one
// strategy under fixed ratios. DP-EV and DP-CP: data parallelism with an even and a FLOP/s-proportional
// split of every batch. Megatron-TP: tensor parallelism only (Shoeybi et al., arXiv 1909.08053, §3:
// weights split by columns and rows, activations not split by samples). DeepSpeed: ZeRO data
// parallelism with expert parallelism for mixtures of experts (Rajbhandari et al., SC'20; DeepSpeed-MoE,
// Rajbhandari et al., ICML'22), even split: ZeRO's reduce-scatter of gradients and all-gather of
// parameters move the bytes of one all-reduce (its sharded optimizer state changes memory, not time),
// so it is priced as that all-reduce.
#include "models/common/builtin_registry.hpp"
#include "planners/spmd/spmd_planner.hpp"

namespace dnnsim {

namespace {

// Activations split by samples, parameters replicated (gradients all-reduced), experts replicated.
bool data_parallel_rule(const SpmdOp& op, const ShardingRule& rule) {
  switch (op.kind) {
    case OpKind::parameter:
    case OpKind::transpose:
      return rule.output == Layout::replicated;
    case OpKind::loss:
      return rule.output == Layout::partial;
    case OpKind::experts:
      return rule.inputs[1] == Layout::replicated && rule.output == Layout::split_rows;
    default:
      return rule.output == Layout::split_rows;
  }
}

// Data parallelism with the experts split among the devices, tokens sent to them (expert parallelism).
bool deepspeed_rule(const SpmdOp& op, const ShardingRule& rule) {
  if (op.kind == OpKind::experts) return rule.inputs[1] == Layout::split_rows;
  if (op.kind == OpKind::parameter && op.experts > 0) return rule.output == Layout::split_rows;
  return data_parallel_rule(op, rule);
}

// Tensor parallelism (Megatron-like): no split by samples anywhere; weights split by columns or rows.
bool tensor_parallel_rule(const SpmdOp& op, const ShardingRule& rule) {
  if (rule.output == Layout::split_rows && op.kind != OpKind::parameter && op.kind != OpKind::transpose) return false;
  for (Layout l : rule.inputs)
    if (l == Layout::split_rows && op.kind != OpKind::matmul && op.kind != OpKind::embedding) return false;
  return op.kind != OpKind::input || rule.output == Layout::replicated;
}

// `shares` (the DeepSpeed baseline's option): its experts and tokens split evenly, as DeepSpeed does,
// or in proportion to FLOP/s — HAP's uneven experts (§5.7) under DeepSpeed's strategy, to measure
// what that mechanism alone gains.
OptionSchema shares_options() {
  OptionSchema schema;
  schema.choice("shares", "even", {"even", "flops"},
                "even: every device as many experts and tokens (DeepSpeed's); flops: in proportion to FLOP/s (HAP's "
                "uneven experts under DeepSpeed's strategy)");
  return schema;
}

class FixedRatioPlanner final : public SpmdPlanner {
 public:
  // `proportional`: shares in proportion to FLOP/s; `shares_option`: as the `shares` option says.
  FixedRatioPlanner(RuleFilter filter, bool proportional, bool shares_option = false)
      : filter_(std::move(filter)), proportional_(proportional), shares_option_(shares_option) {}

  SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& options) const override {
    SpmdPlan plan;
    const Mesh mesh{{static_cast<int>(cluster.size())}};
    plan.ratios = ShardRatios::even(mesh);
    if (proportional_ || (shares_option_ && options.choice("shares") == "flops"))
      plan.ratios.values[0][0] = proportional_to_speed(cluster);
    ProgramSearchOptions search;
    search.filter = filter_;
    plan.program = search_program(graph, {}, plan.ratios, cluster, search, &plan.statistics);
    plan.predicted_iteration_s = iteration_time(graph, plan.program, plan.ratios, cluster);
    plan.rounds = 1;
    return plan;
  }

 private:
  RuleFilter filter_;
  bool proportional_;
  bool shares_option_;
};

}  // namespace

SpmdProgram data_parallel_program(const OpGraph& graph, const SpmdCluster& cluster) {
  ProgramSearchOptions search;
  search.filter = data_parallel_rule;
  return search_program(graph, {}, ShardRatios::even(Mesh{{static_cast<int>(cluster.size())}}), cluster, search);
}

void register_spmd_baselines(SpmdPlannerRegistry& registry) {
  registry.add("dp-ev", "data parallelism, even split of every batch", "HAP §5.7 baseline DP-EV",
               std::make_shared<FixedRatioPlanner>(data_parallel_rule, false));
  registry.add("dp-cp", "data parallelism, batch split in proportion to FLOP/s", "HAP §5.7 baseline DP-CP",
               std::make_shared<FixedRatioPlanner>(data_parallel_rule, true));
  registry.add("megatron-tp",
               "tensor parallelism only (column/row-split weights, activations not split by samples), even split",
               "Shoeybi et al., Megatron-LM, arXiv 1909.08053, §3",
               std::make_shared<FixedRatioPlanner>(tensor_parallel_rule, false));
  registry.add("deepspeed", "ZeRO data parallelism with expert parallelism for experts, even split (option: shares)",
               "HAP §5.7 baseline DeepSpeed; Rajbhandari et al., ZeRO, SC'20 and DeepSpeed-MoE, ICML'22",
               std::make_shared<FixedRatioPlanner>(deepspeed_rule, false, true), shares_options());
}

const SpmdPlannerRegistry& builtin_spmd_planners() {
  return builtin_registry<SpmdPlannerRegistry, register_hap_planners, register_rhino_planner, register_smsg_planner,
                          register_spmd_baselines>("SPMD planner");
}

}  // namespace dnnsim
