// `dnnsim train-scheduler`: trains the multi-agent scheduler's policy (planners/jobs/marl/) with
// dnnsim as its environment. Each episode is a whole cluster run of the scenario (workload.scheduler
// `marl`) with its own seed — `workload.seed` = seed + episode, so a generated job stream differs per
// episode — in a forked child (one SimGrid engine per process); the child samples actions, computes
// its episode's actor-critic gradient and sends it back; the parent averages a batch of `parallel`
// episodes' gradients (in episode order) and takes one Adam step. Same scenario, seed and options →
// byte-identical policy and learning curve. With `imitate`, behaviour cloning of a teacher's episodes
// (planners/jobs/marl/teacher.hpp) comes first, in the same children. With `init`, training starts
// from a trained policy (fine-tuning) instead of fresh weights.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "planners/jobs/marl/policy.hpp"

namespace dnnsim {

struct TrainSchedulerOptions {
  std::string scenario;                // path
  std::vector<std::string> overrides;  // --set
  int episodes = 100;
  int parallel = 2;  // episodes per update, run at once
  std::uint64_t seed = 1;
  double learning_rate = 1e-3;
  double shaping = 1.0;  // weight of the shaping potential (MarlTrainingOptions::shaping)
  double entropy_weight = MarlTrainingOptions{}.entropy_weight;  // β of the actor-critic loss
  // Imitation pre-training: `imitate_episodes` episodes of the teacher (marl_teacher; "" none) cloned
  // first, each batch one Adam step on the cross-entropy of its actions (own optimizer); the policy
  // they give is written beside the final one (imitated_path_for), and the actor-critic episodes follow. Episodes are
  // numbered across both phases (stream seed + episode).
  std::string imitate;
  int imitate_episodes = 100;
  double imitate_learning_rate = 3e-3;  // Adam's step size while cloning
  // DAgger (policy.hpp): imitation episode m's decisions are the teacher's with probability
  // β_m = imitate_dagger^m, else the policy's (sampled), all labelled by the teacher. 1: cloning alone.
  double imitate_dagger = 1.0;
  // DAgger's aggregation: after each imitation batch's step, this many more Adam steps, each on the
  // cloning loss of kImitationMinibatch states drawn (seeded, with replacement) from every imitation
  // episode's labelled states so far. 0: each episode's own step alone.
  int imitate_aggregate = 0;
  // A policy file to start from instead of fresh weights from `seed` (the scenario's `policy` option
  // checks it: a policy of another cluster or `remote` option is its located error); "" none.
  std::string init;
  // A teacher (marl_teacher) that labels the actor-critic episodes' states: their rows record its
  // agreement with the policy's most probable action and its cross-entropy; it changes training only
  // through imitation_weight. "" none (both 0).
  std::string agreement_with;
  // λ: the actor-critic loss adds λ × that cross-entropy (MarlTrainingOptions::imitation_weight).
  double imitation_weight = 0.0;
  // Every this many episodes (counted across the phases), the policy after the update that completes
  // them is written beside the final one (checkpoint_path_for), for judging it along the way. 0: none.
  int checkpoint_every = 0;
  std::string out;  // the policy file; the curve goes beside it (.csv)
  std::ostream* progress = nullptr;
};

inline constexpr std::size_t kImitationMinibatch = 128;

struct EpisodeRecord {
  bool imitation = false;  // a teacher's episode (phase "imitate"), else actor-critic ("train")
  int episode = 0;
  std::uint64_t seed = 0;
  double mean_jct_s = 0.0;
  double episode_return = 0.0;
  double loss = 0.0;
  double entropy = 0.0;
  double cross_entropy = 0.0;  // of the teacher's actions (imitation or agreement_with), else 0
  std::size_t steps = 0;
  double teacher_share = 0.0;  // β: the share of decisions the teacher took (imitation: 1 unless DAgger)
  // imitation or agreement_with: the share of steps whose most probable action is the teacher's
  double agreement = 0.0;
};

struct TrainSchedulerResult {
  std::vector<EpisodeRecord> curve;
  std::string policy_path;
  std::string curve_path;
  std::string imitated_path;  // the policy after the imitation phase alone ("" without one)
  bool interrupted = false;  // Ctrl-C: the policy of the updates done so far was written
};

// @throw InputError for a bad scenario, one whose scheduler is not `marl`, or an `init` policy it
// refuses (nothing trained); std::invalid_argument for an unknown teacher.
TrainSchedulerResult train_scheduler(const TrainSchedulerOptions& options);

// "<policy without .pt>.curve.csv"
[[nodiscard]] std::string curve_path_for(const std::string& policy_path);
// "<policy without .pt>.imitated.pt"
[[nodiscard]] std::string imitated_path_for(const std::string& policy_path);
// "<policy without .pt>.ep<episodes>.pt"
[[nodiscard]] std::string checkpoint_path_for(const std::string& policy_path, int episodes);

}  // namespace dnnsim
