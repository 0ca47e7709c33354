#include "sim/workloads/spmd/spmd_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/common/option_reader.hpp"
#include "models/program/collective_algorithms.hpp"
#include "models/spmd/graph_zoo.hpp"
#include "planners/spmd/spmd_lowering.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/cluster_view_builder.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {

SpmdPlan plan_spmd(const Scenario& scenario, const SpmdWorkload& spec) {
  const ClusterView view = make_cluster_view(scenario.cluster, make_layout(scenario.cluster));
  const SpmdCluster cluster = make_spmd_cluster(view, spec.graph.dtype(), spec.comm);
  SpmdPlan plan =
      builtin_spmd_planners().at(spec.planner, spec.where).value->plan(spec.graph, cluster, spec.planner_options);
  plan.planner = spec.planner;
  return plan;
}

namespace {

class SpmdKind final : public WorkloadKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<SpmdWorkload>();
    MapReader& map = ctx.map;
    spec->where = ctx.reader.where(map.node());
    spec->planner_options = builtin_spmd_planners().defaults(spec->planner);
    if (const YAML::Node planner = map.get("planner"); planner.IsDefined())
      if (auto selection = read_entry(ctx.reader, planner, builtin_spmd_planners())) {
        spec->planner = selection->name;
        spec->planner_options = std::move(selection->options);
      }
    const Dtype dtype = read_kernel_dtype(map, ctx.cluster).value_or(Dtype::fp32);
    if (const YAML::Node algorithm = map.get("collective_algorithm"); algorithm.IsDefined())
      if (auto selection = read_entry(ctx.reader, algorithm, builtin_collective_algorithms())) {
        // A mesh axis' groups need not hold as many members on every node; the default rule already
        // takes such an algorithm wherever they do.
        if (builtin_collective_algorithms().at(selection->name).value->needs_equal_members_per_node()) {
          std::vector<std::string> others;
          for (const auto& entry : builtin_collective_algorithms().entries())
            if (entry.value->supports(CollectiveKind::all_reduce) && !entry.value->needs_equal_members_per_node())
              others.push_back(entry.name);
          ctx.reader.error(algorithm,
                           fmt::format("an spmd workload's all-reduces run one of {} ({} needs as many members "
                                       "on every node, and is the default rule's wherever a group has them)",
                                       fmt::join(others, ", "), selection->name));
        } else {
          spec->comm.all_reduce_algorithm = selection->name;
        }
      }
    if (auto bucket = map.positive_quantity<Bytes>("bucket_size")) spec->comm.bucket_bytes = bucket->value();
    if (auto batch = map.integer("global_batch", 1, 1 << 30)) spec->global_batch = static_cast<int>(*batch);
    const bool has_model = map.has("model"), has_graph = map.has("graph");
    if (has_model == has_graph) {
      map.exactly_one_of(
          {"model", "graph"}, map.node(),
          "give exactly one of 'model' (zoo, profile or layers) and 'graph' (an operator-graph file or {zoo: …})");
      return spec;
    }
    try {
      if (has_model) {
        const YAML::Node node = map.get("model");
        const LayerModel model = read_layer_model(ctx.reader, node, "the model");
        if (!spec->global_batch) {
          if (!map.refused("global_batch"))
            ctx.reader.error(map.node(), "a model needs 'global_batch' (the samples of one iteration)");
        } else if (!model.layers.empty()) {
          spec->graph = build_op_graph(model, *spec->global_batch, dtype, ctx.reader.where(node));
        }
      } else if (const YAML::Node node = map.get("graph"); node.IsMap()) {
        // `graph: {zoo: NAME, option: value}`: a model of the graph zoo, built for the global batch.
        if (auto selection = read_entry(ctx.reader, node, builtin_graph_models(), "zoo")) {
          if (!spec->global_batch) {
            if (!map.refused("global_batch"))
              ctx.reader.error(map.node(), "a graph of the zoo needs 'global_batch' (the samples of one iteration)");
          } else {
            const GraphRequest request{*spec->global_batch, dtype, static_cast<int>(ctx.cluster.gpu_count()),
                                       &selection->options};
            try {
              spec->graph = builtin_graph_models().at(selection->name).value(request);
            } catch (const InputError& e) {
              for (const Diagnostic& d : e.diagnostics()) ctx.reader.error(node, d.message);
            }
          }
        }
      } else if (auto file = map.string("graph")) {
        spec->graph = load_op_graph(ctx.resolve_path(*file));
        // A file's rows say nothing of samples: the global batch, or each input row a sample.
        if (spec->global_batch) spec->graph.set_samples(*spec->global_batch);
        if (map.has("dtype")) ctx.reader.error(map.get("dtype"), "an operator-graph file gives its own dtype");
      }
    } catch (const InputError& e) {
      ctx.reader.sink().append(e.diagnostics());
    }
    return spec;
  }

  std::string check(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<SpmdWorkload>();
    const SpmdPlan plan = plan_spmd(scenario, spec);
    if (!plan.feasible) return fmt::format("ok, but no feasible plan: {}", plan.reason);
    return fmt::format("ok ({} GPUs, {} operators, planner {}: predicted {:.4g} s per iteration)",
                       scenario.cluster.gpu_count(), spec.graph.size(), plan.planner, plan.predicted_iteration_s);
  }

  [[nodiscard]] bool lowers_to_one_graph() const override { return true; }

  std::optional<TaskGraph> lower(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<SpmdWorkload>();
    const SpmdPlan plan = plan_spmd(scenario, spec);
    if (!plan.feasible) throw InfeasiblePlan(spec.where, fmt::format("no feasible plan: {}", plan.reason));
    return lower_spmd(spec.graph, plan, scenario.cluster.gpu_names(), scenario.run.iterations, spec.comm);
  }

  SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const override {
    const auto& spec = *scenario.workload_as<SpmdWorkload>();
    auto report = std::make_shared<SpmdRunReport>();
    report->plan = plan_spmd(scenario, spec);
    report->graph = std::make_shared<const OpGraph>(spec.graph);
    if (!report->plan.feasible) {
      SimulationResult result;
      result.gpu_names = scenario.cluster.gpu_names();
      result.infeasible_reason = report->plan.reason;
      result.workload_result = std::move(report);
      return result;
    }
    SimulationResult result =
        simulate(scenario,
                 lower_spmd(spec.graph, report->plan, scenario.cluster.gpu_names(), scenario.run.iterations, spec.comm),
                 options);
    result.workload_result = std::move(report);
    return result;
  }

  std::vector<SummaryField> summary_fields() const override {
    constexpr FieldType text = FieldType::text;
    return {{"spmd.planner", text},
            {"spmd.predicted_iteration_time_s"},
            {"spmd.feasible", text},
            {"spmd.reason", text},
            {"spmd.mesh", text},
            {"spmd.ratios.*"},
            {"spmd.segment_ratios.#.#"},
            {"spmd.collectives_per_iteration"},
            {"spmd.rounds"},
            {"spmd.states_searched"},
            {"spmd.report.#", text},
            {"spmd.pipeline.stages.#.operators"},
            {"spmd.pipeline.stages.#.gpus"},
            {"spmd.pipeline.micro_batches"},
            {"spmd.pipeline.cut_bytes"},
            {"spmd.program.#", text}};
  }

  void add_to_summary(const Scenario&, const SimulationResult& result, nlohmann::ordered_json& summary) const override {
    const auto* report = dynamic_cast<const SpmdRunReport*>(result.workload_result.get());
    if (report == nullptr) return;
    const SpmdPlan& plan = report->plan;
    nlohmann::ordered_json section;
    section["planner"] = plan.planner;
    section["predicted_iteration_time_s"] = plan.predicted_iteration_s;
    section["feasible"] = plan.feasible;
    if (!plan.feasible) section["reason"] = plan.reason;
    section["mesh"] = plan.program.mesh.describe();
    nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
    if (!plan.program.axes.empty()) {
      const std::vector<double> shares = plan.ratios.device_shares(plan.program.mesh);
      for (std::size_t d = 0; d < shares.size() && d < result.gpu_names.size(); ++d)
        ratios[result.gpu_names[d]] = shares[d];
    }
    section["ratios"] = ratios;
    // HAP's later segments: each its ratio vector (the first is `ratios`).
    nlohmann::ordered_json segments = nlohmann::ordered_json::array();
    for (int s = 1; s < plan.program.segments(); ++s)
      segments.push_back(plan.ratios.device_shares(plan.program.mesh, s));
    if (!segments.empty()) section["segment_ratios"] = segments;
    section["collectives_per_iteration"] = plan.program.collective_count();
    section["rounds"] = plan.rounds;
    section["states_searched"] = plan.statistics.states;
    section["report"] = plan.report;
    if (plan.pipeline) {
      nlohmann::ordered_json stages = nlohmann::ordered_json::array();
      for (std::size_t st = 0; st < plan.pipeline->devices.size(); ++st) {
        std::size_t ops = 0;
        for (int s : plan.pipeline->stage) ops += s == static_cast<int>(st) ? 1 : 0;
        stages.push_back({{"operators", ops}, {"gpus", plan.pipeline->devices[st].size()}});
      }
      section["pipeline"] = {
          {"stages", stages}, {"micro_batches", plan.pipeline->micro_batches}, {"cut_bytes", plan.pipeline->cut_bytes}};
    }
    nlohmann::ordered_json program = nlohmann::ordered_json::array();
    const std::string text = plan.program.describe(*report->graph);
    for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
      program.push_back(text.substr(start, end - start));
    section["program"] = program;
    summary["spmd"] = section;
  }
};

}  // namespace

std::shared_ptr<const WorkloadKind> make_spmd_kind() { return std::make_shared<SpmdKind>(); }

}  // namespace dnnsim
