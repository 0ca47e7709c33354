// Job speed from published measurements (job_speed.hpp), so that a paper's comparison replays on its
// own terms.
//
// Pollux (OSDI'21 artifact, simulator/traces/<app>/): per application, `placements.csv` gives step
// (compute) and sync seconds per placement — GPUs per node as a digit string — and per-GPU batch;
// `scalability.csv` the same by (nodes, replicas) for larger jobs; `validation-<B>.csv` the
// iterations to the target metric at global batch B, and per epoch the progress and gradient
// statistics of Pollux's goodput model (pollux_goodput.hpp). dnnsim's rule (the artifact interpolates with
// scipy; this is the same data, a simpler interpolant — documented in docs/cluster.md):
//   • `step_time` is a whole iteration, `sync_time` the synchronisation inside it (sync ≤ step in every
//     row: cifar10 on 6 nodes, step 0.141 s = 1-GPU step 0.043 s + sync 0.099 s), so an iteration is
//     step_time, split as compute = step − sync and sync;
//   • local batch = global batch / replicas; above the largest measured local batch the micro-step
//     is repeated (gradient accumulation, as Pollux does): (step − sync) × ⌈local/max⌉ + sync;
//   • a placement whose multiset of per-node GPU counts was measured: linear in local batch between
//     the measured batches (clamped at the ends), among that placement's rows (the lexicographically
//     smallest measured string of that multiset);
//   • otherwise scalability.csv, multilinear in (nodes, replicas, local batch), each clamped to its
//     measured range (nodes capped at 16 as in Pollux);
//   • work = the last row's `iteration` of validation-<B>.csv for B = the job's batch; between files,
//     linear in log2(B) (clamped).
// A job at a fixed batch B (a trace's "TunedJobs") as the artifact runs it (simulator.py Job.step and
// update_local_bsz), each rule a choice of the `pollux` speed source (PolluxTunedJobs):
//   • work: progress — the work is progress (steps at the smallest batch B₀, the `progress` column)
//     up to the end of the last epoch, end(e) the least progress over the files at row e
//     (get_progress); on a placement it grows at gain(B', e) / T per second in epoch e, B' the batch
//     as run (r·atomic·(accum + 1), B up to rounding and the cap below), gain as in
//     pollux_goodput.hpp (progress_curve). Optimus' estimate of what is left stays the `iteration`
//     column after the epochs completed (optimus.py), iterations_left();
//   • accumulation: artifact — the local batch ⌈B/r⌉ is split into micro-steps of at most the
//     application's largest local batch (applications.py max_local_bsz: the largest measured, yolov3
//     8), one replica above B₀ accumulating at least once, so an iteration is
//     (accum + 1)·(step − sync) + sync at the micro-step's batch.
// With the network simulated, the tables' sync time is split: a job on s > 1 servers sends a ring
// all-reduce's 2(s−1)/s × its gradient bytes over the servers' NICs as flows (when the scenario gives
// the application's gradient size, `speed.gradients`), and only the rest of the measured iteration
// runs as local time — so a job alone on an idle network keeps its measured iteration time whenever
// the NIC time fits inside the measured sync time, and contention adds to it.
// Gavel (OSDI'20 scheduler/simulation_throughputs.json): steps/s of a job type ("ResNet-50 (batch size
// 64)") at a scale factor (GPUs) on k80/p100/v100, consolidated or not; a placement on several servers
// uses the `_unconsolidated` table, on mixed types the slowest type. The same file's profiled
// co-locations of two single-GPU jobs on one GPU (Gavel's space sharing) give packed_slowdown():
// solo steps/s over steps/s beside the other job.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "planners/jobs/job_speed.hpp"

