// Subcommands of the dnnsim executable that live in their own files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace dnnsim::cli {

struct BenchOptions {
  std::vector<int> gpu_counts{8, 128, 1024};
  int iterations = 1;
  int repeat = 3;  // ring and raw runs per size; the fastest of each is reported
};

// `dnnsim bench --scale`: the scale scenarios of scenarios/bench at each GPU count and fidelity.
struct ScaleBenchOptions {
  std::vector<int> gpu_counts{64, 256, 1024};
  std::vector<std::string> fidelities{"step", "flow"};
  std::vector<std::string> cases;  // empty: all (astra-dp, gpt3-1f1b, astra-dp-leaf-spine)
  int step_max_gpus = 256;         // step fidelity above this many GPUs is not run (17 min at 1,024)
  std::string scenario_dir;        // the shipped scenarios/bench
  std::string out = "out/bench-scale";
};
int run_bench_scale(const ScaleBenchOptions& options);
// The case names `bench --scale --case` accepts, in the order they run.
std::vector<std::string> scale_case_names();

// Simulated operations per wall second of the executor on a synthetic data-parallel TaskGraph, side
// by side with a bare S4U loop on the same platform. Each measurement runs in a forked child (one
// SimGrid engine per process). Returns the exit code.
int run_bench(const BenchOptions& options);

struct CalibrateOptions {
  std::string backend = "cpu";
  std::string out;  // empty: calibration-<device>.yaml in the current directory
  bool quick = false;
};

// Runs a backend's microbenchmarks, fits a calibration table and writes it. Exits non-zero when the
// backend cannot run here (no CUDA device, or a build without CUDA), saying why.
int run_calibrate(const CalibrateOptions& options);

struct ConvergenceOptions {
  std::string out = "convergence.yaml";
  std::uint64_t seed = 1;
  double label_skew = 0.0;
  std::string proxy = "softmax";        // or "mlp": the non-convex network (planners/torch/digits_mlp.hpp)
  int hidden = 32;                      // the mlp's hidden units
  std::optional<double> learning_rate;  // η; unset: ProxyOptions' 0.5
  std::optional<int> steps, replicas;   // K_max and replicas per regime; unset: ProxyOptions' (or --quick's)
  bool quick = false;
};

// `dnnsim calibrate convergence`: trains the proxy model (models/sync/proxy_training.hpp) in every
// regime, fits the statistical-efficiency parameters and writes them; progress on stderr.
int run_calibrate_convergence(const ConvergenceOptions& options);

// The calibration backends of this build: "cpu", and "cuda" when it was built with nvcc.
const CalibrationBackendRegistry& calibration_backends();

struct SweepCommandOptions {
  std::string sweep_file;  // SWEEP.yaml; empty with --merge
  std::string merge_dir;   // --merge DIR
  std::string out;         // --out (default out/<sweep name>)
  unsigned jobs = 0;       // --jobs (0: one per core)
  std::string timeout;     // --timeout "30s" (default: the sweep file's, else 10min)
  std::string slice;       // --slice I/K
};

// `dnnsim sweep` (docs/sweeps.md): runs every point of a sweep file as its own process and writes
// OUT/results.csv, or with --merge joins the slices of DIR. Returns the exit code: 0 done (failed
// points are rows, not errors), 1 merge found missing points / internal error, 2 bad input,
// 130 interrupted.
int run_sweep_command(const SweepCommandOptions& options);

struct RegressCommandOptions {
  std::vector<std::string> inputs{"scenarios/papers"};  // DIR|FILE …
  std::string out = "out/regress";                      // --out
  unsigned jobs = 0;                                    // --jobs (0: one per core)
  std::string timeout;                                  // --timeout "30s" (default 10min)
  bool verbose = false;                                 // --verbose: also list the files skipped
};

// `dnnsim regress` (docs/regress.md): runs every scenario that has expectations and every comparison
// file, prints the verdicts, writes OUT/regress.csv and OUT/regress.md. Returns the exit code: 0 no
// miss and no error, 1 an error (a run failed, a metric is missing), 3 a miss, 2 bad input,
// 130 interrupted.
int run_regress_command(const RegressCommandOptions& options);

struct PlanCommandOptions {
  std::string scenario;
  std::vector<std::string> overrides;  // --set
  std::string planner;                 // --planner: replaces the scenario's planner or explicit stages
  bool simulate = false;               // --simulate: also run the plan and print the simulated time
  std::optional<double> time_limit_s;  // --time-limit: stop the search then, keeping the best plan so far
  // --simulate-top K (megatron): simulate the K best configurations of the ranking, each in a child
  // process (one SimGrid engine per process), at most `jobs` at once (0: one per core).
  std::size_t simulate_top = 0;
  std::size_t candidate = 0;  // --candidate K (megatron): lower the K-th best configuration; 0: the scenario's
  unsigned jobs = 0;
  std::string timeout;  // --timeout per --simulate-top simulation (default 1h)
  std::string out;      // --out: the simulated runs' reports (--simulate: the run; --simulate-top: one folder each)
};

// `dnnsim plan` (docs/pipeline.md): prints the plan of a pipeline workload, the planner's predicted
// iteration time and search statistics; an infeasible plan is printed as such (exit 0).
int run_plan_command(const PlanCommandOptions& options);

// A `--timeout` value ("30s", "10min"): positive seconds. @throw InputError naming the flag.
[[nodiscard]] Seconds parse_time_limit(const std::string& text);

}  // namespace dnnsim::cli
