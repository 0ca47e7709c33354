// Workload kinds are an extension point like planners and schedules: one small interface and one
// named registry (`dnnsim list workloads`). Each kind lives in its own folder under sim/workloads/
// (data_parallel/, pipeline/, taskgraph/, …) and owns the three things that differ between kinds:
//   parse   the keys of its `workload:` section (besides `kind`), every problem reported at once
//           through the YamlReader (file:line:col), into its own WorkloadSpec subclass;
//   run     whatever it simulates — a TaskGraph through the executor, or its own SimGrid actors
//           (a cluster of jobs, a GNN pipeline) — into a SimulationResult;
//   report  the kind's own fields of summary.json and its own files beside the common reports.
// The scenario reader, `dnnsim run/validate` and the reports dispatch through the registry, so adding
// a kind touches its folder and the one registration function, never the run loop.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/registry.hpp"
#include "models/common/yaml_reader.hpp"
#include "models/cost/memory_model.hpp"
#include "models/program/task_graph.hpp"
#include "sim/report/summary_fields.hpp"

namespace dnnsim {

struct Scenario;
struct Cluster;
struct RunSettings;

// A planner found no feasible plan while a workload was lowered to one TaskGraph. Bad input where a
// graph is asked for (`dnnsim lower`); where a run is (a job of the `jobs` workload kind,
// sim/workloads/jobs), a reported result instead: no plan fits, nothing to simulate.
class InfeasiblePlan : public InputError {
 public:
  using InputError::InputError;
};
struct SimulationResult;
struct SimulationOptions;

// A kind's parsed and validated workload section. Each kind derives its own spec from this one;
// Scenario::workload_as<T>() gives it back.
struct WorkloadSpec {
  virtual ~WorkloadSpec() = default;
  // Samples one iteration trains on, for throughput; empty when the workload does not say what a
  // sample is (a TaskGraph file).
  [[nodiscard]] virtual std::optional<int> samples_per_iteration() const { return std::nullopt; }
  // Tokens in one sample (a language model's sequence length), for tokens per second; empty when
  // a sample is not a token sequence.
  [[nodiscard]] virtual std::optional<int> tokens_per_sample() const { return std::nullopt; }
  // Training FLOPs of one sample as the model's framework counts them for its "model TFLOP/s", when
  // the model says (LayerModel::model_flops_per_sample: the LLM zoo's Megatron-Bridge count).
  [[nodiscard]] virtual std::optional<double> framework_flops_per_sample() const { return std::nullopt; }
  // Why the workload cannot run under the scenario's `network` section (link conditions, failures,
  // background flows), or empty: a fidelity that leaves symmetric GPUs out cannot put on their links
  // what the section does. The parser reports it at the section.
  [[nodiscard]] virtual std::string network_unsupported() const { return {}; }
  // Why the workload cannot run under `network.failures`, or empty: a simulation with no failure
  // model (a transfer cut, a GPU gone) refuses the windows rather than end early or stop. The
  // parser reports it at the key.
  [[nodiscard]] virtual std::string failures_unsupported() const { return {}; }
  // Why the workload cannot be one job of a `jobs` workload (sim/workloads/jobs/jobs_kind.hpp), lowered
  // once to a TaskGraph that shares the engine and the fabric with other jobs' graphs, or empty. A
  // fidelity that mirrors GPUs cannot carry the other jobs' traffic on the mirrored GPUs' links.
  [[nodiscard]] virtual std::string shared_fabric_unsupported() const { return network_unsupported(); }
  // The iterations a run simulates when run.iterations is `run_iterations`, in words ("3 iterations"),
  // for what the resource guard says it sized; a workload whose parts count their own says so.
  [[nodiscard]] virtual std::string iterations_phrase(int run_iterations) const;
  SourceLocation where;  // the workload section, for messages about the whole workload
};

// What a kind's parser is given. `map` is the workload section with `kind` already read; the kind
// declares every key it reads (MapReader::get/require…) and the caller reports the unknown ones.
// `cluster` is empty when the cluster section had errors, and checks that need it (a GPU index in
// range, enough GPUs) are skipped on an empty cluster rather than judge what the errors left.
struct WorkloadParseContext {
  YamlReader& reader;
  MapReader& map;
  const Cluster& cluster;
  // The scenario's `run` section (read first): its memory budget bounds what a parse may build.
  const RunSettings& run;
  // A path written in the workload, made relative to the scenario file's folder.
  [[nodiscard]] std::string resolve_path(const std::string& path) const;
};

// How big a run is, counted from the workload before the executor expands a single collective:
// what the resource guard (sim/run/resource_guard.hpp) turns into an estimate of memory. Counts are
// doubles: a refused 16k-GPU run may count more steps than fit a 32-bit id.
struct WorkloadSize {
  double tasks = 0;              // TaskGraph tasks
  double operations = 0;         // executor operations: computes, transfers, collective steps, barriers, fences
  double flows = 0;              // transfers, collective steps included
  // The links of the flows' routes, summed (the trace's link counters hold two rate changes per link
  // and flow); counted only for a run with its trace on (size_of), 0 otherwise.
  double flow_links = 0;
  double largest_expansion = 0;  // steps of the largest collective, built at once while lowering
  double streams = 0;            // (device, stream) pairs: one SimGrid actor each
  std::string basis;             // what was counted, for the message ("3 iterations of 24 layers on 1,024 GPUs")
};

// A kind's own part of a SimulationResult (its per-job table, its GNN stage statistics, …), given
// back to the same kind's report(); kinds that need nothing beyond the common result leave it empty.
struct WorkloadResult {
  virtual ~WorkloadResult() = default;
};

class WorkloadKind {
 public:
  virtual ~WorkloadKind() = default;

