// Job schedulers: one interface, one registry (`dnnsim list schedulers`).
//
// The cluster simulation calls decide() on every job arrival, every completion and, when round()
// is set, every round (a periodic event, e.g. Pollux's and Gandiva's 60 s). The scheduler sees a
// pure ClusterState and returns decisions, applied in order:
//   start    a queued job on a placement (its GPUs must be free after the preceding decisions);
//   preempt  a running job: checkpoint, release its GPUs, back to the queue (progress kept, the
//            configured restart cost is paid when it starts again);
//   migrate  a running job to another placement (checkpoint + restart at once, same cost);
//   pack     a queued single-GPU job onto the GPU of a running single-GPU job that is not packed:
//            both run on, each slowed by the speed model's packed_slowdown; when either ends or is
//            preempted the other runs alone again.
// Decisions that break these rules are a bug in the scheduler: the simulation throws logic_error.
//
// To add a scheduler (issue 13's GADGET, MARL, SMD, online PS build on this):
//   1. implement JobScheduler in planners/jobs/<name>.cpp/.hpp (pure C++, no SimGrid);
//   2. declare its options (models/common/options.hpp) beside it and read them from
//      SchedulerContext::options in its factory;
//   3. add one line to register_builtin_schedulers() in planners/jobs/builtin_schedulers.cpp:
//        registry.add("name", "one-line description", "paper, section", factory, its_options());
// Helpers for the common pattern "serve jobs in a priority order, gang-allocated, preempting what
// no longer fits" are in planners/jobs/priority_allocation.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "planners/jobs/cluster_state.hpp"
#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/placement.hpp"

namespace dnnsim {

class PolluxGoodput;

// The training side of a learned scheduler (planners/jobs/marl/policy.hpp): `dnnsim
// train-scheduler` runs each episode with one, and the scheduler then samples its actions and records
// them for the policy-gradient update instead of acting greedily on a policy file.
class LearningEpisode;

class JobScheduler {
 public:
  virtual ~JobScheduler() = default;
  [[nodiscard]] virtual std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) = 0;
  // Period of `round` events; nullopt = only arrivals and completions.
  [[nodiscard]] virtual std::optional<Seconds> round() const { return std::nullopt; }
  // Called on every arrival and completion, even with nothing queued (a learner accounting the jobs
  // in the system between events); false: only when something waits.
  [[nodiscard]] virtual bool observes_every_event() const { return false; }
  // A learned policy that `dnnsim train-scheduler` trains (its episodes give it a LearningEpisode).
  [[nodiscard]] virtual bool trainable() const { return false; }
  // A scheduler whose jobs adapt their batch size to their allocation (Pollux): their work is progress
  // in this model's units and their speed on a placement its goodput, epoch by epoch; null: jobs run
  // at the speed model's rate.
  [[nodiscard]] virtual const PolluxGoodput* goodput() const { return nullptr; }
  // A scheduler whose jobs re-choose their batch size as they run (Pollux's agent with its fitted
  // throughput model): the job's progress curve on its placement from its progress, asked when it starts
  // and, while it runs, after every round; the job goes on at a changed curve without a restart.
  // nullopt: goodput()'s curve for the placement, fixed for the attempt.
  [[nodiscard]] virtual std::optional<std::vector<ProgressSegment>> adapted_curve(const JobView& /*job*/) {
    return std::nullopt;
  }
};

// What a scheduler factory gets: its declared options (read from the scenario's `scheduler:` section),
// the placement policy it must place through, and the speed model (for schedulers that reason about
// speed: Optimus, heterogeneity-aware ones).
struct SchedulerContext {
  const Options& options;
  const PlacementPolicy& placement;
  const JobSpeedModel& speed;
  std::uint64_t seed = 0;
  LearningEpisode* learning = nullptr;  // set only in train-scheduler's episodes
  // The cluster's servers as ClusterState will show them, when known before the run (the scenario's
  // check and the run): a scheduler whose input depends on the cluster checks it here.
  const std::vector<ServerInfo>* servers = nullptr;
};

using SchedulerFactory = std::function<std::unique_ptr<JobScheduler>(const SchedulerContext&)>;
using SchedulerRegistry = Registry<SchedulerFactory>;

void register_builtin_schedulers(SchedulerRegistry& registry);
[[nodiscard]] const SchedulerRegistry& builtin_schedulers();

}  // namespace dnnsim
