// dnnsim: the command line. Thin: it parses arguments, calls the libraries, prints, and decides the
// exit code — 0 success, 1 internal error, 2 bad input (nothing simulated), 3 an expectation missed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>

#include "models/common/input_file.hpp"
#include "models/common/units.hpp"
#include "models/dnn/model_table.hpp"
#include "models/dnn/zoo.hpp"
#include "models/gnn/feature_cache.hpp"
#include "models/gnn/partitioner.hpp"
#include "models/gnn/sampler.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/collective_algorithms.hpp"
#include "planners/jobs/admission.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/marl/teacher.hpp"
#include "planners/jobs/placement.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/schedules/schedule.hpp"
#include "planners/spmd/spmd_planner.hpp"
#include "planners/sync/sync_policy.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/exit_codes.hpp"
#include "sim/cli/plot_command.hpp"
#include "sim/cli/slurm_command.hpp"
#include "sim/cluster/train_scheduler.hpp"
#include "sim/regress/expectations.hpp"
#include "sim/regress/regress_spec.hpp"
#include "sim/report/metrics.hpp"
#include "sim/report/report.hpp"
#include "sim/run/registries.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/file_kind.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "sim/workloads/chakra/chakra_kind.hpp"
#include "sim/workloads/gnn/gnn_kind.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "traces/jobs/job_readers.hpp"

using dnnsim::cli::kExitExpectationMissed;
using dnnsim::cli::kExitInputError;
using dnnsim::cli::kExitInterrupted;
using dnnsim::cli::kExitStopped;

namespace {

void print_input_error(const dnnsim::InputError& error) { std::cerr << dnnsim::format_input_error(error); }

struct RunFlags {
  bool gantt = false;
  bool breakdown = false;
  bool all_devices = false;
};

int command_run(const std::string& path, const std::string& out, const std::vector<std::string>& overrides,
                const RunFlags& flags) {
  dnnsim::Scenario scenario = dnnsim::load_scenario(path, overrides);
  if (!out.empty()) scenario.outputs.dir = out;
  dnnsim::create_output_directory(scenario.outputs.dir);
  dnnsim::SimulationOptions options{scenario.outputs.trace};
  options.progress = &std::cerr;
  const dnnsim::SimulationResult result = dnnsim::run_scenario(scenario, options);
  const auto summary = dnnsim::make_summary(scenario, result);
  dnnsim::write_reports(scenario, result, summary, scenario.outputs.dir);
  std::cout << dnnsim::format_summary_table(summary, flags.all_devices);
  if (flags.breakdown) std::cout << dnnsim::format_time_breakdown(result);
  std::cout << fmt::format("\nreports in {}/\n", scenario.outputs.dir);
  if (flags.gantt) {
    dnnsim::cli::write_gantt(result, scenario.outputs.dir);  // @throw PlotError (exit 1); the reports are written
    std::cout << fmt::format("gantt chart in {}/gantt.png\n", scenario.outputs.dir);
  }
  std::cerr << fmt::format("simulated {} operations ({} flows) in {:.3f} s wall", result.operations, result.flow_count,
                           result.wall_seconds);
  if (result.estimated_memory_bytes > 0)
    std::cerr << fmt::format("; estimated peak memory {}",
                             dnnsim::format_bytes(dnnsim::Bytes(result.estimated_memory_bytes)));
  std::cerr << '\n';
  if (result.interrupted) {
    std::cerr << fmt::format("interrupted: the reports in {}/ cover what was simulated (status \"interrupted\")\n",
                             scenario.outputs.dir);
    return kExitInterrupted;
  }
  if (!result.stopped.empty()) {
    std::cerr << fmt::format("stopped: {}; the reports in {}/ cover what was simulated (status \"stopped\")\n",
                             result.stopped, scenario.outputs.dir);
    return kExitStopped;
  }
  if (scenario.expectations.empty()) return 0;
  const auto verdicts = dnnsim::check_expectations(scenario.expectations, summary);
  std::cout << dnnsim::format_verdicts(verdicts, summary);
  // A known gap that misses is reported, not failed (docs/regress.md).
  const bool any_failed = std::any_of(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.failed(); });
  return any_failed ? kExitExpectationMissed : 0;
}

