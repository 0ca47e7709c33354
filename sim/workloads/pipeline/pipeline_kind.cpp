#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <limits>
#include <string_view>

#include "models/common/option_reader.hpp"
#include "planners/schedules/pipeline_estimator.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/resource_guard.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"
#include "sim/workloads/pipeline/llm_keys.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "sim/workloads/replica_window.hpp"

namespace dnnsim {
namespace {

// `schedule: 1f1b` or `schedule: {name: kfkb, group: 2}`: the schedule and its declared options,
// made for the workload's micro-batches so that options checked against them are reported here
// (unless the batch keys were refused or misspelt: `batches_read`, their own errors say why).
void read_schedule(YamlReader& reader, const YAML::Node& node, PipelineWorkloadSpec& spec, bool batches_read) {
  const ScheduleRegistry& schedules = builtin_schedules();
  auto selection = read_entry(reader, node, schedules);
  if (!selection) return;
  spec.schedule = selection->name;
  spec.schedule_options = std::move(selection->options);
  try {
    spec.order = schedules.at(spec.schedule).value(spec.schedule_options, batches_read ? spec.micro_batches : 0);
  } catch (const InputError& error) {
    reader.sink().append(error.diagnostics());
  }
}

// The workload keys a planner that chooses the tensor parallelism chooses: a scenario for it must
// not give them.
constexpr std::array<const char*, 3> kTensorParallelChosen{"tensor_parallel", "sequence_parallel", "recompute"};
constexpr std::array<const char*, 3> kLlmLayoutChosen{"context_parallel", "expert_parallel", "fsdp"};

// `planner: dapple` or `planner: {name: uniform, stages: 4}`.
void read_planner(YamlReader& reader, const YAML::Node& node, PipelineWorkloadSpec& spec) {
  auto selection = read_entry(reader, node, builtin_planners());
  if (!selection) return;
  spec.planner = selection->name;
  spec.planner_options = std::move(selection->options);
}

// The planner's capabilities, or none when the scenario names no planner (or an unknown one).
const Planner* planner_of(const PipelineWorkloadSpec& spec) {
  const PlannerRegistry::Entry* entry = builtin_planners().find(spec.planner);
  return entry == nullptr ? nullptr : entry->value.get();
}

// Explicit stages, in pipeline order: `{layers: N, gpus: N}` (the next N GPUs in cluster order) or
// `{layers: N, devices: [glob, …]}` (GPU names or globs).
void read_stages(YamlReader& reader, const YAML::Node& node, PipelineWorkloadSpec& spec, const Cluster& cluster) {
  const std::vector<std::string> gpus = cluster.gpu_names();
  constexpr std::size_t kFree = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> owner(gpus.size(), kFree);  // the stage that holds each GPU
  std::size_t next_layer = 0;
  bool every_count_read = true;  // else the sum below counts defaults, and the stage's error says why
  DeviceId next_gpu = 0;
  const auto entries = reader.list(node, "stages");
  if (node.IsSequence() && entries.empty()) reader.error(node, "expected at least one stage");
  for (const YAML::Node& entry : entries) {
    MapReader map(reader, entry, "a stage");
    if (!map.valid()) continue;
    PipelineStage stage;
    const std::optional<std::int64_t> read = map.integer("layers", 1, 1 << 20, true);
    every_count_read = every_count_read && read.has_value();
    const std::int64_t layers = read.value_or(1);
    stage.chunks.push_back(LayerRange{next_layer, next_layer + static_cast<std::size_t>(layers)});
    next_layer += static_cast<std::size_t>(layers);
    const bool by_count = map.has("gpus");
    if (by_count == map.has("devices")) {
      map.exactly_one_of(
          {"gpus", "devices"}, entry,
          "give exactly one of 'gpus' (a count: the next GPUs in cluster order) and 'devices' (names or globs)");
    } else if (by_count) {
      const auto count = map.integer("gpus", 1, 1 << 20).value_or(1);
      for (std::int64_t i = 0; i < count; ++i) {
        while (next_gpu < gpus.size() && owner[next_gpu] != kFree) ++next_gpu;
        if (next_gpu >= gpus.size()) {
          if (!gpus.empty())
            reader.error(map.get("gpus"), fmt::format("not enough GPUs: the cluster has {}", gpus.size()));
          break;
        }
        owner[next_gpu] = spec.stages.size();
        stage.devices.push_back(next_gpu);
      }
    } else {
      for (const YAML::Node& pattern : reader.list(map.get("devices"), "GPU names")) {
        const std::string text = pattern.IsScalar() ? pattern.Scalar() : "";
        bool matched = false;
        for (DeviceId g = 0; g < gpus.size(); ++g) {
          if (!glob_match(text, gpus[g])) continue;
          matched = true;
          if (owner[g] == spec.stages.size())
            reader.error(pattern, fmt::format("GPU {} is named twice in this stage", gpus[g]));
          else if (owner[g] != kFree)
            reader.error(pattern, fmt::format("GPU {} already holds stage {}", gpus[g], owner[g]));
          owner[g] = spec.stages.size();
          stage.devices.push_back(g);
        }
        if (!matched)
          reader.error(pattern,
                       fmt::format("no GPU of the cluster matches '{}'{}", text, suggestion_suffix(text, gpus)));
      }
    }
    map.finish();
    spec.stages.push_back(std::move(stage));
  }
  if (every_count_read && !spec.model.layers.empty() && next_layer != spec.model.layers.size() && !entries.empty())
    reader.error(node,
                 fmt::format("the stages hold {} layers but the model has {}", next_layer, spec.model.layers.size()));
}

// `tensor_parallel: 8`, `sequence_parallel: true`, `recompute: none|selective|full`,
// `distributed_optimizer: true` (models/dnn/tensor_parallel.hpp).
void read_tensor_parallel(YamlReader& reader, MapReader& map, PipelineWorkloadSpec& spec, const Cluster& cluster) {
  TensorParallelOptions& options = spec.tensor_parallel;
  spec.tensor_parallel_set = map.has("tensor_parallel") || map.has("sequence_parallel") || map.has("recompute") ||
                             map.has("distributed_optimizer");
  options.degree = static_cast<int>(map.integer("tensor_parallel", 1, 1 << 16).value_or(1));
  options.sequence_parallel = map.boolean("sequence_parallel").value_or(false);
  if (auto recompute = map.choice("recompute", "recomputation", recompute_names()))
    options.recompute = *recompute_from_name(*recompute);
  options.distributed_optimizer = map.boolean("distributed_optimizer").value_or(false);
  if (!spec.tensor_parallel_set) return;
  const YAML::Node where = map.has("tensor_parallel") ? map.get("tensor_parallel") : map.node();
  const std::size_t gpus = cluster.gpu_count();
  if (gpus == 0) return;  // the cluster's own errors say why
  if (static_cast<std::size_t>(options.degree) > gpus)
    reader.error(where, fmt::format("tensor_parallel {} is larger than the cluster's {} GPUs", options.degree, gpus));
  else if (gpus % static_cast<std::size_t>(options.degree) != 0)
    reader.error(where, fmt::format("tensor_parallel {} does not divide the cluster's {} GPUs into groups",
                                    options.degree, gpus));
  if (!spec.model.layers.empty())
    for (const std::string& problem : tensor_parallel_problems(spec.model, std::max(options.degree, 2)))
      if (options.degree > 1 || problem.find("transformer") != std::string::npos) reader.error(where, problem);
  if (options.sequence_parallel && options.degree < 2 && !map.refused("tensor_parallel"))
    reader.error(map.get("sequence_parallel"), "sequence_parallel needs tensor_parallel of at least 2");
  if (options.recompute == Recompute::full && spec.order && spec.order->recompute())
    reader.error(map.get("recompute"),
                 "recompute: full and the schedule's recompute both ask for re-materialization; give one");
  if (spec.order && !spec.order->supports_tensor_parallel())
    reader.error(where, fmt::format("the {} schedule does not support tensor_parallel/recompute keys", spec.schedule));
  if (map.has("stages"))
    reader.error(map.get("stages"),
                 "with tensor-parallel keys, give a planner (stages are then groups of "
                 "tensor_parallel consecutive GPUs)");
}

// `tensor_parallel_fidelity: ranks | group | auto` (group: PipelineWorkload::mirror_ranks), after the
// tensor-parallel keys and the planner. The degree a megatron planner chooses is checked after it;
// `auto` is checked only then, and falls back to every rank instead of failing.
void read_tensor_parallel_fidelity(YamlReader& reader, MapReader& map, PipelineWorkloadSpec& spec,
                                   const Cluster& cluster) {
  using RankFidelity = PipelineWorkloadSpec::RankFidelity;
  const auto fidelity = map.choice("tensor_parallel_fidelity", "tensor-parallel fidelity", {"ranks", "group", "auto"});
  if (fidelity == "auto" || mirrors_by_default(map, "tensor_parallel_fidelity", cluster))
    spec.rank_fidelity = RankFidelity::automatic;
  if (fidelity != "group") return;
  spec.rank_fidelity = RankFidelity::group;
  const YAML::Node where = map.get("tensor_parallel_fidelity");
  const Planner* planner = planner_of(spec);
  const bool explicit_degree = planner == nullptr || !planner->chooses_tensor_parallel();
  if (explicit_degree && spec.tensor_parallel.degree < 2)
    reader.error(where, "tensor_parallel_fidelity: group needs tensor_parallel of at least 2 or the megatron planner");
  for (const std::string& problem :
       mirror_problems(cluster, explicit_degree && spec.tensor_parallel.degree >= 2 ? spec.tensor_parallel.degree : 0))
    reader.error(where, problem);
}

PipelineWorkloadSpec read_pipeline(YamlReader& reader, MapReader& map, const Cluster& cluster) {
  PipelineWorkloadSpec spec;
  spec.where = reader.where(map.node());
  if (YAML::Node model = map.require("model"); model.IsDefined())
    spec.model = read_layer_model(reader, model, "the model");
  const TrainingOptions training = read_training_options(map, cluster);
  assign_training_options(training, spec);
  const auto micro_batches = map.integer("micro_batches", 1, 1 << 20);
  const auto micro_batch_size = map.integer("micro_batch_size", 1, 1 << 30);
  const bool batch_read = !map.refused("global_batch");  // else its error is the one to read
  if (const bool has_m = map.has("micro_batches"); has_m == map.has("micro_batch_size")) {
    map.exactly_one_of({"micro_batches", "micro_batch_size"}, map.node(),
                       "give exactly one of 'micro_batches' (M) and 'micro_batch_size' (global_batch / M)");
  } else if (micro_batches) {
    spec.micro_batches = static_cast<int>(*micro_batches);
    if (batch_read && spec.global_batch % spec.micro_batches != 0)
      reader.error(map.get("micro_batches"), fmt::format("global_batch {} is not a multiple of micro_batches {}",
                                                         spec.global_batch, spec.micro_batches));
  } else if (micro_batch_size) {
    if (batch_read && spec.global_batch % *micro_batch_size != 0)
      reader.error(map.get("micro_batch_size"), fmt::format("global_batch {} is not a multiple of micro_batch_size {}",
                                                            spec.global_batch, *micro_batch_size));
    spec.micro_batches = std::max(1, spec.global_batch / static_cast<int>(*micro_batch_size));
  }
  spec.framework_overhead = map.quantity<Bytes>("framework_overhead").value_or(Bytes(0));
  const bool batches_read = batch_read && !map.refused("micro_batches") && !map.refused("micro_batch_size") &&
                            (micro_batches || micro_batch_size);
  if (YAML::Node schedule = map.require("schedule"); schedule.IsDefined())
    read_schedule(reader, schedule, spec, batches_read);
  read_tensor_parallel(reader, map, spec, cluster);
  // The LLM keys lay the model out as Megatron-Core does (tensor parallel 1 when not given).
  if (read_llm_parallelism(reader, map, spec, cluster)) spec.tensor_parallel_set = true;
  const bool has_planner = map.has("planner");
  const bool has_stages = map.has("stages");
  if (has_planner == has_stages)
    map.exactly_one_of({"planner", "stages"}, map.node(),
                       "give exactly one of 'planner' (a name of `dnnsim list planners`) and 'stages' (explicit)");
  if (has_planner) read_planner(reader, map.get("planner"), spec);
  if (has_stages) read_stages(reader, map.get("stages"), spec, cluster);
  // A planner whose cost model prices the data-parallel all-reduce after the pipeline (Megatron-LM's
  // default) has its plans run that way unless the scenario says otherwise.
  const Planner* planner = planner_of(spec);
  spec.overlap = training.overlap.value_or(planner == nullptr || planner->overlaps_all_reduce());
  read_tensor_parallel_fidelity(reader, map, spec, cluster);
  // data_parallel_fidelity (sim/workloads/replica_window.hpp): the plan's layout is checked after
  // planning, where `auto` falls back to every replica instead of failing.
  spec.replica_fidelity = read_replica_fidelity(reader, map, cluster, spec.collective_algorithm);
  // An unknown planner (reported where it is named), or neither planner nor stages (reported above), is
  // not held against `chunks: auto`.
  const bool planner_unknown = (has_planner && planner == nullptr) || has_planner == has_stages;
  if (spec.order && spec.order->planner_chooses_chunks() && !planner_unknown &&
      (planner == nullptr || !planner->chooses_chunks())) {
    std::vector<std::string> choosers;
    for (const auto& entry : builtin_planners().entries())
      if (entry.value->chooses_chunks()) choosers.push_back(entry.name);
    reader.error(map.get("schedule")["chunks"],
                 fmt::format("'chunks: auto' lets a planner that chooses the chunks per stage ({}) choose them; give a "
                             "number with {}",
                             fmt::join(choosers, ", "),
                             spec.planner.empty() ? std::string("explicit stages") : "planner '" + spec.planner + "'"));
  }
  const auto refuse_chosen = [&](const auto& keys) {
    for (const char* key : keys)
      if (map.has(key))
        reader.error(map.get(key),
                     fmt::format("the {} planner chooses '{}'; remove it or give another planner", spec.planner, key));
  };
  if (planner != nullptr && planner->chooses_llm_layout()) refuse_chosen(kLlmLayoutChosen);
  if (planner != nullptr && planner->chooses_context_comm(spec.planner_options))
    for (const char* key : {"context_parallel_comm", "hierarchical_context_parallel_sizes"})
      if (map.has(key))
        reader.error(map.get(key), fmt::format("the {} planner's option context_comm: search chooses '{}'; remove one "
                                               "of the two",
                                               spec.planner, key));
  if (planner != nullptr && planner->chooses_tensor_parallel()) {
    refuse_chosen(kTensorParallelChosen);
    if (map.has("tensor_parallel") || map.has("sequence_parallel") || map.has("recompute")) return spec;
    spec.tensor_parallel_set = false;  // distributed_optimizer alone: read by the planner
  }
  if (planner != nullptr && !spec.model.layers.empty())
    if (const std::string problem = planner->model_problem(spec.model); !problem.empty())
      reader.error(map.get("planner"), fmt::format("the {} planner {}", spec.planner, problem));
  return spec;
}

// The plan as numbers expectations can check ("pipeline.stage_count", "pipeline.stages.0.layers").
nlohmann::ordered_json pipeline_summary(const PipelineRunReport& report,
                                        const std::vector<std::string>& all_gpu_names) {
  const DeviceNames gpu_names = report.device_names(all_gpu_names);
  nlohmann::ordered_json section;
  section["planner"] = report.planner;
  section["schedule"] = report.schedule;
  section["activation_memory"] = report.activation_memory;
  section["feasible"] = report.plan.feasible;
  if (!report.plan.feasible) {
    section["reason"] = report.plan.reason;
    return section;
  }
  const PipelinePlan& plan = report.plan.plan;
  section["plan"] = plan.describe(gpu_names);
  section["stage_count"] = plan.stages.size();
  section["micro_batches"] = plan.micro_batches;
  section["micro_batch_size"] = plan.micro_batch_size();
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const PipelineStage& stage : plan.stages) {
    nlohmann::ordered_json entry;
    std::size_t layers = 0;
    nlohmann::ordered_json chunks = nlohmann::ordered_json::array();
    for (const LayerRange& range : stage.chunks) {
      layers += range.size();
      chunks.push_back({range.begin, range.end});
    }
    entry["layers"] = layers;
    entry["chunks"] = chunks;
    entry["gpus"] = stage.devices.size();
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (DeviceId d : stage.devices) devices.push_back(gpu_names.name(d));
    entry["devices"] = devices;
    stages.push_back(entry);
  }
  section["stages"] = stages;
  if (report.tensor_parallel) {
    section["tensor_parallel"] = report.tensor_parallel->degree;
    section["sequence_parallel"] = report.tensor_parallel->sequence_parallel;
    section["recompute"] = recompute_name(report.tensor_parallel->recompute);
    section["distributed_optimizer"] = report.tensor_parallel->distributed_optimizer;
    section["data_parallel"] = plan.stages.front().devices.size();
    if (report.context_parallel > 1) section["context_parallel"] = report.context_parallel;
    if (const auto& layout = report.plan.llm_layout) section["layout"] = layout->describe;
    section["tensor_parallel_fidelity"] = report.mirror_ranks ? "group" : "ranks";
    if (!report.all_ranks_because.empty()) section["tensor_parallel_fidelity_reason"] = report.all_ranks_because;
  }
  if (report.replica_window > 0 || !report.all_replicas_because.empty()) {  // data_parallel_fidelity asked
    section["data_parallel_fidelity"] = report.replica_window > 0 ? "window" : "replicas";
    if (report.replica_window > 0) section["data_parallel_window"] = report.replica_window;
    if (!report.all_replicas_because.empty()) section["data_parallel_fidelity_reason"] = report.all_replicas_because;
  }
  if (!report.search_stopped.empty()) section["search_stopped"] = report.search_stopped;
  section["cost_model"] = report.plan.cost_model;
  section["predicted_iteration_time_s"] = report.plan.predicted_iteration_time.value();
  if (report.planner != "explicit") section["candidates_scored"] = report.plan.statistics.candidates;
  if (!report.choices.empty()) {
    nlohmann::ordered_json choices = nlohmann::ordered_json::array();
    for (const PipelineRunReport::Choice& choice : report.choices) {
      nlohmann::ordered_json predictions = nlohmann::ordered_json::object();
      for (const auto& [k, seconds] : choice.predicted_s) predictions[std::to_string(k)] = seconds;
      choices.push_back({{"group_size", choice.group_size}, {"predicted_s", predictions}});
    }
    section["group_size_per_iteration"] = choices;
  }
  return section;
}

class PipelineKind final : public WorkloadKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    return std::make_shared<PipelineWorkloadSpec>(read_pipeline(ctx.reader, ctx.map, ctx.cluster));
  }

  // Explicit stages are lowered; a planner is not run (a search can take minutes): `dnnsim plan` runs it.
  std::string check(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<PipelineWorkloadSpec>();
    if (!spec.planner.empty()) {
      return fmt::format("ok ({} GPUs, {} layers; planner {} not run: `dnnsim plan` runs it)",
                         scenario.cluster.gpu_count(), spec.model.layers.size(), spec.planner);
    }
    const PipelineSetup setup = plan_pipeline(scenario, spec);
    if (!setup.report.plan.feasible) return fmt::format("ok, but no feasible plan: {}", setup.report.plan.reason);
    require_mirroring(setup, spec);
    const TaskGraph graph =
        build_pipeline(setup.workload, *setup.schedule, scenario.cluster.gpu_names(), scenario.run.iterations);
    return fmt::format("ok ({} GPUs, {} tasks)", scenario.cluster.gpu_count(), graph.tasks().size());
  }

  // The plan's graph under its fixed schedule (Ada-Grouper's first group size for every iteration);
  // an infeasible plan is a reported result with nothing to simulate. With a planner, nothing here
  // (a search can take minutes). run() does not ask: it plans once and guards the planned graph.
  std::optional<WorkloadSize> size(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<PipelineWorkloadSpec>();
    if (!spec.planner.empty()) return std::nullopt;
    const PipelineSetup setup = plan_pipeline(scenario, spec);
    if (!setup.report.plan.feasible) return std::nullopt;
    require_mirroring(setup, spec);
    return size_of(scenario, build_pipeline(setup.workload, *setup.schedule, scenario.cluster.gpu_names(),
                                            scenario.run.iterations));
  }

  [[nodiscard]] bool lowers_to_one_graph() const override { return true; }

  // The plan under its (fixed) schedule.
  std::optional<TaskGraph> lower(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<PipelineWorkloadSpec>();
    const PipelineSetup setup = plan_pipeline(scenario, spec);
    if (!setup.report.plan.feasible)
      throw InfeasiblePlan(spec.where, fmt::format("no feasible plan: {}", setup.report.plan.reason));
    require_mirroring(setup, spec);
    return build_pipeline(setup.workload, *setup.schedule, scenario.cluster.gpu_names(), scenario.run.iterations);
  }

  // Under Ada-Grouper, a controller re-plans the group size before every iteration.
  SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const override {
    const auto& spec = *scenario.workload_as<PipelineWorkloadSpec>();
    // A planner's search shows its progress like the simulation after it (sim/run/progress).
    // Its memory is bounded by run.memory_budget as the simulation's is: over it, the search stops
    // with the best plan so far, and the report says so.
    SearchProgress progress(options.progress != nullptr ? *options.progress : std::cerr,
                            options.progress == &std::cerr && ::isatty(STDERR_FILENO) != 0,
                            fmt::format("planning ({})", spec.planner), std::nullopt);
    progress.stop_above(memory_budget(scenario));
    const bool show = options.progress != nullptr && !spec.planner.empty();
    PipelineSetup setup = plan_pipeline(scenario, spec, [&](double fraction) {
      // Quiet without a progress stream: its lines go nowhere, its stops still apply.
      return show ? progress(fraction) : progress.within_limits(fraction);
    });
    if (show) progress.finish();
    setup.report.search_stopped = progress.stop_reason();
    if (!setup.report.search_stopped.empty() && options.progress != nullptr)
      *options.progress << fmt::format("planning stopped ({}): the best plan found so far runs\n",
                                       setup.report.search_stopped);
    if (!setup.report.plan.feasible) {
      SimulationResult result;
      result.gpu_names = scenario.cluster.gpu_names();
      result.infeasible_reason = setup.report.plan.reason;
      result.workload_result = std::make_shared<PipelineRunReport>(std::move(setup.report));
      return result;
    }
    require_mirroring(setup, spec);
    // Re-lowered before every iteration: Ada-Grouper's k, or critical-path's order for measured times.
    const ScheduleAdaptation adaptation = spec.order->adaptation();
    const bool adaptive = adaptation.kind != ScheduleAdaptation::Kind::none;
    // The plan under its fixed schedule: what runs (simulate() applies the guard to it), or when
    // re-lowered every iteration what the guard sizes, every iteration at once.
    TaskGraph fixed =
        build_pipeline(setup.workload, *setup.schedule, scenario.cluster.gpu_names(), scenario.run.iterations);
    std::optional<ResourceEstimate> estimate;
    if (adaptive) {
      estimate = check_graph_resources(scenario, fixed);
      fixed = TaskGraph();  // not simulated: its memory is the controlled run's
    }
    SimulationResult result;
    if (adaptation.kind == ScheduleAdaptation::Kind::group_size) {
      auto choices = std::make_shared<std::vector<PipelineRunReport::Choice>>();
      ControlledRun ada = start_ada_grouper(scenario, adaptation.group_candidates, setup, choices);
      SimulationOptions controlled = options;
      controlled.controller = std::move(ada.controller);
      result = simulate(scenario, std::move(ada.graph), controlled);
      setup.report.choices = std::move(*choices);
    } else if (adaptive) {
      ControlledRun run = start_measured_ordering(scenario, setup);
      SimulationOptions controlled = options;
      controlled.controller = std::move(run.controller);
      result = simulate(scenario, std::move(run.graph), controlled);
    } else {
      result = simulate(scenario, std::move(fixed), options);
    }
    result.workload_result = std::make_shared<PipelineRunReport>(std::move(setup.report));
    if (estimate) result.estimated_memory_bytes = estimate->memory.value();
    return result;
  }

  std::vector<SummaryField> summary_fields() const override {
    constexpr FieldType text = FieldType::text;
    return {{"pipeline.planner", text},
            {"pipeline.schedule", text},
            {"pipeline.activation_memory", text},
            {"pipeline.feasible", text},
            {"pipeline.reason", text},
            {"pipeline.plan", text},
            {"pipeline.stage_count"},
            {"pipeline.micro_batches"},
            {"pipeline.micro_batch_size"},
            {"pipeline.stages.#.layers"},
            {"pipeline.stages.#.chunks.#.#"},
            {"pipeline.stages.#.gpus"},
            {"pipeline.stages.#.devices.#", text},
            {"pipeline.tensor_parallel"},
            {"pipeline.sequence_parallel", text},
            {"pipeline.recompute", text},
            {"pipeline.distributed_optimizer", text},
            {"pipeline.data_parallel"},
            {"pipeline.context_parallel"},
            {"pipeline.layout", text},
            {"pipeline.tensor_parallel_fidelity", text},
            {"pipeline.tensor_parallel_fidelity_reason", text},
            {"pipeline.data_parallel_fidelity", text},
            {"pipeline.data_parallel_window"},
            {"pipeline.data_parallel_fidelity_reason", text},
            {"pipeline.search_stopped", text},
            {"pipeline.cost_model", text},
            {"pipeline.predicted_iteration_time_s"},
            {"pipeline.candidates_scored"},
            {"pipeline.group_size_per_iteration.#.group_size"},
            {"pipeline.group_size_per_iteration.#.predicted_s.*"}};
  }

  void add_to_summary(const Scenario&, const SimulationResult& result, nlohmann::ordered_json& summary) const override {
    if (const auto* report = dynamic_cast<const PipelineRunReport*>(result.workload_result.get()))
      summary["pipeline"] = pipeline_summary(*report, result.gpu_names);
  }

  // Each GPU holds the states of its stage's layers (stage_model_state_bytes of the lowering): one
  // tensor-parallel shard, the optimizer state divided over the replicas with the distributed optimizer.
  std::vector<MemoryBreakdown> model_state_memory(const Scenario& scenario,
                                                  const SimulationResult& result) const override {
    const auto* report = dynamic_cast<const PipelineRunReport*>(result.workload_result.get());
    if (report == nullptr || !report->plan.feasible) return {};
    const auto& spec = *scenario.workload_as<PipelineWorkloadSpec>();
    const PipelineWorkload workload =
        make_pipeline_workload(with_planned_layout(spec, report->plan), report->plan.plan, report->tensor_parallel);
    const int ranks = workload.ranks();
    std::vector<MemoryBreakdown> memory(result.graph.devices().size());
    // An asynchronous schedule's stashed weight versions (pipeline_lowering.hpp): the stage's peak
    // in flight over the whole run.
    const auto& schedule = spec.order;
    const PipelineShape run{static_cast<int>(report->plan.plan.stages.size()),
                            report->plan.plan.micro_batches * scenario.run.iterations, 1};
    for (std::size_t s = 0; s < report->plan.plan.stages.size(); ++s) {
      const PipelineStage& stage = report->plan.plan.stages[s];
      double parameters = 0;
      for (const LayerRange& range : stage.chunks)
        for (std::size_t l = range.begin; l < range.end; ++l)
          parameters += workload.model.layers[l].parameter_bytes.value() / kProfileBytesPerParameter;
      MemoryBreakdown states = model_states(parameters, spec.precision, spec.optimizer);
      if (workload.llm.any()) {
        // An LLM's precision recipe and sharding (stage_model_state_bytes, llm_model_states): FSDP divides
        // every state, the distributed optimizer the optimizer's, over the data-parallel × context ranks,
        // the routed experts' over the expert data-parallel ones.
        const ModelStates llm = stage_llm_model_states(workload, s);
        states.weights = llm.weights;
        states.gradients = llm.gradients;
        states.optimizer_state = llm.optimizer_state;
      } else if (workload.tensor_parallel.distributed_optimizer) {
        states.optimizer_state = states.optimizer_state / static_cast<double>(stage.devices.size());
      }
      if (schedule->asynchronous())
        states.stashed_weights =
            states.weights * stashed_weight_versions(peak_in_flight(schedule->stage_order(static_cast<int>(s), run)),
                                                     static_cast<int>(stage.devices.size()));
      for (DeviceId group : stage.devices)
        for (int r = 0; r < ranks; ++r)
          if (const std::size_t d = group * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(r);
              d < memory.size())
            memory[d] = states;
    }
    return memory;
  }
};

}  // namespace

