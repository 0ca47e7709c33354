// Pollux's goodput model, -like reconstruction of Qiao et al., "Pollux: Co-adaptive Cluster Scheduling
// for Goodput-Optimized Deep Learning", OSDI'21 §3, from its artifact (petuum/adaptdl, branch
// osdi21-artifact, simulator/goodput.py, applications.py, simulator.py), on the artifact's own data
// (data/traces/pollux-osdi21/throughput/<application>/):
//   goodput = throughput × statistical efficiency (§3.1, eq. 1);
//   throughput  a global batch B on r replicas is r × atomic × (accum + 1): each replica runs `accum`
//               gradient-accumulation micro-steps and one synchronised step of `atomic` samples,
//               T = accum·(step − sync) + step, step and sync from the measured tables at the
//               placement and local batch `atomic` (PolluxSpeedModel's interpolation);
//   efficiency  E(B) = gain / (B / B₀), gain = (var + sqr) / (var·B₀/B + sqr) — the gradient-noise
//               scale of McCandlish et al. (arXiv:1812.06162) as Pollux uses it (§3.1, eq. 5):
//               `grad_sqr`, `grad_var` of validation-<B>.csv at the job's epoch, linear in B between the
//               measured batches; B₀ the smallest measured batch (the user's initial batch). With the
//               learning rate scaled as Pollux's AdaScale does, one step at B is worth `gain` steps
//               at B₀, so progress — in steps at B₀ (B₀ samples each: the `progress` column of the
//               validation files, per epoch) — grows at gain / T per second;
//   batch size  Pollux's agent picks, for its allocation, the B maximising goodput among 50 sizes
//               geometrically spaced in [max(B₀, r·min local), largest measured B], each split into
//               (atomic, accum) with atomic within the measured local batches (goodput.py optimize);
//               it re-picks at every epoch as the gradient statistics change;
//   work        a job is done after the validation files' last epoch: the least `progress` over the
//               batch sizes at that row (applications.py get_completion_epoch without a target metric).
// Differences from the artifact, hence "-like": best() picks the batch with the throughput of the measured
// tables, not with the performance model the artifact's agent fits to the configurations it has run (an
// oracle of throughput, as for Optimus+Oracle; predicted() gives that model's goodput, which the
// scheduler's speedup can use, and chosen() the agent's pick with it); by default the batch is picked with the gradient
// statistics of the smallest batch at the epoch (the noise scale is batch-independent in McCandlish's model), where the
// artifact's agent uses those measured at the batch it ran last (rank_at_running_batch: the pick that
// agrees with its own batch's statistics).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "planners/jobs/measured_speed.hpp"
#include "planners/jobs/pollux_perf.hpp"

namespace dnnsim {

class PolluxGoodput {
 public:
  explicit PolluxGoodput(const PolluxSpeedModel& speed) : speed_(&speed) {}
  // Reads the settings file (read_pollux_settings). @throw InputError
  void read_settings(const std::string& csv) { settings_ = read_pollux_settings(csv, speed_->models()); }
  // Which gradient statistics rank the candidate batches: false (the default), those of the smallest
  // batch at the epoch; true, those of the batch being run, as the artifact's agent (simulator.py
  // Job.step: grad_params from the batch of its last step, re-picked after every step) — taken as the
  // choice that agrees with its own statistics at the epoch, searched from the previous epoch's batch
  // (B₀ at epoch 0), the state the agent's re-picks settle in while the placement holds.
  void rank_at_running_batch(bool on) { running_batch_ = on; }

  struct Config {
    int atomic = 0;    // local batch of one micro-step
    int accum = 0;     // accumulation micro-steps before the synchronised one
    double batch = 0;  // global batch r·atomic·(accum + 1)
    double rate = 0;   // progress (steps at B₀) per second; 0: no valid configuration
  };
  // A span of progress run at `rate` progress per second.
  using Segment = ProgressSegment;

  [[nodiscard]] double target_progress(const JobRecord& job) const;
  // The epoch a job is in at `progress` (0-based; the last epoch at the target).
  [[nodiscard]] int epoch(const JobRecord& job, double progress) const;
  // The most replicas that can split the largest batch (largest B / min local), capped by settings.
  [[nodiscard]] int max_replicas(const JobRecord& job) const;
  // The most replicas that split `batch` (B / min local, at least 1), capped by settings: the limit
  // Optimus+Oracle+TunedJobs grows a job to at its tuned batch (simulator.py get_optimus_job_info).
  [[nodiscard]] int max_replicas(const JobRecord& job, double batch) const;
  // The largest local batch of one micro-step: the measured one, capped by the settings (yolov3: 8).
  [[nodiscard]] double max_local(const JobRecord& job) const;
  [[nodiscard]] const PolluxSpeedModel& speed() const { return *speed_; }
  // Pollux's choice of batch on `placement` at `epoch` (fixed_batch_size kept when set).
  [[nodiscard]] Config best(const JobRecord& job, const Placement& placement, int epoch) const;
  // The same for `replicas` on `nodes` nodes, as a balanced placement (the speedup function's view:
  // the artifact's fitted model depends on the two counts only).
  [[nodiscard]] Config best(const JobRecord& job, int nodes, int replicas, int epoch) const;
  // best(job, nodes, replicas, epoch).rate for one application at one epoch, memoised across calls in
  // a flat table (nodes ≤ 16, replicas ≤ 64; others computed each time): the scheduler asks for every
  // replica count of every job each round, and jobs of one application share the table.
  class Rates {
   public:
    [[nodiscard]] double operator()(int nodes, int replicas) const;