// `dnnsim lower SCENARIO --chakra DIR`: the workload's TaskGraph as Chakra execution traces.
int command_lower(const std::string& path, const std::vector<std::string>& overrides, const std::string& chakra_dir) {
  const dnnsim::Scenario scenario = dnnsim::load_scenario(path, overrides);
  const auto exported = dnnsim::export_scenario_chakra(scenario, chakra_dir);
  std::cout << fmt::format("{} Chakra execution traces in {}/ (trace.0.et … trace.{}.et)\n", exported.files.size(),
                           chakra_dir, exported.files.size() - 1);
  if (exported.dropped_dependencies > 0)
    std::cerr << fmt::format(
        "warning: {} dependencies between tasks on different GPUs with no communication between "
        "them cannot be written in Chakra (a node names only nodes of its own rank) and were left out\n",
        exported.dropped_dependencies);
  return 0;
}

// `dnnsim graph SCENARIO --out FILE.csr`: a gnn workload's graph (loaded or generated with the run
// seed) in the binary CSR format, which loads in seconds (docs/gnn.md).
int command_graph(const std::string& path, const std::vector<std::string>& overrides, const std::string& out) {
  const dnnsim::Scenario scenario = dnnsim::load_scenario(path, overrides);
  if (scenario.workload_as<dnnsim::GnnWorkload>() == nullptr)
    throw dnnsim::InputError(scenario.workload->where,
                             "dnnsim graph needs a gnn workload (workload.kind: gnn, docs/gnn.md)");
  std::cerr << "building the graph…\n";
  const auto graph = dnnsim::gnn_graph(scenario);
  dnnsim::gnn::save_csr(*graph, out);
  std::cout << fmt::format("{}: {} nodes, {} undirected edges ({} bytes); use it as graph: {{file: {}}}\n", out,
                           graph->num_nodes(), graph->undirected_edges(),
                           24 + 8 * (graph->num_nodes() + 1ULL) + 4 * graph->directed_edges(), out);
  return 0;
}

// A scenario, a comparison file or a sweep, each checked as the command that runs it checks it
// (`run`, `regress`, `sweep`): a comparison's and a sweep's every scenario is read with its overrides.
std::string validated(const std::string& path) {
  switch (dnnsim::input_file_kind(path)) {
    case dnnsim::InputFileKind::comparison: {
      const dnnsim::RegressPlan plan = dnnsim::load_regress_plan({path});
      return fmt::format("comparison, ok ({}, {})", dnnsim::counted(plan.runs.size(), "run"),
                         dnnsim::counted(plan.checks.size(), "check"));
    }
    case dnnsim::InputFileKind::sweep: {
      const dnnsim::SweepSpec sweep = dnnsim::load_sweep(path);
      return fmt::format("sweep, ok ({} of {})", dnnsim::counted(sweep.points.size(), "point"), sweep.base_path);
    }
    case dnnsim::InputFileKind::scenario:
      break;
  }
  const dnnsim::Scenario scenario = dnnsim::load_scenario(path);
  return dnnsim::builtin_workload_kinds().at(scenario.workload_kind).value->check(scenario);
}

int command_validate(const std::vector<std::string>& paths) {
  int status = 0;
  for (const std::string& path : paths) {
    try {
      std::cout << fmt::format("{}: {}\n", path, validated(path));
    } catch (const dnnsim::InputError& e) {
      print_input_error(e);
      status = kExitInputError;
    }
  }
  return status;
}

// What `dnnsim list WHAT` prints: the catalogs, every registry (sim/run/registries.hpp) and the
// calibration backends this binary has, in this order in the help text and in the overview that
// `dnnsim list` alone prints; `options`: every entry's declared options as the Markdown tables of
// docs/scenarios.md.
struct Listing {
  std::string name;
  std::string what;
  std::function<std::size_t()> entries;  // nullptr: not a list of entries (`options`)
  std::function<void(bool)> print;
};