std::shared_ptr<const WorkloadKind> make_pipeline_kind() { return std::make_shared<PipelineKind>(); }

ScenarioTreeEdit replace_planner(std::string name) {
  return [name = std::move(name)](YAML::Node& root) {
    // Looked up through const handles, so that nothing is created; a missing key's node is invalid
    // and may only be asked IsDefined.
    const auto is_map = [](const YAML::Node& node) { return node.IsDefined() && node.IsMap(); };
    const YAML::Node& tree = root;
    if (!is_map(tree) || !is_map(tree["workload"])) return;
    YAML::Node workload = root["workload"];
    workload.remove("stages");
    const PlannerRegistry::Entry* entry = builtin_planners().find(name);
    if (entry != nullptr && entry->value->chooses_tensor_parallel())
      for (const char* key : kTensorParallelChosen) workload.remove(key);
    if (entry != nullptr && entry->value->chooses_llm_layout())
      for (const char* key : kLlmLayoutChosen) workload.remove(key);
    const YAML::Node& given = workload;
    if (is_map(given["planner"])) {
      YAML::Node planner = workload["planner"];
      planner["name"] = name;
      std::vector<std::string> dropped;
      for (const auto& option : planner)
        if (const std::string key = option.first.Scalar();
            key != "name" && (entry == nullptr || entry->options->find(key) == nullptr))
          dropped.push_back(key);
      for (const std::string& key : dropped) planner.remove(key);
    } else {
      workload["planner"] = name;
    }
  };
}

}  // namespace dnnsim
