// The multi-agent scheduler's imitation pre-training without an engine: the consolidating teacher's
// action on hand-built observations, and behaviour cloning's loss on it (planners/jobs/marl/teacher.hpp,
// policy.hpp).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "planners/jobs/marl/policy.hpp"
#include "planners/jobs/marl/teacher.hpp"

namespace dnnsim {
namespace {

// One rack of three servers of 4 GPUs with 4, 1 and 2 free (free shares 1, 0.25, 0.5; GPU count
// feature 4/4 = 1, so the teacher's free-GPU scale is 1, 0.25, 0.5); two candidates, a 2-GPU job
// then a 1-GPU job. Place is offered on every server for both (their anchored placements: the
// 2-GPU job fits alone on servers 0 and 2, spans 2 servers from server 1); no packing.
// Actions (observation.hpp): c·2S + s place, c·2S + S + s pack, 2·2·3 = 12 stop.
MarlObservation three_servers() {
  constexpr int S = 3, C = 2;
  MarlObservation o;
  o.servers = S;
  o.racks = 1;
  o.candidates = C;
  o.gpu.assign(12 * MarlObservation::kGpuFeatures, 0.0f);
  o.gpu_server = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  o.server = {1.0f, 1.0f, 1.0f, 1.0f, 0.25f, 1.0f, 1.0f, 1.0f, 0.5f, 1.0f, 1.0f, 1.0f};
  o.server_rack = {0, 0, 0};
  o.job = {0.5f, 0.7f, 0.1f, 0.1f, 0.2f, 0.0f, 0.25f, 0.3f, 0.2f, 0.2f, 0.1f, 0.125f};
  o.place_action.assign(C * S * MarlObservation::kActionFeatures, 0.0f);
  o.pack_action.assign(C * S * MarlObservation::kActionFeatures, 0.0f);
  // [fits alone, servers spanned / GPUs, speed relative to solo, 0]
  const float place[C][S][2] = {{{1, 0.5f}, {0, 1.0f}, {1, 0.5f}}, {{1, 1}, {1, 1}, {1, 1}}};
  for (int c = 0; c < C; ++c)
    for (int s = 0; s < S; ++s) {
      float* f = &o.place_action[static_cast<std::size_t>((c * S + s) * MarlObservation::kActionFeatures)];
      f[0] = place[c][s][0];
      f[1] = place[c][s][1];
      f[2] = 1.0f;
    }
  o.queue = {0.1f, 0.2f, 0.2f};
  o.mask.assign(static_cast<std::size_t>(o.actions()), 0);
  for (int c = 0; c < C; ++c)
    for (int s = 0; s < S; ++s) o.mask[static_cast<std::size_t>(o.place_action_of(c, s))] = 1;
  return o;
}

// First-fit with backfill, best fit: candidate 0 (first in arrival order) is placeable; of its
// servers, 0 and 2 fit it alone, and server 2 leaves fewer GPUs free (0.5 < 1): action 0·6 + 2 = 2.
// With candidate 0 not placeable (masked: it needs more GPUs than are free), the backfill is
// candidate 1 on server 1, the fullest it fits on alone (0.25): 1·6 + 1 = 7. With nothing placeable
// and stop offered: stop, 12, even where packing is offered (the teacher never packs).
int teach(std::string_view teacher, const MarlObservation& o) { return (*marl_teacher(teacher))(o); }

TEST(MarlTeacher, ConsolidateIsFirstFitWithBackfillAndBestFitShortestFirstReorders) {
  auto o = three_servers();
  EXPECT_EQ(teach("consolidate", o), 2);
  // Shortest-first: candidate 1's remaining-time feature (0.3) is below candidate 0's (0.7), and its
  // best fit is server 1: 7.
  EXPECT_EQ(teach("shortest-first", o), 7);
  for (int s = 0; s < 3; ++s) o.mask[static_cast<std::size_t>(o.place_action_of(0, s))] = 0;
  EXPECT_EQ(teach("consolidate", o), 7);
  for (int s = 0; s < 3; ++s) o.mask[static_cast<std::size_t>(o.place_action_of(1, s))] = 0;
  o.mask[static_cast<std::size_t>(o.pack_action_of(1, 1))] = 1;
  o.mask[static_cast<std::size_t>(o.stop_action())] = 1;
  EXPECT_EQ(teach("consolidate", o), 12);
  EXPECT_FALSE(marl_teacher("nobody").has_value());
}

// The agent's partition is server 1 alone (1 free GPU): place is offered there only. Candidate 0
// (2 GPUs) would span servers from there (fits-alone 0), candidate 1 (1 GPU) fits. Consolidate serves
// arrival order: candidate 0 on server 1, action 0·6 + 1 = 1. Fit-first serves first the candidates
// that fit alone where they may go: candidate 1 on server 1, 1·6 + 1 = 7.
// Then candidate 1 is 3 GPUs (job feature 3/4) and spans from server 1 too: none fits alone in the
// partition. With server 0 at 4 free GPUs both would fit alone outside it (0: on servers 0 and 2,
// 1: on server 0), so fit-first places the smaller, candidate 0, on server 1 (action 1), leaving the
// other to go where it fits once the partition is full. With server 0 at 1 free GPU candidate 1 fits
// alone nowhere in the cluster (1, 1, 2 free < 3) and spans under any placement: it goes first, 7.
TEST(MarlTeacher, FitFirstServesWhatFitsAloneFirstAndSpansOnlyWhatWouldSpanAnywhere) {
  auto o = three_servers();
  for (int c = 0; c < 2; ++c)
    for (int s : {0, 2}) o.mask[static_cast<std::size_t>(o.place_action_of(c, s))] = 0;
  EXPECT_EQ(teach("consolidate", o), 1);
  EXPECT_EQ(teach("fit-first", o), 7);
  o.job[MarlObservation::kJobFeatures] = 0.75f;
  o.place_action[static_cast<std::size_t>((1 * 3 + 1) * MarlObservation::kActionFeatures)] = 0.0f;
  EXPECT_EQ(teach("fit-first", o), 1);
  o.server[0] = 0.25f;
  EXPECT_EQ(teach("fit-first", o), 7);
}

// Shortest-fit-first: candidate 1 (remaining-time feature 0.3 < 0.7) fits alone on servers 0, 1 and
// 2; best fit is server 1 (1 free GPU): 7, as shortest-first.
// Packing (Gandiva-like, pack when the predicted combined throughput 1 + f[3] ≥ 1.2): nothing can be
// placed, stop is offered, and candidate 1 may pack on server 1 (predicted throughput 1.4) or 2 (1.6):
// the best partner, server 2: pack action 1·6 + 3 + 2 = 11. With both pairs predicted at 1.1 (a gain,
// but below the threshold) or below 1 (0.9, 0.95: packing would lose throughput), stop, 12; the
// non-packing teacher stops in either case.
TEST(MarlTeacher, PackingTeacherPacksWhenNothingFitsAndThePairIsPredictedToGain) {
  auto o = three_servers();
  EXPECT_EQ(teach("shortest-fit-first", o), 7);
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 3; ++s) o.mask[static_cast<std::size_t>(o.place_action_of(c, s))] = 0;
  o.mask[static_cast<std::size_t>(o.stop_action())] = 1;
  for (const auto& [s, gain] : {std::pair{1, 0.4f}, std::pair{2, 0.6f}}) {
    o.mask[static_cast<std::size_t>(o.pack_action_of(1, s))] = 1;
    o.pack_action[static_cast<std::size_t>((1 * 3 + s) * MarlObservation::kActionFeatures)] = 1.0f;
    o.pack_action[static_cast<std::size_t>((1 * 3 + s) * MarlObservation::kActionFeatures + 3)] = gain;
  }
  EXPECT_EQ(teach("fit-first-pack", o), 11);
  EXPECT_EQ(teach("fit-first", o), 12);
  for (const auto& gains : {std::array{0.1f, 0.1f}, std::array{-0.1f, -0.05f}}) {
    for (int s : {1, 2})
      o.pack_action[static_cast<std::size_t>((1 * 3 + s) * MarlObservation::kActionFeatures + 3)] =
          gains[static_cast<std::size_t>(s - 1)];
    EXPECT_EQ(teach("fit-first-pack", o), 12);
  }
}

// Behaviour cloning: an imitation episode takes the teacher's action whatever its seed, and its loss
// is CE = −log π(2) (finite: action 2 is feasible, so it has a probability > 0 under the mask). For a
// softmax, ∂CE/∂logit_a = π_a − [a = 2]: descending it raises the teacher's logit against the other
// feasible ones, so one small Adam step (the episode's gradient, clipped at norm 1, rate 1e-2) lowers
// CE, and repeated steps make the teacher's action the greedy one.
TEST(MarlTeacher, ACloningStepLowersTheTeachersCrossEntropy) {
  MarlPolicy policy(13);
  MarlTrainingOptions options;
  options.learning_rate = 1e-2;
  options.teacher = *marl_teacher("consolidate");
  MarlOptimizer optimizer(policy, options.learning_rate);
  const auto o = three_servers();
  const auto clone = [&](std::uint64_t seed) {
    LearningEpisode episode(policy, seed, options);
    episode.advance(0, 0.5);
    EXPECT_EQ(episode.sample(o, 0.0), 2);
    return episode.finish(3600);
  };
  const auto first = clone(1);
  ASSERT_EQ(first.steps, 1u);
  EXPECT_GT(first.cross_entropy, 0.0);
  EXPECT_LT(first.cross_entropy, 20.0);  // a finite probability under the mask
  optimizer.apply(first.gradient);
  const auto second = clone(2);
  EXPECT_LT(second.cross_entropy, first.cross_entropy);
  for (int step = 0; step < 40; ++step) optimizer.apply(clone(3 + static_cast<std::uint64_t>(step)).gradient);
  EXPECT_EQ(policy.greedy(o), 2);
  EXPECT_LT(clone(100).cross_entropy, first.cross_entropy);
}

// Nothing placeable, stop offered, packs offered for candidate 1 on servers 1 and 2 (as above, with
// predicted gains f[3] of gain1 and gain2), and a pack of candidate 0 on server 0 written with gain 0.9
// but masked (not offered). Actions: pack of candidate 1 on server s is 1·6 + 3 + s, stop 12.
MarlObservation nothing_placeable_two_packs(float gain1, float gain2) {
  auto o = three_servers();
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 3; ++s) o.mask[static_cast<std::size_t>(o.place_action_of(c, s))] = 0;
  o.mask[static_cast<std::size_t>(o.stop_action())] = 1;
  for (const auto& [s, gain] : {std::pair{1, gain1}, std::pair{2, gain2}}) {
    o.mask[static_cast<std::size_t>(o.pack_action_of(1, s))] = 1;
    o.pack_action[static_cast<std::size_t>((1 * 3 + s) * MarlObservation::kActionFeatures)] = 1.0f;
    o.pack_action[static_cast<std::size_t>((1 * 3 + s) * MarlObservation::kActionFeatures + 3)] = gain;
  }
  o.pack_action[0] = 1.0f;
  o.pack_action[3] = 0.9f;
  return o;
}

