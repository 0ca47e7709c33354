// The pipeline workload kind (`workload.kind: pipeline`, docs/pipeline.md): pipeline (and hybrid
// pipeline × data) parallel training, the model cut into stages by a planner (planners/parallel) or by
// hand, run under a pipeline schedule (planners/schedules). plan_pipeline makes a scenario's pipeline
// concrete without an engine, for `dnnsim plan` as for runs.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/cost/memory_model.hpp"
#include "models/dnn/layer_model.hpp"
#include "planners/common/pipeline_plan.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/schedules/pipeline_lowering.hpp"
#include "planners/schedules/schedule.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/replica_window.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

struct PipelineWorkloadSpec : WorkloadSpec {
  LayerModel model;
  int global_batch = 1;
  int micro_batches = 1;
  Dtype dtype = Dtype::fp32;
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::adam;
  std::string collective_algorithm;  // the stages' gradient all-reduce; empty: the default rule
  // The gradient all-reduce bucketed and overlapped with the last backward (pipeline_lowering.hpp).
  bool overlap = true;
  Bytes bucket_size = kDdpBucketSize;
  std::string schedule = "1f1b";  // a name of builtin_schedules()
  Options schedule_options;       // its declared options, as given (option_reader.hpp)
  // The schedule made from them for the workload's micro-batches: what the planners and the lowering
  // run, and what the kind asks for its capabilities (chunks, adaptation, recompute…).
  std::shared_ptr<const PipelineSchedule> order;
  // Either a planner (a name of builtin_planners(), with its declared options) or explicit stages.
  std::string planner;
  Options planner_options;
  std::vector<PipelineStage> stages;  // explicit: one chunk each, devices as cluster GPU indices
  // Added to every device's memory need in the planners' check (CUDA context, libraries); the
  // simulation itself measures the tasks' allocations only.
  Bytes framework_overhead{0};
  // Megatron tensor/sequence parallelism, recomputation and distributed optimizer
  // (models/dnn/tensor_parallel.hpp); `tensor_parallel_set`: any of their keys given, so the model is
  // sharded and memory follows Korthikanti et al. even at degree 1.
  TensorParallelOptions tensor_parallel;
  bool tensor_parallel_set = false;
  // Expert, context and fully sharded data parallelism, the precision recipe and the overlaps of an
  // LLM (models/dnn/llm_parallel.hpp; keys in llm_keys.hpp), and the selective recomputation modules
  // (RecomputeModule bits). Any of them makes the layout Megatron's (tensor_parallel_set).
  LlmParallelism llm;
  std::uint8_t recompute_modules = 0;
  // `tensor_parallel_fidelity`: `group` simulates rank 0 of each tensor-parallel group and has the
  // other ranks mirror it (PipelineWorkload::mirror_ranks; docs/megatron.md), an error where that is
  // not exact; `auto` mirrors where it is exact and simulates every rank elsewhere, and says which.
  enum class RankFidelity { ranks, group, automatic };
  RankFidelity rank_fidelity = RankFidelity::ranks;
  // `data_parallel_fidelity`: `window` simulates a window of each stage's data-parallel replicas (the
  // replicas on the fewest whole nodes that divide the stage's) and has the others mirror it
  // (PipelineWorkload::replica_window; docs/collectives.md, "Symmetric windows"), an error where
  // that is not exact; `auto` does where it is exact, simulates every replica elsewhere, and says why.
  ReplicaFidelity replica_fidelity = ReplicaFidelity::replicas;

  [[nodiscard]] std::optional<int> samples_per_iteration() const override { return global_batch; }
  [[nodiscard]] std::optional<int> tokens_per_sample() const override {
    if (model.tokens_per_sample <= 0) return std::nullopt;
    return model.tokens_per_sample;
  }
  [[nodiscard]] std::optional<double> framework_flops_per_sample() const override {
    if (!model.model_flops_per_sample) return std::nullopt;
    return model.model_flops_per_sample->value();
  }
  [[nodiscard]] std::string network_unsupported() const override {
    if (rank_fidelity == RankFidelity::group)
      return "tensor_parallel_fidelity: group simulates one GPU per tensor-parallel group, so it cannot apply "
             "network conditions, failures or background flows to the others; use tensor_parallel_fidelity: ranks "
             "or auto";
    if (replica_fidelity == ReplicaFidelity::window) return std::string(kWindowRefusesNetwork);
    return {};
  }
  // A schedule that adapts between iterations is re-lowered by a controller as the run goes (Ada-Grouper's
  // group size, measured orders), which one graph lowered before the run cannot hold.
  [[nodiscard]] std::string shared_fabric_unsupported() const override {
    if (order && order->adaptation().kind != ScheduleAdaptation::Kind::none)
      return fmt::format(
          "schedule '{}' adapts between iterations, re-lowered as the run goes; a job sharing the "
          "fabric is lowered once",
          schedule);
    return network_unsupported();
  }
};