// The backends come with the CUDA module, loaded only when they are listed (docs/calibration-cuda.md).
constexpr const char* kBackendsWhat = "calibration backends: `dnnsim calibrate --backend`";

dnnsim::RegistryListing backends_listing() {
  return dnnsim::listing_of("backends", kBackendsWhat, dnnsim::cli::calibration_backends());
}

std::vector<Listing> listings() {
  const dnnsim::HardwareCatalog& catalog = dnnsim::HardwareCatalog::builtin();
  std::vector<Listing> table = {
      {"gpus", dnnsim::kGpusWhat, [&catalog] { return catalog.gpus().size(); },
       [&catalog](bool) { std::cout << dnnsim::format_gpu_table(catalog); }},
      {"links", dnnsim::kLinksWhat, [&catalog] { return catalog.links().size(); },
       [&catalog](bool) { std::cout << dnnsim::format_link_table(catalog); }},
  };
  for (const dnnsim::RegistryListing& listing : dnnsim::builtin_registry_listings())
    table.push_back({listing.name, listing.what, [&listing] { return listing.entries.size(); },
                     [&listing](bool options) { std::cout << dnnsim::format_listing(listing, options); }});
  table.push_back({"backends", kBackendsWhat, [] { return backends_listing().entries.size(); },
                   [](bool options) { std::cout << dnnsim::format_listing(backends_listing(), options); }});
  table.push_back(
      {"options", "every entry's declared options, as the Markdown tables of docs/scenarios.md", nullptr, [](bool) {
         std::vector<dnnsim::RegistryListing> all = dnnsim::builtin_registry_listings();
         all.push_back(backends_listing());
         std::cout << dnnsim::options_reference(all);
       }});
  return table;
}

std::vector<std::string> listing_names() {
  std::vector<std::string> names;
  for (const Listing& listing : listings()) names.push_back(listing.name);
  return names;
}

int command_list(const std::string& what, bool options) {
  const std::vector<Listing> table = listings();
  if (what.empty()) {
    for (const Listing& listing : table) {
      std::string count;
      if (listing.entries) {
        const std::size_t n = listing.entries();
        count = n == 1 ? "1 entry" : fmt::format("{} entries", n);
      }
      std::cout << fmt::format("{:<14} {:>11}  {}\n", listing.name, count, listing.what);
    }
    std::cout << "dnnsim list NAME prints one of them, each entry with its description and source; --options adds "
                 "each entry's declared options\n";
    return 0;
  }
  for (const Listing& listing : table)
    if (listing.name == what) listing.print(options);
  return 0;
}