// DAgger (Ross et al. 2011): the teacher labels, the policy acts with probability 1 − β. On the
// bandit-like three-server state with nothing placeable and two packs offered, `consolidate` stops
// (12) whoever acts. β = 1: the teacher's stop, every seed. β = 0: the action an actor-critic episode
// of the same seed samples (the same one uniform draw), which for some of 40 seeds is a pack (the
// fresh policy gives each of the three feasible actions a share); the label and so the
// cross-entropy −log π(12) are the same as under β = 1: the same weights, state and label; the
// agreement is 1 exactly when the policy's greedy action is the label.
TEST(MarlTeacher, DaggerActsByThePolicyAndLabelsByTheTeacher) {
  const MarlPolicy policy(17);
  const auto o = nothing_placeable_two_packs(0.4f, 0.6f);
  const auto episode = [&](std::uint64_t seed, std::optional<double> teacher_share) {
    MarlTrainingOptions options;
    if (teacher_share) {
      options.teacher = *marl_teacher("consolidate");
      options.teacher_share = *teacher_share;
    }
    LearningEpisode learning(policy, seed, options);
    learning.advance(0, 0.5);
    const int action = learning.sample(o, 0.0);
    return std::pair{action, learning.finish(3600)};
  };
  bool policy_packed = false;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto [cloned, cloning] = episode(seed, 1.0);
    const auto [dagger, labelled] = episode(seed, 0.0);
    EXPECT_EQ(cloned, o.stop_action());
    EXPECT_EQ(dagger, episode(seed, std::nullopt).first);
    EXPECT_DOUBLE_EQ(labelled.cross_entropy, cloning.cross_entropy);
    EXPECT_EQ(labelled.agreement, policy.greedy(o) == o.stop_action() ? 1.0 : 0.0);
    policy_packed = policy_packed || dagger != o.stop_action();
  }
  EXPECT_TRUE(policy_packed);
}