// What a pipeline workload's run reports besides timings: the plan, who chose it, and, under
// Ada-Grouper, the group size chosen before each iteration with its predictions.
struct PipelineRunReport : WorkloadResult {
  std::string planner;  // a planner name, or "explicit"
  std::string schedule;
  // Where the layers' kept activations come from (describe_activation_sources): the planner's memory
  // checks and the simulated allocations use the same numbers.
  std::string activation_memory;
  // Why the planner's search stopped before its end (a memory budget, Ctrl-C), so that the plan is
  // the best found so far; empty when it searched to the end.
  std::string search_stopped;
  PlanResult plan;  // plan.feasible = false: nothing was simulated, plan.reason says why
                    // (with tensor parallelism, plan devices are groups of consecutive GPUs)
  std::optional<TensorParallelOptions> tensor_parallel;  // the tensor-parallel keys, or the megatron planner's choice
  int context_parallel = 1;                              // a plan device is tensor_parallel × context_parallel GPUs
  bool mirror_ranks = false;  // rank 0 of each group simulated (tensor_parallel_fidelity: group or auto)
  // tensor_parallel_fidelity: auto, where it simulates every rank: why mirroring would not be exact.
  std::string all_ranks_because;
  int replica_window = 0;  // replicas simulated per stage (data_parallel_fidelity: window or auto); 0: all
  // data_parallel_fidelity: auto, where it simulates every replica: why a window would not be exact.
  std::string all_replicas_because;
  struct Choice {
    int group_size = 1;
    std::vector<std::pair<int, double>> predicted_s;  // (k, predicted iteration time) of every candidate that fits
  };
  std::vector<Choice> choices;  // ada-grouper: one per iteration (iteration 0: the first candidate, unmeasured)