namespace dnnsim {

// Per-application settings of the artifact (applications.py, simulator.py), from a CSV file:
// `application,max_local_bsz,fixed_batch_size,max_replicas` (empty fields: none).
struct PolluxApplicationSettings {
  double max_local_bsz = 0;     // 0: the largest measured local batch (yolov3: 8)
  double fixed_batch_size = 0;  // 0: Pollux adapts it (ncf: 32768, kept)
  int max_replicas = 0;         // 0: no limit beyond the batch size's (ncf: 1)
};
using PolluxSettings = std::map<std::string, PolluxApplicationSettings>;
// Reads the settings file (FILE:ROW:COL errors, all at once); every row names one of `applications`
// (those with throughput tables). @throw InputError
[[nodiscard]] PolluxSettings read_pollux_settings(const std::string& csv, const std::vector<std::string>& applications);

// How the `pollux` speed source runs and counts a job at a fixed batch (header comment); the defaults
// are dnnsim's rules.
struct PolluxTunedJobs {
  bool progress_work = false;   // work: progress
  bool artifact_steps = false;  // accumulation: artifact
  PolluxSettings settings;      // max_local_bsz for accumulation: artifact
};

// The Pollux artifact's tolerance on its batch-size floor and ceil operations (goodput.py,
// simulator.py, applications.py), so that a batch exactly divisible is not rounded up by float error.
inline constexpr double kPolluxRounding = 1e-8;

// A global batch as one replica runs it: `accum` accumulation micro-steps and one synchronised step,
// each of `atomic` samples.
struct PolluxMicroSteps {
  int atomic = 0;
  int accum = 0;
};
// goodput.py optimize / simulator.py update_local_bsz: `local` samples in micro-steps of at most
// `largest_local`; `at_least_one` (one replica above B₀) accumulates at least once.
[[nodiscard]] PolluxMicroSteps split_local_batch(double local, double largest_local, bool at_least_one);

class PolluxSpeedModel final : public JobSpeedModel {
 public:
  // Reads every application folder under `throughput_dir`. @throw InputError
  explicit PolluxSpeedModel(const std::string& throughput_dir);
  void set_tuned_jobs(PolluxTunedJobs rules) { tuned_ = std::move(rules); }
  // Gradient bytes per application (fp32 parameters), for the ring flows of network mode.
  // @throw InputError (at `where`) for an application the tables do not have.
  void set_gradient_bytes(const std::string& application, Bytes bytes, const SourceLocation& where);
  [[nodiscard]] IterationCost iteration(const JobRecord& job, const Placement& placement,
                                        const std::vector<ServerInfo>& servers) const override;
  [[nodiscard]] std::vector<std::string> models() const override;
  [[nodiscard]] std::optional<double> iterations_to_target(const JobRecord& job) const override;
  [[nodiscard]] bool counts_progress() const override { return tuned_.progress_work; }
  [[nodiscard]] std::vector<ProgressSegment> progress_curve(const JobRecord& job, const Placement& placement,
                                                            double progress) const override;
  [[nodiscard]] double iterations_left(const JobRecord& job, double done, double total) const override;

  struct Sample {
    double local_bsz, step, sync;
  };
  // validation-<batch>.csv: per epoch, the progress after it (steps at the smallest batch) and the
  // gradient's squared norm and variance measured in it (Pollux's goodput model, pollux_goodput.hpp).
  struct Validation {
    double batch = 0;
    std::vector<double> progress, iteration, grad_sqr, grad_var;
  };
  struct GradStats {
    double sqr = 0, var = 0;
  };
  struct Application {
    // Epochs every validation file has (the artifact's max_epochs: rows of the shortest).
    [[nodiscard]] std::size_t epochs() const;
    // Progress at the end of epoch e: the least over the batch sizes (applications.py get_progress).
    [[nodiscard]] double epoch_end(std::size_t e) const;
    // Gradient statistics at `batch` in `epoch`: linear in the batch between the measured batches
    // around it, clamped (applications.py get_grad_stats).
    [[nodiscard]] GradStats grad_stats(double batch, int epoch) const;
    // Iterations at `batch` after `epoch` (the `iteration` column, linear in the batch between the
    // measured batches, clamped: applications.py get_iteration).
    [[nodiscard]] double iterations_after(double batch, std::size_t epoch) const;
    // Steps at B₀ one step at `batch` is worth: (var + sqr) / (var·B₀/B + sqr), 1 when undefined
    // (goodput.py efficiency × scale).
    [[nodiscard]] double gain(double batch, const GradStats& stats) const;
    // A fixed global batch on `replicas` (simulator.py update_local_bsz): ⌈batch/r⌉ split by
    // split_local_batch, atomic capped so that the whole stays within the largest measured batch.
    [[nodiscard]] PolluxMicroSteps fixed_batch_steps(double batch, int replicas, double largest_local) const;