// A monitor teacher labels the states of an actor-critic episode for its agreement alone: the same
// sampled action, loss and gradient as without it. In this state nothing can be placed and
// `consolidate` never packs, so its label is stop, and the agreement of the one-step episode is 1
// exactly when the policy's most probable action is stop.
TEST(MarlTeacher, AMonitorRecordsTheAgreementAndLeavesTheEpisodeAlone) {
  const MarlPolicy policy(17);
  const auto o = nothing_placeable_two_packs(0.4f, 0.6f);
  const auto episode = [&](std::uint64_t seed, bool monitored) {
    MarlTrainingOptions options;
    if (monitored) options.monitor = *marl_teacher("consolidate");
    LearningEpisode learning(policy, seed, options);
    learning.advance(0, 0.5);
    const int action = learning.sample(o, 0.0);
    return std::pair{action, learning.finish(3600)};
  };
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto [action, plain] = episode(seed, false);
    const auto [monitored_action, monitored] = episode(seed, true);
    EXPECT_EQ(monitored_action, action);
    EXPECT_EQ(monitored.gradient, plain.gradient);
    EXPECT_DOUBLE_EQ(monitored.loss, plain.loss);
    EXPECT_EQ(plain.agreement, 0.0);
    EXPECT_EQ(monitored.agreement, policy.greedy(o) == o.stop_action() ? 1.0 : 0.0);
  }
}