  // The plan's device names over the cluster's GPUs: groups of tensor_parallel × context_parallel GPUs.
  [[nodiscard]] DeviceNames device_names(std::vector<std::string> gpus) const {
    return {std::move(gpus), tensor_parallel ? tensor_parallel->degree * context_parallel : 1};
  }
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_pipeline_kind();

struct PipelineSetup {
  PipelineRunReport report;  // planner, schedule, plan result
  std::shared_ptr<const PipelineSchedule> schedule;
  PipelineWorkload workload;  // valid only when report.plan.feasible
  // tensor_parallel_fidelity: group asked, and why the plan's tensor-parallel degree (the megatron
  // planner's choice) cannot be mirrored exactly; the plan stands, but it cannot be simulated so
  // (require_mirroring).
  std::vector<std::string> mirror_problems;
  // data_parallel_fidelity: window asked, and why the plan cannot be simulated so exactly.
  std::vector<std::string> window_problems;
};

// @throw InputError (at the workload) with setup.mirror_problems and setup.window_problems, when
// there are any: what a run, a lowering or a size estimate checks before building the graph.
void require_mirroring(const PipelineSetup& setup, const PipelineWorkloadSpec& spec);

// Why ranks 1 … t − 1 of each tensor-parallel group of `degree` GPUs (0: not known yet, the megatron
// planner's choice) cannot mirror rank 0 exactly on `cluster`: what they would put on a link that
// rank 0's traffic also crosses. Mirroring is exact when every GPU has its own NIC (a shared NIC
// carries all the ranks' sends), the intra-node fabric is not PCIe (there the ranks' collectives
// share the GPUs' path to the NIC), the nodes meet on one non-blocking switch (each node's port
// carries at most its NICs' sum; a backplane or an oversubscribed spine would not), and a group
// fills its node (else other traffic inside the node crosses the NVLink ports the group's
// collectives use). Network conditions are refused by the parser (network_unsupported).
[[nodiscard]] std::vector<std::string> mirror_problems(const Cluster& cluster, int degree);

// `dnnsim plan --planner NAME`: the scenario read as if its workload named planner NAME. Applied to
// the tree before it is checked (load_scenario), so that every check and default that depends on
// the planner sees NAME (`chunks: auto`, megatron's `overlap` default). Explicit `stages` go, the
// file's planner options that NAME takes stay (`uniform`'s `stages`, `pipedream`'s `flat`, …) and the
// others go, and for megatron the keys it chooses (tensor_parallel, sequence_parallel, recompute).
[[nodiscard]] ScenarioTreeEdit replace_planner(std::string name);

// The data-parallel window of `plan` (plan devices: groups of `ranks` consecutive GPUs): its stages'
// replicas as replica_window (sim/workloads/replica_window.hpp) sees them.
[[nodiscard]] ReplicaWindow replica_window(const Cluster& cluster, const PipelinePlan& plan, int ranks,
                                           const std::string& collective_algorithm);

// The lowering's input for `plan`: with tensor-parallel keys, the model sharded for one rank.
// `tensor_parallel`: the workload's keys, or the 3D planner's choice (PipelineRunReport::tensor_parallel).
[[nodiscard]] PipelineWorkload make_pipeline_workload(const PipelineWorkloadSpec& spec, const PipelinePlan& plan,
                                                      const std::optional<TensorParallelOptions>& tensor_parallel);

// `spec` with the LLM layout planner's choice (PlanResult::llm_layout: CP and its type, EP, FSDP) applied,
// so that what runs, and what reports read of it afterwards, is as if the scenario had given that layout.
[[nodiscard]] PipelineWorkloadSpec with_planned_layout(const PipelineWorkloadSpec& spec, const PlanResult& plan);

// What `dnnsim plan` and the Python module's plan() search: the scenario's pipeline spec, as a copy
// that `scenario` now holds, so that the caller may set the candidate to lower.
// @throw InputError when the workload is of another kind.
[[nodiscard]] std::shared_ptr<PipelineWorkloadSpec> plannable_spec(Scenario& scenario);

// Plans the workload (runs the planner, or takes the explicit stages) and makes its schedule.
// An infeasible plan is a result (report.plan.feasible = false), not an error. A zoo model's
// sub-layers are searched as blocks (PlanRequest::boundaries); `progress` goes to the planner
// (PlanRequest::progress: it may stop the search).
// @throw InputError when the schedule cannot run the plan's shape (interleaved needs M % p == 0, …)
// or an explicit plan is inconsistent, located at the workload.
[[nodiscard]] PipelineSetup plan_pipeline(const Scenario& scenario, const PipelineWorkloadSpec& spec,
                                          std::function<bool(double fraction)> progress = {});

// A run lowered one iteration at a time: iteration 0, and the controller that lowers the next once
// an iteration has ended, from what it measured.
struct ControlledRun {
  TaskGraph graph;  // iteration 0
  IterationController controller;
};

// Ada-Grouper's run (a schedule whose adaptation is group_size; Wang et al., arXiv:2303.01675, as
// specified in planners/schedules/ada_grouper.hpp), among `candidates` (empty: 1…M): iteration 0 runs
// kFkB with the first candidate k whose peak
// memory fits every GPU; once an iteration has ended, the controller measures its per-stage compute
// and per-boundary transfer times, predicts the next iteration for every candidate with the pipeline
// estimator, and lowers the next iteration with the fastest k that fits. The choices (k and every
// fitting candidate's prediction) are appended to `choices` as the run goes.
[[nodiscard]] ControlledRun start_ada_grouper(const Scenario& scenario, const std::vector<int>& candidates,
                                              const PipelineSetup& setup,
                                              std::shared_ptr<std::vector<PipelineRunReport::Choice>> choices);

// critical-path with `times: measured`: iteration 0 runs the order for the plan's predicted times
// (setup.schedule, already bound); once an iteration has ended, the next is ordered for the stage and
// transfer times it measured (observe_iteration, as Ada-Grouper measures them), so contention the
// planners' costs leave out (NICs shared by a cut's replica pairs) shapes the order.
[[nodiscard]] ControlledRun start_measured_ordering(const Scenario& scenario, const PipelineSetup& setup);

}  // namespace dnnsim