    std::map<std::string, std::vector<Sample>> placements;  // by placement string, sorted by batch
    // The same by multiset of GPUs per node (digits sorted): the smallest measured string of each.
    std::map<std::string, const std::vector<Sample>*> by_multiset;
    std::map<std::pair<int, int>, std::vector<Sample>> scalability;  // by (nodes, replicas)
    std::vector<std::pair<double, double>> target;                   // (global batch, iterations), sorted
    std::vector<Validation> validation;                              // sorted by batch
    double min_local_bsz = 0.0, max_local_bsz = 0.0;                 // of placements.csv
    Bytes gradient_bytes{0};                                         // 0: unknown, the measured sync stays local time
  };

  // @throw InputError (at job.where) for an application the tables do not have.
  [[nodiscard]] const Application& application(const JobRecord& job) const;
  // The largest local batch of one micro-step: the measured one, capped by `settings` (yolov3: 8).
  [[nodiscard]] double largest_local(const JobRecord& job, const PolluxSettings& settings) const;
  // One iteration on `placement` at `local_bsz` samples per replica (accumulating above the largest
  // measured local batch), from the tables; sync_bytes 0.
  [[nodiscard]] IterationCost measured(const JobRecord& job, const Placement& placement, double local_bsz) const;
  [[nodiscard]] const PolluxSpeedModel* pollux_tables() const override { return this; }

 private:
  IterationCost table_iteration(const JobRecord& job, const Placement& placement) const;
  std::map<std::string, Application> applications_;
  PolluxTunedJobs tuned_;
};

// A key of Gavel's throughputs, "('ResNet-50 (batch size 64)', 2)": the job type and its scale factor
// (GPUs); nothing when the key is not of that form.
struct GavelJobKey {
  std::string type;
  int scale = 1;
};
[[nodiscard]] std::optional<GavelJobKey> parse_gavel_job_key(const std::string& key);

// Gavel's simulation_throughputs.json (Narayanan et al., OSDI'20; gavel/scheduler/
// simulation_throughputs.json), parsed and checked: an object of tables (a GPU type, "_unconsolidated"
// for jobs spread over servers), each an object of job keys whose "null" is the job's own rate and whose
// other keys are co-located jobs with the pair's two rates [this job's, the other's], every rate in
// steps/s and >= 0 (0: the pair did not fit). @throw InputError with every problem at its line and
// column, or at the path when the file cannot be read or is not JSON.
[[nodiscard]] nlohmann::json read_gavel_json(const std::string& throughputs_json);

// Gavel's table of a catalog GPU: "V100-16GB" and "V100-32GB" → "v100" (Gavel does not tell memory
// sizes apart), "P100" → "p100".
[[nodiscard]] std::string gavel_gpu_type(const std::string& catalog_name);

class GavelSpeedModel final : public JobSpeedModel {
 public:
  // @throw InputError
  explicit GavelSpeedModel(const std::string& throughputs_json);
  [[nodiscard]] IterationCost iteration(const JobRecord& job, const Placement& placement,
                                        const std::vector<ServerInfo>& servers) const override;
  [[nodiscard]] std::vector<std::string> models() const override;
  [[nodiscard]] std::optional<double> packed_slowdown(const JobRecord& victim, const JobRecord& aggressor,
                                                      const std::string& gpu_type) const override;
  // `colocation: fitted`: every pair the tables measured as fitting together is slowed by the job
  // interference model (interference.hpp) fitted on all of that table's pairs, instead of by its
  // measurement — the model as the simulator's co-location slowdown; pairs Gavel did not profile, or
  // found not to fit, stay unpackable.
  void use_fitted_colocation();

 private:
  std::map<std::string, std::map<std::pair<std::string, int>, double>> steps_per_second_;  // table → (type, scale)
  std::map<std::string, std::map<std::pair<std::string, std::string>, double>>
      packed_;  // table → (victim, aggressor) → slowdown
};

}  // namespace dnnsim
