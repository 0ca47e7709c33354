// The sync policies' decisions (planners/sync) and the statistical-efficiency model they are priced
// with (models/sync), without an engine; the policies' behaviour over time is in
// tests/component/parameter_server_test.cpp.
#include "planners/sync/sync_policy.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "models/sync/statistical_efficiency.hpp"
#include "tests/support/options.hpp"

namespace dnnsim {
namespace {

std::unique_ptr<SyncPolicy> make(const std::string& name,
                                 std::initializer_list<std::pair<const char*, OptionValue>> values = {},
                                 double target_loss = 0) {
  return builtin_sync_policies().at(name).value(testing::options_of(builtin_sync_policies(), name, values),
                                                SyncContext{target_loss});
}

TEST(SyncPolicy, RegistryListsTheFivePolicies) {
  EXPECT_EQ(builtin_sync_policies().names(), (std::vector<std::string>{"bsp", "ssp", "asp", "adacomm", "adsp"}));
  for (const auto& entry : builtin_sync_policies().entries()) EXPECT_FALSE(entry.source.empty()) << entry.name;
}

TEST(SyncPolicy, SspHoldsOnlyAWorkerBeyondTheBound) {
  const auto ssp = make("ssp", {{"staleness", std::int64_t{3}}});
  const std::vector<long> commits{10, 13, 14, 11};
  EXPECT_TRUE(ssp->may_release(0, commits));   // the slowest
  EXPECT_TRUE(ssp->may_release(1, commits));   // 13 − 10 = 3 ≤ s
  EXPECT_FALSE(ssp->may_release(2, commits));  // 14 − 10 = 4 > s
  EXPECT_FALSE(ssp->synchronous());
  EXPECT_TRUE(make("bsp")->synchronous());
  EXPECT_TRUE(make("asp")->may_release(2, commits));
}

TEST(SyncPolicy, AdacommShrinksTauWithTheSquareRootOfTheLoss) {
  // τ = ⌈τ0·√(F/F0)⌉ (Wang & Joshi, SysML'19): τ0 = 16, F falls from 2.0 to 0.5 → ⌈16·0.5⌉ = 8; to
  // 0.02 → ⌈16·0.1⌉ = 2.
  const auto adacomm = make("adacomm", {{"local_steps", std::int64_t{16}}});
  adacomm->on_tick(0, 2.0);
  EXPECT_FALSE(adacomm->commit_after_step(0, 15, 0, 0));
  EXPECT_TRUE(adacomm->commit_after_step(0, 16, 0, 0));
  adacomm->on_tick(60, 0.5);
  EXPECT_TRUE(adacomm->commit_after_step(0, 8, 0, 0));
  EXPECT_FALSE(adacomm->commit_after_step(0, 7, 0, 0));
  adacomm->on_tick(120, 0.02);
  EXPECT_TRUE(adacomm->commit_after_step(0, 2, 0, 0));
  const auto fixed = make("adacomm", {{"local_steps", std::int64_t{16}}, {"adaptive", false}});
  EXPECT_EQ(fixed->tick_period(), 0.0);
  EXPECT_FALSE(fixed->commit_after_step(0, 15, 0, 0));
}

TEST(SyncPolicy, AdspCommitIntervalIsGammaOverRateLessTheCommitCost) {
  // Γ = 60 s, c = 2: Δt = max(10, 30 − cost).
  const auto adsp = make("adsp", {{"initial_commit_rate", std::int64_t{2}}});
  EXPECT_FALSE(adsp->commit_after_step(0, 100, 27.9, 2.0));
  EXPECT_TRUE(adsp->commit_after_step(0, 1, 28.0, 2.0));
  EXPECT_FALSE(adsp->commit_after_step(0, 1, 9.9, 25.0));  // never below min_commit_interval
  EXPECT_TRUE(adsp->commit_after_step(0, 1, 10.0, 25.0));
  EXPECT_EQ(adsp->tick_period(), 30.0);
}

TEST(SyncPolicy, AdspRewardRecoversTheCurveThroughThreePoints) {
  // l(t) = 1/(0.01·t + 1) + 0.2 sampled at 0, 30, 60 s: l = 1.2, 1/1.3 + 0.2, 1/1.6 + 0.2. The time to
  // l* = 0.3 is (1/(0.3 − 0.2) − 1)/0.01 = 900 s, so the reward is 1/900.
  const auto l = [](double t) { return 1 / (0.01 * t + 1) + 0.2; };
  EXPECT_NEAR(adsp_probe_reward(l(0), l(30), l(60), 30, 0.3), 1.0 / 900, 1e-12);
  // A loss that did not fall has no reward; one already below the target an infinite one.
  EXPECT_EQ(adsp_probe_reward(1, 1, 1, 30, 0.3), 0.0);
  EXPECT_TRUE(std::isinf(adsp_probe_reward(1, 0.5, 0.25, 30, 0.3)));
  // A linear fall (no curvature) extrapolates its rate: 1 → 0.9 in 60 s, so 1 → 0.3 takes 420 s from
  // the probe's start (the time origin of the fitted curve too).
  EXPECT_NEAR(adsp_probe_reward(1, 0.95, 0.9, 30, 0.3), 1.0 / 420, 1e-12);
}

TEST(SyncPolicy, AdspClimbsWhileTheRewardGrows) {
  // Feed probes whose reward grows with the rate up to c = 3 and then falls: the search must settle
  // on 3. A probe is three ticks (start, Γ/2, Γ); each probe's start is the previous one's end.
  auto adsp = make("adsp", {}, 0.1);
  // Loss falls by `drop(c)` per half period while probing rate c.
  const auto drop = [](int c) { return c <= 3 ? 0.01 * c : 0.03 - 0.01 * (c - 3); };
  double loss = 1.0, now = 0;
  adsp->on_tick(now, loss);  // starts the search at the initial rate 1
  int rate = 1;
  for (int probe = 0; probe < 4; ++probe) {
    for (int half = 0; half < 2; ++half) {
      loss -= drop(rate);
      now += 30;
      adsp->on_tick(now, loss);
    }
    ++rate;
  }
  EXPECT_EQ(adsp->state(), "commit rate 3 per 60 s after 1 search");
}

TEST(StatisticalEfficiency, FormulasAsDocumented) {
  StatisticalEfficiency m;
  m.a = 0.5;
  m.b = 2;
  m.c = 0.1;
  m.beta = 3;
  m.mu = 0.1;
  m.lambda = 0.25;
  EXPECT_DOUBLE_EQ(m.loss(0), 0.5 + 0.1);
  EXPECT_DOUBLE_EQ(m.loss(4), 1.0 / 4 + 0.1);
  EXPECT_DOUBLE_EQ(m.progress_for_loss(0.35), 4);
  EXPECT_TRUE(std::isinf(m.progress_for_loss(0.1)));
  EXPECT_DOUBLE_EQ(m.averaging_gain(1), 1);          // one worker: one step
  EXPECT_DOUBLE_EQ(m.averaging_gain(3), 4.0 / 2.0);  // (1 + 3)/(1 + 1)
  EXPECT_DOUBLE_EQ(m.local_factor(1), 1);
  EXPECT_DOUBLE_EQ(m.local_factor(11), 1 / 2.0);     // 1/(1 + 0.1·10)
  EXPECT_DOUBLE_EQ(m.staleness_factor(4), 1 / 2.0);  // 1/(1 + 0.25·4)
  EXPECT_DOUBLE_EQ(m.synchronous_round(3, 11), 11 * 0.5 * 2.0);
  EXPECT_DOUBLE_EQ(m.asynchronous_commit(11, 4), 11 * 0.5 * 0.5);
}

}  // namespace
}  // namespace dnnsim
