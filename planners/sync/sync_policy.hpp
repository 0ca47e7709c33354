// Parameter synchronisation policies of parameter-server training (workload kind parameter_server,
// docs/parameter-server.md): when a worker commits its accumulated update, whether the server
// averages a round of commits or applies each one at once, and when it lets a worker pull again.
// The policies are pure decisions; sim/workloads/parameter_server moves the bytes and the time, and
// models/sync/statistical_efficiency.hpp prices each applied update.
//
// Adding a policy: a SyncPolicy subclass with its declared options in sync_policy.cpp and one
// `registry.add(...)` line in register_builtin_sync_policies().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "models/common/units.hpp"

namespace dnnsim {

class SyncPolicy {
 public:
  virtual ~SyncPolicy() = default;

  // True: the server waits for one commit from every worker, averages them into one update (a
  // round) and then answers every worker (BSP, periodic averaging). False: it applies each commit
  // as it arrives (ASP, SSP, ADSP) and answers when may_release allows.
  [[nodiscard]] virtual bool synchronous() const = 0;

  // After worker `worker` finished a local step: commit now? `steps` local steps since its last
  // commit (≥ 1), `since_commit` seconds since its last commit ended, `commit_cost` the duration of
  // its last push + pull (0 before the first).
  [[nodiscard]] virtual bool commit_after_step(int worker, long steps, double since_commit,
                                               double commit_cost) const = 0;

  // Asynchronous policies: may the server answer `worker`'s pull now, given every worker's commits
  // so far? SSP holds a worker that has committed more than s steps beyond the slowest.
  [[nodiscard]] virtual bool may_release(int worker, const std::vector<long>& commits) const;

  // Policies that adapt (ADACOMM's τ, ADSP's commit rate) are told the global loss every
  // tick_period() seconds of simulated time; 0: never.
  [[nodiscard]] virtual double tick_period() const { return 0; }
  virtual void on_tick(double now, double loss);

  // What the policy has decided so far, for reports ("τ 8 → 3", "commit rate 4/Γ after 2 searches").
  [[nodiscard]] virtual std::string state() const { return {}; }
};

// What a policy is made with besides its declared options (Registry::Entry::options, read from the
// scenario's `sync:` section): the workload's target loss, which ADSP's reward predicts the time to.
struct SyncContext {
  double target_loss = 0;
};

using SyncPolicyFactory =
    std::function<std::unique_ptr<SyncPolicy>(const Options& options, const SyncContext& context)>;
using SyncPolicyRegistry = Registry<SyncPolicyFactory>;

void register_builtin_sync_policies(SyncPolicyRegistry& registry);
[[nodiscard]] const SyncPolicyRegistry& builtin_sync_policies();

// ADSP's probe reward (strain.py): fit l(t) = 1/(a·t + b) + c to the loss at the start, middle and end
// of a probe of length h (three points, equally spaced: c has a closed form, see the .cpp), predict
// the time t* from the probe's start to `target`, reward 1/t*. When the three points admit no such
// curve (the loss fell linearly, or the fitted floor is not below the target), the reward
// extrapolates the mean rate of descent; 0 when the loss did not fall.
[[nodiscard]] double adsp_probe_reward(double l0, double l1, double l2, double h, double target);

}  // namespace dnnsim
