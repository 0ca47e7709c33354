#include "sim/workloads/pipeline/pipeline_workload.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "planners/parallel/stage_cost.hpp"
#include "planners/schedules/ada_grouper.hpp"
#include "planners/schedules/critical_path.hpp"
#include "planners/schedules/pipeline_estimator.hpp"
#include "sim/scenario/cluster_view_builder.hpp"

namespace dnnsim {

PipelineWorkload make_pipeline_workload(const PipelineWorkloadSpec& spec, const PipelinePlan& plan,
                                        const std::optional<TensorParallelOptions>& tensor_parallel) {
  PipelineWorkload workload{spec.model, plan, spec.dtype, spec.precision, spec.optimizer, spec.collective_algorithm};
  workload.overlap_all_reduce = spec.overlap;
  workload.bucket_size = spec.bucket_size;
  if (tensor_parallel) {
    workload.transformer = transformer_shape(spec.model);
    workload.tensor_parallel = *tensor_parallel;
    workload.llm = spec.llm;
    workload.model = shard_for_llm(spec.model, *tensor_parallel, spec.llm, spec.recompute_modules);
  }
  return workload;
}

std::vector<std::string> mirror_problems(const Cluster& cluster, int degree) {
  std::vector<std::string> problems;
  const auto refuse = [&](std::string why) {
    problems.push_back(
        "tensor_parallel_fidelity: group is exact only when the mirrored ranks share no link with "
        "rank 0's traffic, but " +
        std::move(why));
  };
  std::vector<bool> used(cluster.node_types.size(), false);
  for (const NodeInstance& node : cluster.nodes) used[node.type] = true;
  for (std::size_t t = 0; t < cluster.node_types.size(); ++t) {
    if (!used[t]) continue;
    const NodeType& type = cluster.node_types[t];
    if (!type.nic_per_gpu && cluster.nodes.size() > 1)
      refuse(fmt::format("node type '{}' has one NIC for its GPUs (give nic: {{per_gpu: true}})", type.name));
    if (type.fabric == IntraNodeFabric::pcie)
      refuse(fmt::format("node type '{}' joins its GPUs over PCIe, the path to its NICs", type.name));
    // A group of whole nodes (tensor × context parallel across nodes) is as symmetric as one node.
    if (degree > 0 && degree % type.gpus_per_node != 0)
      refuse(fmt::format("a tensor-parallel group of {} GPUs does not fill a node of type '{}' ({} GPUs)", degree,
                         type.name, type.gpus_per_node));
  }
  if (cluster.nodes.size() > 1 && !one_non_blocking_switch(cluster))
    refuse("the interconnect is not one non-blocking switch (a backplane or spine links are shared by all ranks)");
  return problems;
}

ReplicaWindow replica_window(const Cluster& cluster, const PipelinePlan& plan, int ranks,
                             const std::string& collective_algorithm) {
  std::vector<std::vector<DeviceId>> stages;
  for (const PipelineStage& stage : plan.stages) stages.push_back(stage.devices);
  return replica_window(cluster, stages, ranks, plan.micro_batch_size(), collective_algorithm, "a micro-batch");
}

PipelineWorkloadSpec with_planned_layout(const PipelineWorkloadSpec& spec, const PlanResult& plan) {
  PipelineWorkloadSpec chosen = spec;
  if (const auto& layout = plan.llm_layout) {
    chosen.llm.context = layout->context;
    chosen.llm.expert = layout->expert;
    chosen.llm.fsdp = layout->fsdp;
    chosen.llm.context_comm = layout->context_comm;
    chosen.llm.context_a2a = layout->context_a2a;
  }
  return chosen;
}

std::shared_ptr<PipelineWorkloadSpec> plannable_spec(Scenario& scenario) {
  const auto* given = scenario.workload_as<PipelineWorkloadSpec>();
  if (given == nullptr)
    throw InputError(SourceLocation{scenario.file, 0, 0},
                     "dnnsim.plan needs a pipeline workload (workload.kind: pipeline, docs/pipeline.md)");
  auto spec = std::make_shared<PipelineWorkloadSpec>(*given);
  scenario.workload = spec;
  return spec;
}

PipelineSetup plan_pipeline(const Scenario& scenario, const PipelineWorkloadSpec& spec,
                            std::function<bool(double fraction)> progress) {
  PipelineSetup setup;
  const PlannerRegistry::Entry* planner =
      spec.planner.empty() ? nullptr : &builtin_planners().at(spec.planner, spec.where);
  const bool chooses_tensor_parallel = planner != nullptr && planner->value->chooses_tensor_parallel();
  if (spec.tensor_parallel_set) setup.report.tensor_parallel = spec.tensor_parallel;
  setup.report.schedule = spec.schedule;
  setup.report.activation_memory = describe_activation_sources(spec.model);
  setup.schedule = spec.order;
  int context = std::max(1, spec.llm.context);
  std::optional<PipelineWorkloadSpec> chosen;  // the spec with a planner's LLM layout
  setup.report.context_parallel = context;

  PlanRequest request;
  const bool sharded = spec.tensor_parallel_set && !chooses_tensor_parallel;
  request.model =
      sharded ? shard_for_llm(spec.model, spec.tensor_parallel, spec.llm, spec.recompute_modules) : spec.model;
  const ClusterView all_gpus = make_cluster_view(scenario.cluster, make_layout(scenario.cluster));
  request.cluster = sharded ? group_devices(all_gpus, spec.tensor_parallel.degree * context) : all_gpus;
  if (chooses_tensor_parallel && spec.tensor_parallel.distributed_optimizer) request.memory.zero = ZeroStage::optimizer;
  if (sharded && spec.model.transformer) {
    // An LLM's model states as its recipe stores them, sharded as Megatron shards them.
    request.memory.per_parameter = spec.llm.precision.bytes_per_parameter();
    if (spec.tensor_parallel.distributed_optimizer) request.memory.zero = ZeroStage::optimizer;
    if (spec.llm.fsdp) request.memory.zero = ZeroStage::parameters;
    request.check_memory = false;
  }
  request.global_batch = spec.global_batch;
  request.micro_batches = spec.micro_batches;
  request.dtype = spec.dtype;
  request.memory.precision = spec.precision;
  request.memory.optimizer = spec.optimizer;
  request.memory.recompute =
      setup.schedule->recompute() || (spec.tensor_parallel_set && spec.tensor_parallel.recompute == Recompute::full);
  request.memory.framework_overhead = spec.framework_overhead;
  if (sharded && spec.tensor_parallel.recompute == Recompute::full) {
    // Megatron checkpoints each block's input (2·s·h per sequence, /t with SP), not every sub-layer's;
    // the layers outside the blocks (embedding, final norm, head, loss) keep their activations.
    const TransformerShape shape = *transformer_shape(spec.model);
    const auto [first, last] = checkpointed_span(request.model, 0, request.model.layers.size());
    for (std::size_t l = 0; l < request.model.layers.size(); ++l) {
      const Layer& layer = request.model.layers[l];
      request.memory.layer_input_bytes.push_back(l < first || l >= last ? layer.activation_bytes
                                                 : layer.kind == LayerKind::attention
                                                     ? recompute_checkpoint_bytes(shape, 1, spec.tensor_parallel)
                                                     : Bytes(0));
    }
  }
  request.overlap_all_reduce = spec.overlap;
  request.bucket_size = spec.bucket_size;
  request.schedule = setup.schedule;
  request.options = spec.planner_options;
  request.chunks_per_stage = setup.schedule->chunks();
  request.choose_chunks = setup.schedule->planner_chooses_chunks();
  if (std::vector<std::size_t> blocks = block_boundaries(request.model);
      blocks.size() < request.model.layers.size() + 1)
    request.boundaries = std::move(blocks);
  request.progress = std::move(progress);
  request.llm = spec.llm;
  request.recompute_modules = spec.recompute_modules;
  const std::shared_ptr<const PipelineSchedule> schedule = setup.schedule;
  request.in_flight = [schedule](int stage, int stages, int micro_batches, int chunks) {
    const PipelineShape shape{stages, micro_batches, chunks};
    // Chunk-micro-batches in flight, as whole micro-batches (a chunk holds 1/v of a stage's activations).
    const auto in_flight = [&](const PipelineSchedule& order) {
      return (peak_in_flight(order.stage_order(stage, shape)) + chunks - 1) / chunks;
    };
    if (chunks == schedule->chunks()) return in_flight(*schedule);
    return in_flight(*schedule->with_chunks(chunks).schedule);  // a v a planner tries (choose_chunks)
  };

  if (spec.planner.empty()) {
    setup.report.planner = "explicit";
    PlanResult& result = setup.report.plan;
    result.plan.stages = spec.stages;
    result.plan.global_batch = spec.global_batch;
    result.plan.micro_batches = spec.micro_batches;
    const std::vector<std::string> problems =
        result.plan.problems(spec.model.layers.size(), setup.report.device_names(scenario.cluster.gpu_names()).size());
    if (!problems.empty()) {
      std::vector<Diagnostic> diagnostics;
      for (const std::string& problem : problems) diagnostics.push_back(Diagnostic{spec.where, problem});
      throw InputError(std::move(diagnostics));
    }
    // The planners' own score of the given stages, so that `dnnsim plan` can set a hand-made plan
    // beside a planner's under one cost model; memory is left to the simulation to measure.
    const StageCostModel cost(request);
    result.predicted_iteration_time = evaluate_plan(cost, result.plan).latency;
    result.cost_model =
        result.plan.chunks_per_stage() > 1 ? "DAPPLE Formula 2 over the virtual stages (a bound)" : "DAPPLE Formula 2";
    // And the pipeline estimator's time, which the re-ranking planners choose by, to set beside
    // theirs, when the schedule can run the plan (otherwise the check below reports it).
    const PipelineShape shape{static_cast<int>(result.plan.stages.size()), result.plan.micro_batches, 1};
    if (result.plan.chunks_per_stage() == 1 && setup.schedule->chunks() == 1 &&
        setup.schedule->unsupported(shape).empty()) {
      std::vector<StageSpec> stages;
      for (const PipelineStage& stage : result.plan.stages) stages.push_back(StageSpec{stage.chunks[0], stage.devices});
      result.reranked.push_back(
          PlanResult::RankedPlan{result.plan, result.predicted_iteration_time, estimate_synchronous(cost, stages)});
    }
    result.feasible = true;
  } else {
    setup.report.planner = spec.planner;
    setup.report.plan = planner->value->plan(request);
    if (const auto& layout = setup.report.plan.llm_layout) {
      chosen = with_planned_layout(spec, setup.report.plan);
      context = layout->context;
      setup.report.context_parallel = context;
    }
    if (setup.report.plan.tensor_parallel) {
      setup.report.tensor_parallel = setup.report.plan.tensor_parallel;
      setup.report.tensor_parallel->distributed_optimizer = spec.tensor_parallel.distributed_optimizer;
    }
  }
  const PipelineWorkloadSpec& run = chosen ? *chosen : spec;

  if (!setup.report.plan.feasible) return setup;
  const PipelinePlan& plan = setup.report.plan.plan;
  if (setup.report.tensor_parallel && spec.model.transformer) {
    const int stage_gpus =
        static_cast<int>(plan.stages.front().devices.size()) * setup.report.tensor_parallel->degree * context;
    std::vector<Diagnostic> diagnostics;
    for (std::string& problem :
         llm_parallel_problems(run.model, run.llm, setup.report.tensor_parallel->degree, stage_gpus))
      diagnostics.push_back(Diagnostic{spec.where, std::move(problem)});
    if (run.llm.offloaded_layers > 0 && plan.stages.size() > 1)
      diagnostics.push_back(
          Diagnostic{spec.where,
                     fmt::format("activation_offload_layers needs a single pipeline stage (Megatron-Core: \"no support "
                                 "for Pipeline parallelism with CPU offloading\"); the plan has {}",
                                 plan.stages.size())});
    if (!diagnostics.empty()) throw InputError(std::move(diagnostics));
  }
  if (setup.schedule->planner_chooses_chunks() && plan.chunks_per_stage() != setup.schedule->chunks()) {
    RechunkedSchedule chosen = setup.schedule->with_chunks(plan.chunks_per_stage());
    setup.schedule = std::move(chosen.schedule);
    setup.report.schedule = std::move(chosen.name);
  }
  const PipelineShape shape{static_cast<int>(plan.stages.size()), plan.micro_batches, plan.chunks_per_stage()};
  if (const std::string why = setup.schedule->unsupported(shape); !why.empty())
    throw InputError(spec.where,
                     fmt::format("schedule '{}' cannot run the plan ({}): {}", spec.schedule,
                                 plan.describe(setup.report.device_names(scenario.cluster.gpu_names())), why));
  if (shape.chunks != setup.schedule->chunks())
    throw InputError(spec.where, fmt::format("schedule '{}' needs {} model chunks per stage but the plan has {}",
                                             spec.schedule, setup.schedule->chunks(), shape.chunks));
  if (setup.schedule->orders_by_time()) {
    // Ordered for the plan's predicted times, under the model the planners cost it with (the 3D
    // planner's tensor parallelism applied, as the lowering will).
    if (chooses_tensor_parallel && setup.report.tensor_parallel) {
      request.model = shard_for_tensor_parallel(spec.model, *setup.report.tensor_parallel);
      request.cluster = group_devices(all_gpus, setup.report.tensor_parallel->degree);
    }
    std::vector<StageSpec> stages;
    for (const PipelineStage& stage : plan.stages) stages.push_back(StageSpec{stage.chunks.at(0), stage.devices});
    setup.schedule = bind_timings(setup.schedule, predicted_timings(StageCostModel(request), stages));
  }
  setup.workload = make_pipeline_workload(run, plan, setup.report.tensor_parallel);
  if (setup.report.tensor_parallel) setup.workload.gpus = all_gpus.devices;
  // The megatron planner's degree is known only now (the parser checked the cluster); at degree 1
  // there is nothing to mirror.
  using RankFidelity = PipelineWorkloadSpec::RankFidelity;
  if (spec.rank_fidelity != RankFidelity::ranks && setup.workload.ranks() > 1) {
    std::vector<std::string> problems = mirror_problems(scenario.cluster, setup.workload.ranks());
    // `group`: refused by the parser (network_unsupported).
    if (std::string why = network_breaks_mirroring(scenario.network, "GPUs'"); !why.empty())
      problems.push_back(std::move(why));
    setup.workload.mirror_ranks = setup.report.mirror_ranks = problems.empty();
    if (spec.rank_fidelity == RankFidelity::group)
      setup.mirror_problems = std::move(problems);
    else if (!problems.empty())
      setup.report.all_ranks_because = problems.front();
  }
  if (spec.replica_fidelity != ReplicaFidelity::replicas) {
    ReplicaWindow window =
        replica_window(scenario.cluster, plan, setup.workload.ranks(), setup.workload.collective_algorithm);
    // `window`: refused by the parser (network_unsupported).
    if (std::string why = network_breaks_mirroring(scenario.network, "replicas'"); !why.empty())
      window.problems.push_back(std::move(why));
    if (window.problems.empty())
      setup.workload.replica_window = setup.report.replica_window = window.replicas;
    else if (spec.replica_fidelity == ReplicaFidelity::window)
      setup.window_problems = std::move(window.problems);
    else
      setup.report.all_replicas_because = window.problems.front();
  }
  return setup;
}

void require_mirroring(const PipelineSetup& setup, const PipelineWorkloadSpec& spec) {
  if (setup.mirror_problems.empty() && setup.window_problems.empty()) return;
  std::vector<Diagnostic> diagnostics;
  for (const std::string& problem : setup.mirror_problems)
    diagnostics.push_back(Diagnostic{spec.where, fmt::format("the plan's tensor parallel {}: {} (give "
                                                             "tensor_parallel_fidelity: ranks to simulate it)",
                                                             setup.workload.ranks(), problem)});
  for (const std::string& problem : setup.window_problems)
    diagnostics.push_back(Diagnostic{
        spec.where, window_refused(problem) + " (give data_parallel_fidelity: replicas to simulate every replica)"});
  throw InputError(std::move(diagnostics));
}

ControlledRun start_ada_grouper(const Scenario& scenario, const std::vector<int>& candidates,
                                const PipelineSetup& setup,
                                std::shared_ptr<std::vector<PipelineRunReport::Choice>> choices) {
  struct State {
    PipelineWorkload workload;
    PipelineShape shape;
    std::vector<int> candidates;
    std::vector<DeviceMemoryDemand> demand;
    std::vector<Bytes> capacity;
    int iterations = 1;
    LoweredIteration current;
  };
  auto state = std::make_shared<State>();
  state->workload = setup.workload;
  state->shape = setup.workload.shape();
  state->candidates = candidates;
  if (state->candidates.empty())
    for (int k = 1; k <= state->shape.micro_batches; ++k) state->candidates.push_back(k);
  state->iterations = scenario.run.iterations;
  const std::vector<std::string> gpus = scenario.cluster.gpu_names();
  state->demand = pipeline_memory_demand(state->workload, gpus.size());
  const std::vector<std::uint32_t> node_of_gpu = scenario.cluster.node_of_gpu();
  for (std::size_t g = 0; g < gpus.size(); ++g)
    state->capacity.push_back(scenario.cluster.type_of(scenario.cluster.nodes[node_of_gpu[g]]).gpu.memory);

  const auto fits = [state](int k) {
    return fits_capacity(kfkb_peak_memory(state->demand, state->shape, k), state->capacity);
  };
  const auto lower = [state](TaskGraph& graph, int k, std::uint32_t iteration) {
    state->current = lower_pipeline_iteration(graph, state->workload, *make_group_schedule(k), iteration);
  };

  // Nothing is measured before iteration 0: the first candidate that fits (the smallest, when none does).
  int first = *std::min_element(state->candidates.begin(), state->candidates.end());
  for (int k : state->candidates)
    if (fits(k)) {
      first = k;
      break;
    }
  ControlledRun run;
  for (const std::string& gpu : gpus) run.graph.add_device(gpu);
  lower(run.graph, first, 0);
  choices->push_back(PipelineRunReport::Choice{first, {}});

  run.controller = [state, choices, fits, lower](std::uint32_t finished, TaskGraph& graph,
                                                 const std::vector<double>& task_start,
                                                 const std::vector<double>& task_end) {
    if (static_cast<int>(finished) + 1 >= state->iterations) return false;
    const PipelineTimings measured = observe_iteration(state->current, task_start, task_end);
    const GroupChoice choice = choose_group_size(measured, state->shape, state->candidates, fits);
    PipelineRunReport::Choice record{choice.group, {}};
    for (const GroupPrediction& p : choice.predictions)
      if (p.fits) record.predicted_s.emplace_back(p.group, p.iteration.value());
    choices->push_back(std::move(record));
    lower(graph, choice.group, finished + 1);
    return true;
  };
  return run;
}

ControlledRun start_measured_ordering(const Scenario& scenario, const PipelineSetup& setup) {
  struct State {
    PipelineWorkload workload;
    std::shared_ptr<const PipelineSchedule> schedule;
    int iterations = 1;
    LoweredIteration current;
    PipelineTimings sum;  // of every iteration measured so far
    int measured = 0;
  };
  auto state = std::make_shared<State>(State{setup.workload, setup.schedule, scenario.run.iterations, {}, {}, 0});
  ControlledRun run;
  for (const std::string& gpu : scenario.cluster.gpu_names()) run.graph.add_device(gpu);
  state->current = lower_pipeline_iteration(run.graph, state->workload, *state->schedule, 0);
  run.controller = [state](std::uint32_t finished, TaskGraph& graph, const std::vector<double>& task_start,
                           const std::vector<double>& task_end) {
    if (static_cast<int>(finished) + 1 >= state->iterations) return false;
    // The mean of every iteration measured so far: the measured times depend on the order (which
    // transfers meet on a shared NIC), and ordering for the last iteration alone oscillates between
    // two orders, each fitted to the other's contention.
    const PipelineTimings last = observe_iteration(state->current, task_start, task_end);
    const auto accumulate = [](std::vector<Seconds>& sum, const std::vector<Seconds>& value) {
      if (sum.empty()) sum.assign(value.size(), Seconds(0));
      for (std::size_t i = 0; i < value.size(); ++i) sum[i] += value[i];
    };
    state->sum.stages = last.stages;
    accumulate(state->sum.forward, last.forward);
    accumulate(state->sum.backward, last.backward);
    accumulate(state->sum.activation_transfer, last.activation_transfer);
    accumulate(state->sum.gradient_transfer, last.gradient_transfer);
    ++state->measured;
    PipelineTimings mean = state->sum;
    for (auto* times : {&mean.forward, &mean.backward, &mean.activation_transfer, &mean.gradient_transfer})
      for (Seconds& t : *times) t = t / static_cast<double>(state->measured);
    state->schedule = bind_timings(state->schedule, mean);
    state->current = lower_pipeline_iteration(graph, state->workload, *state->schedule, finished + 1);
    return true;
  };
  return run;
}

}  // namespace dnnsim