   private:
    friend class PolluxGoodput;
    Rates(const PolluxGoodput& goodput, const JobRecord& job, int epoch, std::vector<double>& cells)
        : goodput_(&goodput), job_(&job), epoch_(epoch), cells_(&cells) {}
    const PolluxGoodput* goodput_;
    const JobRecord* job_;
    int epoch_;
    std::vector<double>* cells_;
  };
  [[nodiscard]] Rates rates(const JobRecord& job, int epoch) const;
  // Seconds of one synchronised step and of one accumulation micro-step at a local batch.
  struct StepTimes {
    double step = 0, micro = 0;
  };
  // The agent's candidate configurations on `replicas` (goodput.py optimize): 50 global batches
  // geometrically spaced in [max(B₀, r·min local), largest B], each split into (atomic, accum), those
  // whose atomic batch is outside the measured range dropped. Memoised per (application, replicas).
  struct BatchCandidate {
    int atomic = 0, accum = 0;
    double batch = 0;  // r·atomic·(accum + 1)
  };
  [[nodiscard]] const std::vector<BatchCandidate>& candidates(const JobRecord& job, int replicas) const;
  // The step times the fitted model `params` predicts for candidates(job, replicas) on `nodes` nodes:
  // independent of the epoch, so a scheduler may keep them while its model holds.
  [[nodiscard]] std::vector<StepTimes> predicted_times(const JobRecord& job, const PolluxPerfParams& params, int nodes,
                                                       int replicas) const;
  // The goodput (progress per second) the artifact's agent predicts for `replicas` at `epoch` with its
  // fitted throughput model (pollux_perf.hpp; goodput.py GoodputFunction.optimize): the candidates,
  // timed by `times` (predicted_times) instead of the tables, ranked and valued by the gain at the
  // statistics of `stats_batch`; 0 when no candidate is valid.
  [[nodiscard]] double predicted(const JobRecord& job, const std::vector<StepTimes>& times, int replicas, int epoch,
                                 double stats_batch) const;
  // The configuration the artifact's agent runs on `placement` at `epoch` (simulator.py
  // Job.update_local_bsz): with a fitted model, the candidate of highest predicted goodput (as
  // predicted(), at the statistics of `stats_batch` in `stats_epoch`), its atomic batch capped at
  // largest B / (r·(accum + 1)); before the first fit (`params` null), max(B₀, r·min local) split as a
  // fixed batch; a fixed batch (settings) kept. Its rate is the tables' at `epoch`, as it runs.
  [[nodiscard]] Config chosen(const JobRecord& job, const Placement& placement, const PolluxPerfParams* params,
                              int epoch, double stats_batch, int stats_epoch) const;
  // The progress at the end of each epoch (non-decreasing): epoch() is the first whose end is above
  // the progress, the last at the target.
  [[nodiscard]] const std::vector<double>& epoch_ends(const JobRecord& job) const;
  // How the job advances on `placement` from `progress` to its target, epoch by epoch, the batch
  // re-picked at each epoch.
  [[nodiscard]] std::vector<Segment> segments(const JobRecord& job, const Placement& placement, double progress) const;

 private:
  [[nodiscard]] Config pick(const JobRecord& job, const Placement& placement, int epoch) const;
  // The best of the candidate batches ranked by the gain at the statistics of `stats_batch`.
  [[nodiscard]] Config rank(const JobRecord& job, const Placement& placement, int epoch, double stats_batch) const;
  struct Candidate {
    int atomic = 0, accum = 0;
    double score = 0;  // gain at the statistics of stats_batch per second; 0: none valid
  };
  // goodput.py optimize: the best of candidates(job, replicas), the k-th timed by times[k].
  [[nodiscard]] Candidate search(const JobRecord& job, int replicas, int epoch, double stats_batch,
                                 const std::vector<StepTimes>& times) const;
  [[nodiscard]] const PolluxApplicationSettings& settings(const JobRecord& job) const;
  [[nodiscard]] Config evaluate(const JobRecord& job, const Placement& placement, int atomic, int accum,
                                int epoch) const;

  const PolluxSpeedModel* speed_;
  PolluxSettings settings_;
  bool running_batch_ = false;  // rank_at_running_batch
  // best() by (application, GPUs per node sorted, epoch): jobs of one application share it.
  mutable std::map<std::tuple<std::string, std::vector<int>, int>, Config> cache_;
  // rates(): per application, per epoch, [nodes × 65 + replicas]; NaN: not computed yet.
  mutable std::map<std::string, std::vector<std::vector<double>>> rates_;
  mutable std::map<std::string, std::vector<double>> ends_;  // epoch_ends() per application
  mutable std::map<std::pair<std::string, int>, std::vector<BatchCandidate>> candidates_;
};

// Balanced placement shape of `replicas` on `nodes` nodes (servers 0…nodes−1): "5 on 2" → 3 + 2.
[[nodiscard]] Placement balanced_placement(int nodes, int replicas);

}  // namespace dnnsim
