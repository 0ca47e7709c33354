// The multi-agent scheduler's networks and their actor-critic training, on libtorch (Debian
// libtorch-dev 1.13, C++ API, in the plugin planners/torch/), -like reconstruction of Zhao & Wu, IEEE TNSM 2021 (arXiv
// 2112.13354; papers-cluster.md §2 [D]):
//   hierarchical encoder  level 1, per server graph: GPU nodes → h = relu(W₁x), one round of
//                         mean-neighbour message passing h' = relu(W₂[h ‖ mean_server(h)]), pooled
//                         per server; level 2, the data-centre graph: server embedding
//                         e_s = relu(W₃[pool ‖ server features]), rack e_r = relu(W₄ mean_rack(e_s)),
//                         cluster e_g = mean(e_r);
//   actors (decentralised, parameters shared by the agents; an agent's mask keeps it to its own
//                         partition)  logits per server for "place" and "pack" from
//                         MLP([e_s ‖ e_r(s) ‖ e_g ‖ candidate ‖ action features]) for every
//                         waiting candidate of the agent's window, "stop" from
//                         MLP([e_g ‖ mean of the candidates]); softmax over the feasible actions;
//   critic (centralised)  V = MLP([e_g ‖ queue]) over the whole cluster;
//   training              advantage actor-critic (A2C, Mnih et al. ICML'16) on whole episodes with
//                         potential-based reward shaping (Ng, Harada & Russell, ICML'99, Theorem 1:
//                         adding F = γ^Δt·Φ(s′) − Φ(s) keeps the optimal policies):
//                         r_k = −∫ load dt over [t_k, t_{k+1}) + γ^{(t_{k+1} − t_k)/1 h}·Φ_{k+1} − Φ_k,
//                         Φ_k = −w·(predicted remaining job-hours of the jobs in the system) / GPUs
//                         before step k's action (the scheduler's prediction; w = `shaping`),
//                         Φ = 0 after the last;
//                         G_k = r_k + γ^{(t_{k+1} − t_k)/1 h} G_{k+1} (discounted by simulated time),
//                         A_k = G_k − V_k standardised over the episode,
//                         loss = −mean(log π(a_k)·A_k) − β·mean(H_k) + c·mean((G_k − V_k)²);
//                         Adam (Kingma & Ba) on the gradient averaged over the batch's episodes,
//                         its norm clipped at 1; optionally + λ·(−mean log π(a_teacher,k)), a
//                         teacher's labels on the visited states (MarlTrainingOptions::imitation_weight);
//   warm start            optional behaviour cloning first (teacher.hpp): in a teacher's episodes
//                         loss = −mean log π(a_teacher,k) + c·mean((G_k − V_k)²); with DAgger
//                         (Ross, Gordon & Bagnell, AISTATS'11, Algorithm 3.1) imitation episode m
//                         acts by the teacher with probability β_m = p^m per decision, else by the
//                         policy (sampled), and the teacher labels every visited state: the loss is
//                         the same on the states the policy itself reaches. Each episode is one
//                         Adam step on its own states; with DAgger's aggregation (train_scheduler.hpp)
//                         K more follow, each on a minibatch drawn from every episode's labelled
//                         states so far (imitation_gradient).
// Episodes run in child processes (one SimGrid engine per process): the child computes its
// episode's gradient (LearningEpisode) and the parent applies it (MarlOptimizer). The networks live in
// the libtorch plugin (torch_plugin.hpp); these classes hold the rest (sampling, rewards, returns).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/random.hpp"
#include "planners/jobs/cluster_state.hpp"
#include "planners/jobs/marl/observation.hpp"
#include "planners/jobs/marl/teacher.hpp"
#include "planners/jobs/marl/torch_plugin.hpp"

