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
//   2. read its options from SchedulerParams in its factory (unread keys are reported as unknown);
//   3. add one line to register_builtin_schedulers() in planners/jobs/job_scheduler.cpp:
//        registry.add("name", "one-line description", "paper, section", factory);
// Helpers for the common pattern "serve jobs in a priority order, gang-allocated, preempting what
// no longer fits" are in planners/jobs/priority_allocation.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/registry.hpp"
#include "planners/jobs/cluster_state.hpp"
#include "planners/jobs/placement.hpp"

namespace dnnsim {

class JobSpeedModel;

// A scheduler's options from the scenario's `scheduler:` section: numbers, number lists, and files
// (a string value is a file path, resolved against the scenario's folder by the reader: a learned
// policy, the tables an interference model is fitted on). Reading a key marks it used; unused()
// lists those nobody read, for "unknown scheduler option".
class SchedulerParams {
 public:
  SchedulerParams() = default;
  void set(const std::string& key, std::vector<double> values, SourceLocation where = {});
  void set_file(const std::string& key, std::string path, SourceLocation where = {});
  // @throw InputError when present but not a single number / not within [min, max].
  [[nodiscard]] double number(const std::string& key, double fallback, double min, double max) const;
  [[nodiscard]] std::vector<double> list(const std::string& key, std::vector<double> fallback) const;
  // The resolved path, or nullopt when absent. @throw InputError when the value is a number.
  [[nodiscard]] std::optional<std::string> file(const std::string& key) const;
  [[nodiscard]] std::vector<std::string> unused() const;
  [[nodiscard]] SourceLocation where(const std::string& key) const;
  // The scheduler's section itself, for a required option that is missing.
  void set_origin(SourceLocation where) { origin_ = std::move(where); }
  [[nodiscard]] const SourceLocation& origin() const { return origin_; }

 private:
  struct Value {
    std::vector<double> numbers;
    std::optional<std::string> file;
    SourceLocation where;
  };
  std::map<std::string, Value> values_;
  mutable std::set<std::string> read_;
  SourceLocation origin_;
};

// The training side of a learned scheduler (planners/jobs/marl/marl_policy.hpp): `dnnsim
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
};

// What a scheduler factory gets: its options, the placement policy it must place through, and the
// speed model (for schedulers that reason about speed: Optimus, heterogeneity-aware ones).
struct SchedulerContext {
  const SchedulerParams& params;
  const PlacementPolicy& placement;
  const JobSpeedModel& speed;
  std::uint64_t seed = 0;
  LearningEpisode* learning = nullptr;  // set only in train-scheduler's episodes
};

using SchedulerFactory = std::function<std::unique_ptr<JobScheduler>(const SchedulerContext&)>;
using SchedulerRegistry = Registry<SchedulerFactory>;

void register_builtin_schedulers(SchedulerRegistry& registry);
[[nodiscard]] const SchedulerRegistry& builtin_schedulers();

}  // namespace dnnsim