  // @return the spec; problems go to ctx.reader (the caller throws them all together).
  [[nodiscard]] virtual std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const = 0;

  // `dnnsim validate`: checks beyond parsing that stay cheap (no simulation) and what would run,
  // as the line printed after the file name ("ok (8 GPUs, 120 tasks)").
  // @throw InputError
  [[nodiscard]] virtual std::string check(const Scenario& scenario) const = 0;

  // The workload as one TaskGraph, for kinds that have one (`dnnsim lower`, exports, benchmarks);
  // empty for kinds that drive the engine themselves. @throw InputError; InfeasiblePlan when a
  // planner finds no plan (a result, not bad input, where the graph was asked for a run)
  [[nodiscard]] virtual std::optional<TaskGraph> lower(const Scenario& scenario) const;
  // Whether lower() gives the whole run as one TaskGraph (so that it can be one job among others,
  // sim/workloads/jobs); false for kinds that drive the engine themselves.
  [[nodiscard]] virtual bool lowers_to_one_graph() const { return false; }
  // Whether run.iterations repeats the workload; false where the input is one recorded run that is
  // simulated as it is (a TaskGraph or Chakra file).
  [[nodiscard]] virtual bool repeats_iterations() const { return true; }

  // The run's size at the scenario's fidelity, iterations and GPUs, for the resource guard's
  // estimate of a scenario and of the changes it suggests; empty when the kind cannot tell without
  // running. (A run itself is guarded on the graph it simulates, lowered once: check_graph_resources.) The default
  // counts lower()'s graph (size_of): building a TaskGraph is linear in its tasks, while what grows as p², the
  // executor's expansion of collectives, is counted by formula, not built. Kinds with no graph get none unless they
  // say. @throw InputError
  [[nodiscard]] virtual std::optional<WorkloadSize> size(const Scenario& scenario) const;

  // One simulation, start to finish (one SimGrid engine per process). An infeasible plan or a job
  // that can never fit is a result, not an exception. @throw InputError
  [[nodiscard]] virtual SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const = 0;

  // Adds the kind's fields to summary.json, after the common "mean" section.
  virtual void add_to_summary(const Scenario& scenario, const SimulationResult& result,
                              nlohmann::ordered_json& summary) const;
  // Every field add_to_summary can write, so that the metrics expectations and sweeps name are
  // checked before anything runs (debug builds check each summary make_summary writes against them).
  [[nodiscard]] virtual std::vector<SummaryField> summary_fields() const { return {}; }

  // Per graph device, the model states the workload allocates once and keeps (weights, gradients,
  // optimizer state), for the memory breakdown of reports (sim/report/metrics.hpp); empty when the
  // workload does not say (a TaskGraph file: its allocations carry no category).
  [[nodiscard]] virtual std::vector<MemoryBreakdown> model_state_memory(const Scenario& scenario,
                                                                        const SimulationResult& result) const;

  // Writes the kind's own files into `dir` (already created), next to summary.json.
  virtual void write_files(const Scenario& scenario, const SimulationResult& result, const std::string& dir) const;
};

// A kind whose workload is one TaskGraph, simulated as given by the executor: it reads its section
// and lowers it; checking and running follow from the graph.
class TaskGraphKind : public WorkloadKind {
 public:
  // @return always a graph. @throw InputError
  [[nodiscard]] std::optional<TaskGraph> lower(const Scenario& scenario) const override = 0;
  [[nodiscard]] bool lowers_to_one_graph() const override { return true; }
  [[nodiscard]] std::string check(const Scenario& scenario) const override;
  [[nodiscard]] SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const override;
};

// The size of a run of `graph` (the scenario's workload lowered), for WorkloadKind::size.
// @throw InputError
[[nodiscard]] WorkloadSize size_of(const Scenario& scenario, const TaskGraph& graph);

// Weights, gradients and optimizer state of `parameters` parameters (ZeRO's accounting,
// models/cost/memory_model.hpp), as the layer-model kinds allocate them.
[[nodiscard]] MemoryBreakdown model_states(double parameters, Precision precision, Optimizer optimizer);

using WorkloadKindRegistry = Registry<std::shared_ptr<const WorkloadKind>>;

// Every built-in kind, registered explicitly in sim/workloads/builtin_workload_kinds.cpp.
[[nodiscard]] const WorkloadKindRegistry& builtin_workload_kinds();

}  // namespace dnnsim