namespace dnnsim {

// The cluster a policy is trained for, as its file records it: the server count, then each server in
// index order as "rack:GPUs×type" — "8 servers: 0:4×V100-16GB 0:4×V100-16GB 1:4×P100 …".
[[nodiscard]] std::string marl_cluster_key(const std::vector<ServerInfo>& servers);

// The scheduler's `remote` option (marl_scheduler.hpp), which decides the agents' masks: a policy is
// trained under one and its file records it. A file without the line predates the option and was
// trained with the first.
inline constexpr std::string_view kMarlRemoteWhenPartitionFull = "when_partition_full";
inline constexpr std::string_view kMarlRemoteWhenNoLocalFit = "when_no_local_fit";

struct LabelledState;
struct ImitationGradient;

class MarlPolicy {
 public:
  // Fresh weights drawn from `seed` (torch's default initialisation under torch::manual_seed), for no
  // cluster in particular (untrained: any cluster may use it).
  explicit MarlPolicy(std::uint64_t seed);
  // A file of save(): a line with the format, one with the cluster, one with the `remote` option
  // (absent in older files), then libtorch's archive.
  // @throw std::runtime_error when the file is not a policy of this architecture.
  static MarlPolicy load(const std::string& path);
  // `cluster`: marl_cluster_key of the cluster it was trained on, `remote` the scheduler's option it
  // was trained with ("" and "" for none: untrained).
  void save(const std::string& path, const std::string& cluster, const std::string& remote) const;
  [[nodiscard]] const std::string& cluster() const { return cluster_; }
  [[nodiscard]] const std::string& remote() const { return remote_; }
  // Whether it may schedule these servers: trained on the same cluster, or on none.
  [[nodiscard]] bool trained_for(const std::vector<ServerInfo>& servers) const;
  // Whether it may run under this `remote` option: trained with it, or not trained at all.
  [[nodiscard]] bool trained_with_remote(std::string_view remote) const;

  // The most probable feasible action (lowest index on ties).
  [[nodiscard]] int greedy(const MarlObservation& observation) const;
  [[nodiscard]] std::size_t parameter_count() const;

 private:
  MarlPolicy(std::shared_ptr<MarlNetwork> net, std::string cluster, std::string remote)
      : net_(std::move(net)), cluster_(std::move(cluster)), remote_(std::move(remote)) {}
  std::shared_ptr<MarlNetwork> net_;
  std::string cluster_;
  std::string remote_;
  friend class LearningEpisode;
  friend class MarlOptimizer;
  friend ImitationGradient imitation_gradient(const MarlPolicy&, const std::vector<const LabelledState*>&);
};

struct MarlTrainingOptions {
  double gamma = 0.9;            // discount per hour of simulated time (horizon ≈ 10 h)
  double entropy_weight = 0.01;  // β
  double value_weight = 0.5;     // c
  double learning_rate = 1e-3;
  // w: the potential is w·Φ. Any w ≥ 0 keeps the optimal policies (Ng et al., Theorem 1 holds for
  // every potential); a larger w makes the dense prediction outweigh the load integral's noise early.
  double shaping = 1.0;
  // Imitation pre-training (behaviour cloning, teacher.hpp): the episode takes the teacher's actions,
  // not sampled ones, and its loss is their cross-entropy under the policy, −mean log π(a_teacher | mask),
  // plus c·mean((G − V)²) so that the critic learns the teacher's (shaped) returns; null: actor-critic.
  MarlTeacher teacher = nullptr;
  // DAgger: the probability β that a decision of an imitation episode is the teacher's; else the
  // policy's, sampled, with the teacher's action still the label. 1: behaviour cloning.
  double teacher_share = 1.0;
  // Keep each imitation step's observation and label (Result::labelled), for training on the
  // aggregate of episodes (imitation_gradient).
  bool keep_labelled = false;
  // Actor-critic episodes: a teacher that labels each state for Result::agreement and
  // Result::cross_entropy; it does not act, and enters the loss only through imitation_weight, so
  // with a weight of 0 the episode is the same with or without it. Null: neither.
  MarlTeacher monitor = nullptr;
  // λ of the behaviour-cloning regulariser towards the monitor's labels on the visited states:
  // loss + λ·(−mean log π(a_monitor)) (an imitation-augmented policy gradient: Rajeswaran et al.,
  // RSS 2018, "DAPG", there on demonstration states; here on the policy's own, as DAgger's labels).
  double imitation_weight = 0.0;
};

// A state the teacher labelled: the observation and the teacher's action in it.
struct LabelledState {
  MarlObservation observation;
  int label = 0;
};

// Byte encoding of labelled states, for the training child to send them to its parent.
void append_labelled(std::string& bytes, const LabelledState& state);
// Decodes the states of `bytes` from `offset` to its end. @throw std::runtime_error when malformed.
[[nodiscard]] std::vector<LabelledState> read_labelled(std::string_view bytes, std::size_t offset);

// The gradient of the behaviour-cloning loss −mean log π(label | state) over `states` (the actor's
// alone: no returns, the critic's gradient is zero), flattened in parameter order; and that loss.
struct ImitationGradient {
  std::vector<float> gradient;
  double cross_entropy = 0.0;
};
[[nodiscard]] ImitationGradient imitation_gradient(const MarlPolicy& policy,
                                                   const std::vector<const LabelledState*>& states);

// One training episode: actions sampled from the policy with a seeded generator, each step's
// log-probability, entropy and value kept with their autograd graph, rewards attributed to steps.
class LearningEpisode {
 public:
  LearningEpisode(const MarlPolicy& policy, std::uint64_t seed, MarlTrainingOptions options = {});
  LearningEpisode(const LearningEpisode&) = delete;
  LearningEpisode& operator=(const LearningEpisode&) = delete;