int command_describe_model(const std::string& name, int batch, const dnnsim::ModelOptions& options) {
  const dnnsim::LayerModel model = dnnsim::builtin_models().at(name).value(options);
  std::cout << dnnsim::format_model_table(model, batch);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dnnsim: simulate distributed deep-learning training on GPU clusters (SimGrid-based)"};
  app.set_version_flag("--version", std::string("dnnsim ") + DNNSIM_VERSION);
  app.require_subcommand(1);

  std::string scenario_path;
  std::string out_dir;
  std::vector<std::string> overrides;
  auto* run = app.add_subcommand("run", "simulate a scenario and write OUT/summary.json, tasks.csv, trace.json");
  run->add_option("SCENARIO", scenario_path, "scenario YAML file")->required()->check(CLI::ExistingFile);
  run->add_option("--out", out_dir, "output directory (default: outputs.dir, or out/<scenario name>)");
  run->add_option("--set", overrides,
                  "override a scenario key: --set run.iterations=5, or remove one: --set ~run.seed (repeatable)");
  RunFlags run_flags;
  run->add_flag("--gantt", run_flags.gantt,
                "also draw OUT/gantt.png: the timeline per device and stream (needs gnuplot)");
  run->add_flag("--breakdown", run_flags.breakdown,
                "also print the time per layer (or stage, or collective) and phase, per device and iteration");
  run->add_flag("--all-devices", run_flags.all_devices,
                "list every device in the table (default: devices with the same GPU and figures share a row)");

  std::string lower_scenario;
  std::vector<std::string> lower_overrides;
  std::string lower_chakra;
  auto* lower = app.add_subcommand("lower", "write a scenario's task graph in another format (docs/chakra.md)");
  lower->add_option("SCENARIO", lower_scenario, "scenario YAML file")->required()->check(CLI::ExistingFile);
  lower->add_option("--chakra", lower_chakra, "directory for one Chakra execution trace per GPU (trace.<rank>.et)")
      ->required();
  lower->add_option("--set", lower_overrides, "override a scenario key (repeatable)");

  std::string graph_scenario, graph_out;
  std::vector<std::string> graph_overrides;
  auto* graph = app.add_subcommand(
      "graph", "save a gnn workload's graph (loaded or generated) as a binary .csr file (docs/gnn.md)");
  graph->add_option("SCENARIO", graph_scenario, "scenario YAML file with workload.kind: gnn")
      ->required()
      ->check(CLI::ExistingFile);
  graph->add_option("--out", graph_out, "the .csr file to write")->required();
  graph->add_option("--set", graph_overrides, "override a scenario key (repeatable)");

  std::vector<std::string> validate_paths;
  auto* validate = app.add_subcommand(
      "validate", "check scenario, comparison and sweep files and report every problem; simulate nothing");
  validate->add_option("FILE", validate_paths, "scenario, comparison (regress) or sweep YAML files")->required();

  std::string list_what;
  auto* list = app.add_subcommand("list", "print a catalog or a registry");
  bool list_options = false;
  auto* list_what_option =
      list->add_option(
              "WHAT", list_what,
              fmt::format("one of: {} (none: each with its entry count and the scenario key that names an entry)",
                          fmt::join(listing_names(), ", ")))
          ->check(CLI::IsMember(listing_names()));
  list->add_flag("--options", list_options,
                 "also each entry's declared options: type, default, range and description (`list options`: all of "
                 "them as the Markdown tables of docs/scenarios.md)")
      ->needs(list_what_option);

  auto* model = app.add_subcommand("model", "inspect the model zoo");
  model->require_subcommand(1);
  std::string model_name;
  int model_batch = 1;
  dnnsim::ModelOptions model_options;
  auto* describe = model->add_subcommand("describe", "per-layer table and totals of a zoo model (dnnsim list models)");
  describe->add_option("NAME", model_name, "model name")->required();
  describe->add_option("--batch", model_batch, "samples per batch (totals are for the batch)")
      ->check(CLI::PositiveNumber);
  describe->add_option("--seq", model_options.seq, "sequence length (language models; default: the model's)")
      ->check(CLI::PositiveNumber);
  describe->add_option("--image", model_options.image, "image side in pixels (vision models; default 224)")
      ->check(CLI::PositiveNumber);

  dnnsim::cli::CalibrateOptions calibrate_options;
  auto* calibrate = app.add_subcommand("calibrate", "run microbenchmarks and write a calibration table");
  calibrate->add_option("--backend", calibrate_options.backend,
                        "a calibration backend (dnnsim list backends): cpu or cuda");
  calibrate->add_option("--out", calibrate_options.out, "table file (default: calibration-<device>.yaml)");
  calibrate->add_flag("--quick", calibrate_options.quick, "small sizes, few repetitions (seconds, not minutes)");
  dnnsim::cli::ConvergenceOptions convergence_options;
  auto* convergence = calibrate->add_subcommand(
      "convergence", "fit the statistical-efficiency model to a real training run on the CPU (docs/calibration.md)");
  convergence->add_option("--out", convergence_options.out, "parameter file (default: convergence.yaml)");
  convergence->add_option("--seed", convergence_options.seed, "seed of the minibatch sampling");
  convergence
      ->add_option("--label-skew", convergence_options.label_skew,
                   "non-i.i.d. workers: share of each worker's samples from its own labels (0 = i.i.d.)")
      ->check(CLI::Range(0.0, 1.0));
  convergence
      ->add_option("--proxy", convergence_options.proxy,
                   "the model trained: softmax (convex, the default) or mlp (a tanh network, libtorch)")
      ->check(CLI::IsMember({"softmax", "mlp"}));
  convergence->add_option("--hidden", convergence_options.hidden, "hidden units of the mlp proxy (default 32)")
      ->check(CLI::Range(1, 4096));
  convergence->add_option("--learning-rate", convergence_options.learning_rate, "SGD step size eta (default 0.5)")
      ->check(CLI::PositiveNumber);
  convergence->add_option("--steps", convergence_options.steps, "sequential steps K_max (default 3000)")
      ->check(CLI::Range(2, 1000000));
  convergence
      ->add_option("--replicas", convergence_options.replicas, "independent runs averaged per regime (default 16)")
      ->check(CLI::Range(1, 1024));
  convergence->add_flag("--quick", convergence_options.quick, "fewer steps and replicas (seconds, not a minute)");

  dnnsim::cli::BenchOptions bench_options;
  auto* bench = app.add_subcommand("bench", "executor throughput against a bare SimGrid loop (docs/performance.md)");
  bench->add_option("--gpus", bench_options.gpu_counts, "cluster sizes to measure (multiples of 8)")->delimiter(',');
  bench->add_option("--iterations", bench_options.iterations, "training iterations per measurement")
      ->check(CLI::PositiveNumber);
  bench->add_option("--repeat", bench_options.repeat, "runs of the ring and raw loops per size; the fastest counts")
      ->check(CLI::PositiveNumber);
  bool bench_scale = false;
  dnnsim::cli::ScaleBenchOptions scale_options;
  scale_options.scenario_dir = DNNSIM_BENCH_SCENARIOS;
  bench->add_flag("--scale", bench_scale,
                  "instead: wall, peak RSS and iteration time of the scale scenarios per GPU count (--gpus, default "
                  "64,256,1024) and collective fidelity (docs/performance.md, \"Scale\")");
  bench->add_option("--fidelity", scale_options.fidelities, "with --scale: step, flow or both")
      ->delimiter(',')
      ->check(CLI::IsMember({"step", "flow"}));
  const std::vector<std::string> case_names = dnnsim::cli::scale_case_names();
  bench->add_option("--case", scale_options.cases, "with --scale: " + fmt::format("{}", fmt::join(case_names, ", ")))
      ->delimiter(',')
      ->check(CLI::IsMember(case_names));
  bench->add_option("--step-max-gpus", scale_options.step_max_gpus, "with --scale: skip step fidelity above this")
      ->check(CLI::PositiveNumber);
  bench->add_option("--out", scale_options.out, "with --scale: where the runs' logs and reports go");

  dnnsim::cli::SweepCommandOptions sweep_options;
  auto* sweep = app.add_subcommand("sweep", "run every point of a parameter sweep as its own process (docs/sweeps.md)");
  sweep->add_option("SWEEP", sweep_options.sweep_file, "sweep YAML file")->check(CLI::ExistingFile);
  sweep->add_option("--jobs", sweep_options.jobs, "points run at once (default: one per core)")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--out", sweep_options.out, "output directory (default: out/<sweep name>)");
  sweep->add_option("--timeout", sweep_options.timeout,
                    "time limit per point, e.g. 30s (default: the sweep file's, 10min)");
  sweep->add_option("--slice", sweep_options.slice, "run only the points whose index % K == I (I/K)");
  sweep
      ->add_option("--merge", sweep_options.merge_dir,
                   "merge DIR's slice CSVs into DIR/results.csv; list missing points")
      ->check(CLI::ExistingDirectory);
  dnnsim::SlurmOptions slurm_options;
  bool sweep_slurm = false;
  auto* slurm = sweep->add_flag("--slurm", sweep_slurm,
                                "submit the sweep as a Slurm job array, one slice per task (docs/slurm.md)");
  sweep
      ->add_option("--array-size", slurm_options.array_size,
                   "with --slurm: array tasks = slices (default: min(points, 100))")
      ->check(CLI::PositiveNumber)
      ->needs(slurm);
  sweep->add_option("--partition", slurm_options.partition, "with --slurm: Slurm partition (default: the cluster's)")
      ->needs(slurm);
  sweep->add_flag("--emit-only", slurm_options.emit_only, "with --slurm: write OUT/sweep.sbatch without submitting it")
      ->needs(slurm);
  slurm->excludes("--slice")->excludes("--merge")->excludes("--jobs")->excludes("--timeout");

  dnnsim::cli::RegressCommandOptions regress_options;
  auto* regress = app.add_subcommand(
      "regress", "run every scenario with expectations and every comparison file; verdict table (docs/regress.md)");
  regress->add_option("INPUTS", regress_options.inputs,
                      "directories (searched recursively) and YAML files (default: scenarios/papers)");
  regress->add_option("--jobs", regress_options.jobs, "runs at once (default: one per core)")
      ->check(CLI::PositiveNumber);
  regress->add_option("--out", regress_options.out, "output directory (default: out/regress)");
  regress->add_option("--timeout", regress_options.timeout, "time limit per run, e.g. 30s (default: 10min)");
  regress->add_flag("-v,--verbose", regress_options.verbose, "also list the YAML files skipped and why");

  dnnsim::cli::PlanCommandOptions plan_options;
  auto* plan = app.add_subcommand(
      "plan", "show the plan a planner picks for a pipeline or SPMD workload (docs/pipeline.md, docs/spmd.md)");
  plan->add_option("SCENARIO", plan_options.scenario, "scenario YAML file with workload.kind: pipeline or spmd")
      ->required()
      ->check(CLI::ExistingFile);
  plan->add_option("--planner", plan_options.planner,
                   "planner to use instead of the scenario's (dnnsim list planners)");
  plan->add_option("--set", plan_options.overrides, "override a scenario key (repeatable)");
  plan->add_flag("--simulate", plan_options.simulate,
                 "also simulate the plan and print the simulated time beside the prediction");
  plan->add_option("--time-limit", plan_options.time_limit_s,
                   "seconds of search after which the planner returns the best plan found so far (marked as such)")
      ->check(CLI::PositiveNumber);
  plan->add_option(
          "--simulate-top", plan_options.simulate_top,
          "megatron: simulate the K best configurations of its ranking, each in its own process, and rank them "
          "by simulated time")
      ->check(CLI::PositiveNumber)
      ->excludes("--simulate");
  plan->add_option("--candidate", plan_options.candidate,
                   "megatron: plan with the K-th best configuration of its ranking (as the planner key `candidate`)")
      ->check(CLI::PositiveNumber);
  plan->add_option("--jobs", plan_options.jobs, "--simulate-top: simulations at once (default: one per core)")
      ->check(CLI::PositiveNumber)
      ->needs("--simulate-top");
  plan->add_option("--timeout", plan_options.timeout,
                   "--simulate-top: time limit per simulation, e.g. 30min (default: 1h)")
      ->needs("--simulate-top");
  plan->add_option("--out", plan_options.out,
                   "write the simulated reports here (--simulate: summary.json …; --simulate-top: one folder per "
                   "candidate; default out/plan)");

  dnnsim::cli::PlotCommandOptions plot_options;
  auto* plot = app.add_subcommand("plot", "plot a metric of sweep results against an axis, as PNG (docs/plots.md)");
  plot->add_option("RESULTS", plot_options.csv, "results CSV written by dnnsim sweep");
  plot->add_option("--x", plot_options.x, "column for the x axis (a sweep axis key)");
  plot->add_option("--y", plot_options.y, "column for the y axis (a metric, e.g. mean.iteration_time_s)");
  plot->add_option("--jct-cdf", plot_options.jct_cdf,
                   "cluster run directories: the CDF of their jobs' JCT (jobs.csv), one line each");
  plot->add_option("--utilisation", plot_options.utilisation,
                   "cluster run directories: GPU utilisation and queued jobs over time (utilisation.csv)");
  plot->add_option("--hue", plot_options.hue, "column whose values make one line each");
  plot->add_option("--where", plot_options.where,
                   "COLUMN=VALUE: plot only the rows where the column has that text (repeatable)");
  plot->add_option("-o,--output", plot_options.output, "PNG file; its gnuplot script is written beside it (.gp)")
      ->required();
  plot->add_option("--title", plot_options.title, "figure title (default: \"<y> vs <x>\")");

  dnnsim::TrainSchedulerOptions train_options;
  auto* train = app.add_subcommand(
      "train-scheduler", "train the marl scheduler's policy with dnnsim as its environment (docs/cluster.md)");
  train
      ->add_option("SCENARIO", train_options.scenario, "scenario YAML file with workload.kind: cluster, scheduler marl")
      ->required()
      ->check(CLI::ExistingFile);
  train
      ->add_option("--episodes", train_options.episodes,
                   "actor-critic episodes to train (default 100; 0 with --imitate: the imitation alone; with --init "
                   "alone: the policy unchanged)")
      ->check(CLI::NonNegativeNumber);
  train
      ->add_option("--parallel", train_options.parallel,
                   "episodes per update, run at once in child processes (default 2)")
      ->check(CLI::PositiveNumber);
  train->add_option("--seed", train_options.seed,
                    "seed of the initial weights (unused with --init); episode e runs with workload.seed = seed + e "
                    "(default 1)");
  train
      ->add_option("--init", train_options.init,
                   "start from this policy file (fine-tuning) instead of fresh weights; it must be of the scenario's "
                   "cluster and `remote` option, as the `policy` option requires")
      ->check(CLI::ExistingFile);
  auto* agreement_with =
      train
          ->add_option("--agreement-with", train_options.agreement_with,
                       "label the actor-critic episodes' states by this teacher: their rows record the share whose "
                       "most probable action is its (agreement) and its cross-entropy (training unchanged unless "
                       "--imitation-weight)")
          ->check(CLI::IsMember(dnnsim::marl_teacher_names()));
  train
      ->add_option("--imitation-weight", train_options.imitation_weight,
                   "λ: the actor-critic loss adds λ × the cross-entropy of the --agreement-with teacher's actions on "
                   "the visited states (default 0)")
      ->check(CLI::NonNegativeNumber)
      ->needs(agreement_with);
  train->add_option("--learning-rate", train_options.learning_rate, "Adam's step size (default 0.001)")
      ->check(CLI::PositiveNumber);
  train
      ->add_option("--shaping", train_options.shaping,
                   "weight w of the potential Φ = −w × predicted remaining job-hours / GPUs in the shaped reward "
                   "(default 1; any w keeps the optimal policies)")
      ->check(CLI::NonNegativeNumber);
  train
      ->add_option("--entropy-weight", train_options.entropy_weight,
                   "β: the actor-critic loss subtracts β × the policy's mean entropy (default 0.01)")
      ->check(CLI::NonNegativeNumber);
  auto* imitate =
      train
          ->add_option("--imitate", train_options.imitate,
                       "warm start: behaviour cloning of a teacher's decisions before the actor-critic episodes "
                       "(the teachers: planners/jobs/marl/teacher.hpp, docs/cluster.md)")
          ->check(CLI::IsMember(dnnsim::marl_teacher_names()));
  train
      ->add_option("--imitate-episodes", train_options.imitate_episodes,
                   "teacher episodes cloned, streams seed + 0 … N − 1, before the --episodes (default 100)")
      ->check(CLI::PositiveNumber)
      ->needs(imitate);
  train
      ->add_option("--imitate-learning-rate", train_options.imitate_learning_rate,
                   "Adam's step size while cloning (default 0.003)")
      ->check(CLI::PositiveNumber)
      ->needs(imitate);
  train
      ->add_option("--imitate-dagger", train_options.imitate_dagger,
                   "DAgger: imitation episode m acts by the teacher with probability p^m per decision, else by the "
                   "policy, the teacher labelling every state (default 1: behaviour cloning alone)")
      ->check(CLI::Range(0.0, 1.0))
      ->needs(imitate);
  train
      ->add_option("--imitate-aggregate", train_options.imitate_aggregate,
                   "DAgger's aggregation: after each imitation update, K more Adam steps, each on 128 labelled states "
                   "drawn from all imitation episodes so far (default 0: each episode's own step alone)")
      ->check(CLI::NonNegativeNumber)
      ->needs(imitate);
  train
      ->add_option("--checkpoint-every", train_options.checkpoint_every,
                   "every N episodes, write the policy so far beside the final one (POLICY.ep<N·k>.pt; default 0: "
                   "none)")
      ->check(CLI::NonNegativeNumber);
  train->add_option("--set", train_options.overrides, "override a scenario key (repeatable)");
  train
      ->add_option("--out", train_options.out,
                   "the policy file to write; the learning curve goes beside it (.curve.csv)")
      ->required();

  // A malformed command line is bad input like a malformed scenario: exit 2 (CLI11's own codes are
  // 101-115), after CLI11's message; --help and --version still exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*run) return command_run(scenario_path, out_dir, overrides, run_flags);
    if (*validate) return command_validate(validate_paths);
    if (*lower) return command_lower(lower_scenario, lower_overrides, lower_chakra);
    if (*graph) return command_graph(graph_scenario, graph_overrides, graph_out);
    if (*list) return command_list(list_what, list_options);
    if (*describe) return command_describe_model(model_name, model_batch, model_options);
    if (*convergence) return dnnsim::cli::run_calibrate_convergence(convergence_options);
    if (*calibrate) return dnnsim::cli::run_calibrate(calibrate_options);
    if (*bench && bench_scale) {
      if (bench->count("--gpus") > 0) scale_options.gpu_counts = bench_options.gpu_counts;
      return dnnsim::cli::run_bench_scale(scale_options);
    }
    if (*bench) return dnnsim::cli::run_bench(bench_options);
    if (*sweep && sweep_slurm)
      return dnnsim::cli::run_slurm_command(sweep_options.sweep_file, sweep_options.out, slurm_options);
    if (*sweep) return dnnsim::cli::run_sweep_command(sweep_options);
    if (*regress) return dnnsim::cli::run_regress_command(regress_options);
    if (*plot) return dnnsim::cli::run_plot_command(plot_options);
    if (*plan) return dnnsim::cli::run_plan_command(plan_options);
    if (*train) {
      if (train_options.episodes == 0 && train_options.imitate.empty() && train_options.init.empty()) {
        std::cerr << "error: --episodes 0 trains nothing without --imitate or --init\n";
        return kExitInputError;
      }
      train_options.progress = &std::cerr;
      const auto trained = dnnsim::train_scheduler(train_options);
      const auto& curve = trained.curve;
      std::cout << fmt::format("trained {} episodes{}: mean JCT {:.0f} s in the first, {:.0f} s in the last\n",
                               curve.size(), trained.interrupted ? " (interrupted)" : "",
                               curve.empty() ? 0.0 : curve.front().mean_jct_s,
                               curve.empty() ? 0.0 : curve.back().mean_jct_s);
      std::cout << "policy: " << trained.policy_path << "\nlearning curve: " << trained.curve_path << '\n';
      if (!trained.imitated_path.empty()) std::cout << "after imitation alone: " << trained.imitated_path << '\n';
      return trained.interrupted ? kExitInterrupted : 0;
    }
  } catch (const dnnsim::InputError& e) {
    print_input_error(e);
    return kExitInputError;
  } catch (const std::bad_alloc&) {
    // The resource guard estimates before a run (docs/performance.md); this is a run that still
    // outgrew the machine or its limit (ulimit -v), or a command the guard does not size.
    std::cerr << "error: out of memory: the run needs more than this machine (or its ulimit) gives; nothing was "
                 "written. Smaller runs: run.collective_fidelity: flow, fewer run.iterations, outputs.trace: false "
                 "(docs/performance.md, \"Resource guard\")\n";
    return 1;
  } catch (const dnnsim::cli::PlotError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
