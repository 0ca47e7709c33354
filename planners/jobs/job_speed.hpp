// How fast a job trains on a placement, in iterations per second. Two kinds of source share this
// interface (docs/cluster.md "Job speed"):
//   measured tables  Pollux's per-placement step/sync times and Gavel's per-GPU-type throughputs
//                    (planners/jobs/measured_speed.hpp), to replay published comparisons on their
//                    own terms;
//   dnnsim           analytical iteration time from the cost models for the placement (compute on
//                    the GPU types + ring all-reduce over the links), memoised by (model, batch,
//                    placement shape, GPU types).
// With the network simulated, the cluster simulation uses split() to run compute as SimGrid
// executions and the synchronisation as real flows; speed() is then only the solo (uncontended) rate.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/registry.hpp"
#include "models/common/units.hpp"
#include "planners/jobs/cluster_state.hpp"

namespace dnnsim {

// One iteration of a job on a placement, uncontended.
struct IterationCost {
  Seconds compute;   // forward + backward (+ optimizer), slowest replica
  Seconds sync;      // gradient synchronisation when alone on the links
  Bytes sync_bytes;  // bytes each replica sends per iteration (ring all-reduce: 2(n-1)/n × gradients)
  // Parameter-server jobs (parameter_server.hpp): the backward part of `compute`, which the push/pull
  // overlaps (`sync` is then only what is left exposed), and the gradient bytes each worker pushes
  // (and pulls) per iteration. 0 for ring all-reduce jobs.
  Seconds backward{0};
  Bytes ps_bytes{0};
  [[nodiscard]] Seconds total() const { return compute + sync; }
};

// A span of a job's work, [previous segment's `to`, `to`), run at `rate` units of work per second.
struct ProgressSegment {
  double to = 0;
  double rate = 0;
};

class JobSpeedModel {
 public:
  virtual ~JobSpeedModel() = default;
  // @throw InputError (at job.where) when the model cannot price this job (unknown application).
  [[nodiscard]] virtual IterationCost iteration(const JobRecord& job, const Placement& placement,
                                                const std::vector<ServerInfo>& servers) const = 0;
  // Which models it knows (for the workload map and messages); empty = any zoo model.
  [[nodiscard]] virtual std::vector<std::string> models() const { return {}; }
  // The job's work in iterations when the model knows it (Pollux: iterations to the target metric at
  // the job's batch size); nullopt = from the trace (iterations, or duration × solo speed).
  [[nodiscard]] virtual std::optional<double> iterations_to_target(const JobRecord&) const { return std::nullopt; }
  // Whether a job's work is statistical progress rather than iterations (Pollux's TunedJobs
  // accounting): then iterations_to_target() is the progress to reach and progress_curve() how fast
  // it grows on a placement.
  [[nodiscard]] virtual bool counts_progress() const { return false; }
  // The job's rate of progress on `placement` from `progress` to its target, segment by segment
  // (empty when the work is iterations).
  [[nodiscard]] virtual std::vector<ProgressSegment> progress_curve(const JobRecord&, const Placement&,
                                                                    double /*progress*/) const {
    return {};
  }
  // Iterations left to the target as a scheduler estimates them (Optimus' remaining time) after
  // `done` of `total` work: what is left, or, when the work is progress, the iterations the
  // validation file counts after the epoch reached (the artifact's optimus.py).
  [[nodiscard]] virtual double iterations_left(const JobRecord&, double done, double total) const {
    return total - done;
  }
  // How many times slower `victim` runs while it shares its GPU (one GPU each, on `gpu_type`) with
  // `aggressor`, as measured; nullopt when the model has no such measurement, and then the job is not
  // packed (Gandiva's packing, planners/jobs/builtin_schedulers.cpp).
  [[nodiscard]] virtual std::optional<double> packed_slowdown(const JobRecord& /*victim*/,
                                                              const JobRecord& /*aggressor*/,
                                                              const std::string& /*gpu_type*/) const {
    return std::nullopt;
  }

  // Pollux's measured tables, when that is what this model replays (Pollux's goodput model reads
  // them); null otherwise.
  [[nodiscard]] virtual const class PolluxSpeedModel* pollux_tables() const { return nullptr; }
  // Whether it needs each job's model (the workload's `models` mix); a duration replay does not.
  [[nodiscard]] virtual bool needs_job_models() const { return true; }
  // Whether it prices parameter-server jobs (JobRecord::ps_per_worker > 0): their push/pull.
  [[nodiscard]] virtual bool prices_parameter_servers() const { return false; }

  [[nodiscard]] double iterations_per_second(const JobRecord& job, const Placement& placement,
                                             const std::vector<ServerInfo>& servers) const {
    return 1.0 / iteration(job, placement, servers).total().value();
  }
};

// Speed independent of placement: one iteration per second, so iterations = trace duration and a job
// runs exactly its trace duration wherever it is placed — the "duration replay" of Tiresias' and
// Helios' simulators, and the job-level mode for huge replays.
class DurationSpeedModel final : public JobSpeedModel {
 public:
  [[nodiscard]] IterationCost iteration(const JobRecord& job, const Placement& placement,
                                        const std::vector<ServerInfo>& servers) const override;
  [[nodiscard]] bool needs_job_models() const override { return false; }
};

}  // namespace dnnsim