  // Samples an action (the teacher's, when imitating; with probability 1 − teacher_share the
  // policy's) in a state whose potential Φ (above: minus the predicted remaining job-hours per GPU)
  // is `potential`. When imitating, the recorded (labelled) action is the teacher's either way.
  int sample(const MarlObservation& observation, double potential);
  // The reward is minus the jobs in the system over time (Σ JCT, Little's law), per GPU and hour:
  // at each scheduling event the scheduler reports the time and its load n / GPUs, and the interval
  // since the previous report, −load·Δt/3600, goes to the latest step (before the first step it is
  // dropped: no action caused it). finish() closes the last interval at the end of the run.
  void advance(double now_s, double load);

  struct Result {
    std::vector<float> gradient;  // of the loss, flattened in parameter order
    double episode_return = 0.0;  // undiscounted Σ r, unshaped (−∫ load dt)
    std::vector<double> returns;  // G_k of each step (shaped, discounted)
    double loss = 0.0;
    double entropy = 0.0;        // mean over the steps
    double cross_entropy = 0.0;  // imitation or monitor: −mean log π(a_teacher)
    double agreement = 0.0;      // imitation or monitor: the share of steps whose most probable action is the label
    std::size_t steps = 0;
    std::vector<LabelledState> labelled;  // with keep_labelled: every step's state and label
  };
  // Backpropagates the episode's loss; an episode without steps has a zero gradient.
  [[nodiscard]] Result finish(double end_s);

 private:
  int record(int action, double potential);
  int draw(const MarlObservation& observation, const std::vector<double>& probabilities);
  std::size_t agreements_ = 0;  // imitation or monitor: steps whose most probable action is the label
  std::vector<LabelledState> labelled_;
  std::unique_ptr<PolicyTape> tape_;
  std::vector<double> reward_;     // per step, unshaped
  std::vector<double> time_;       // simulated seconds of each step
  std::vector<double> potential_;  // Φ of each step's state
  SplitMix64 rng_;
  MarlTrainingOptions options_;
  double last_time_ = 0.0;
  double last_load_ = 0.0;
  std::size_t parameters_;
};

// Adam over the policy's parameters; apply() takes a flattened gradient (an average of episodes').
class MarlOptimizer {
 public:
  MarlOptimizer(MarlPolicy& policy, double learning_rate);
  void apply(const std::vector<float>& gradient);

 private:
  std::unique_ptr<PolicyOptimizer> optimizer_;
};

}  // namespace dnnsim