// The imitation-regularised loss is the actor-critic loss plus λ × the labels' cross-entropy, so its
// gradient is the actor-critic gradient plus λ × the cloning gradient of the labelled state (the
// gradient of a sum), and its cross-entropy that of the label, −log π(stop).
TEST(MarlTeacher, TheImitationWeightAddsTheLabelsCloningGradient) {
  const MarlPolicy policy(17);
  const auto o = nothing_placeable_two_packs(0.4f, 0.6f);
  constexpr double lambda = 0.5;
  const auto episode = [&](double weight) {
    MarlTrainingOptions options;
    options.monitor = *marl_teacher("consolidate");
    options.imitation_weight = weight;
    LearningEpisode learning(policy, 3, options);
    learning.advance(0, 0.5);
    (void)learning.sample(o, 0.0);
    return learning.finish(3600);
  };
  const auto plain = episode(0.0);
  const auto regularised = episode(lambda);
  const LabelledState stop{o, o.stop_action()};
  const auto cloning = imitation_gradient(policy, {&stop});
  EXPECT_NEAR(regularised.cross_entropy, cloning.cross_entropy, 1e-6);
  EXPECT_NEAR(regularised.loss, plain.loss + lambda * cloning.cross_entropy, 1e-5);
  ASSERT_EQ(regularised.gradient.size(), plain.gradient.size());
  for (std::size_t i = 0; i < plain.gradient.size(); ++i)
    EXPECT_NEAR(regularised.gradient[i], plain.gradient[i] + lambda * cloning.gradient[i], 1e-5) << i;
}

// DAgger's aggregate: a labelled state survives the child's encoding to its parent field by field, a
// truncated encoding is refused, and the parent's minibatch loss on a state is the cloning loss of an
// episode of that one state: without the critic's term (value weight 0) the same cross-entropy and
// the same gradient, since both are −log π(label) of the same weights and observation.
TEST(MarlTeacher, TheAggregatesLossOnAStateIsTheCloningEpisodesOnIt) {
  const LabelledState state{nothing_placeable_two_packs(0.4f, 0.6f), 11};
  std::string bytes = "x";
  append_labelled(bytes, state);
  append_labelled(bytes, LabelledState{three_servers(), 2});
  const auto states = read_labelled(bytes, 1);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].label, 11);
  EXPECT_EQ(states[1].label, 2);
  const MarlObservation& o = states[0].observation;
  EXPECT_EQ(std::tuple(o.servers, o.racks, o.candidates), std::tuple(3, 1, 2));
  EXPECT_EQ(o.gpu, state.observation.gpu);
  EXPECT_EQ(o.gpu_server, state.observation.gpu_server);
  EXPECT_EQ(o.server, state.observation.server);
  EXPECT_EQ(o.server_rack, state.observation.server_rack);
  EXPECT_EQ(o.job, state.observation.job);
  EXPECT_EQ(o.place_action, state.observation.place_action);
  EXPECT_EQ(o.pack_action, state.observation.pack_action);
  EXPECT_EQ(o.queue, state.observation.queue);
  EXPECT_EQ(o.mask, state.observation.mask);
  EXPECT_THROW((void)read_labelled(std::string_view(bytes).substr(0, bytes.size() - 1), 1), std::runtime_error);

  const MarlPolicy policy(19);
  MarlTrainingOptions options;
  options.value_weight = 0.0;
  options.teacher = [](const MarlObservation&) { return 11; };  // the label above: pack on server 2
  LearningEpisode episode(policy, 1, options);
  episode.advance(0, 0.5);
  (void)episode.sample(state.observation, 0.0);
  const auto cloned = episode.finish(3600);
  const auto aggregate = imitation_gradient(policy, {&states[0]});
  EXPECT_DOUBLE_EQ(aggregate.cross_entropy, cloned.cross_entropy);
  ASSERT_EQ(aggregate.gradient.size(), cloned.gradient.size());
  for (std::size_t i = 0; i < cloned.gradient.size(); ++i) EXPECT_FLOAT_EQ(aggregate.gradient[i], cloned.gradient[i]);
}

}  // namespace
}  // namespace dnnsim
