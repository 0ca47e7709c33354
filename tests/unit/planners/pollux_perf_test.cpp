// Pollux's fitted throughput model (planners/jobs/pollux_perf.hpp): the fit recovers parameters from
// exact observations, and with one observation fixes what it cannot identify as the artifact does
// (petuum/adaptdl osdi21-artifact c793c70, simulator/goodput.py fit_perf_params).
#include "planners/jobs/pollux_perf.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace dnnsim {
namespace {

// The artifact's model written out here, independently of the code under test (goodput.py
// _predict_accum_time, _predict_network_time, _predict_log_optim_time).
double accum(const PolluxPerfParams& p, double b) { return p.alpha_c + p.beta_c * b; }
double net(const PolluxPerfParams& p, int nodes, int replicas) {
  const double extra = std::max(replicas - 2.0, 1e-8);
  if (nodes > 1) return p.alpha_n + p.beta_n * extra;
  if (replicas > 1) return p.alpha_r + p.beta_r * extra;
  return 1e-8 + 1e-8 * extra;
}
double step(const PolluxPerfParams& p, int nodes, int replicas, double b) {
  return std::pow(std::pow(accum(p, b), p.gamma) + std::pow(net(p, nodes, replicas), p.gamma), 1.0 / p.gamma);
}

std::vector<PolluxPerfObservation> exact(const PolluxPerfParams& p, const std::vector<std::array<int, 3>>& configs) {
  std::vector<PolluxPerfObservation> obs;
  for (const auto& [nodes, replicas, b] : configs)
    obs.push_back({nodes, replicas, static_cast<double>(b), accum(p, b), step(p, nodes, replicas, b)});
  return obs;
}

TEST(PolluxPerf, TheModelIsTheArtifactsFormula) {
  const PolluxPerfParams p{0.02, 0.0015, 0.25, 0.01, 0.05, 0.004, 2.0};
  // 2 nodes, 8 replicas, b = 64: T_acc = 0.02 + 0.096 = 0.116, T_net = 0.25 + 0.01·6 = 0.31,
  // T_step = √(0.116² + 0.31²) = 0.33099…
  EXPECT_NEAR(pollux_step_time(p, 2, 8, 64), std::sqrt(0.116 * 0.116 + 0.31 * 0.31), 1e-12);
  // One node, 2 replicas: the intra-node link, retrogression on max(0, 10⁻⁸) replicas beyond 2.
  EXPECT_NEAR(pollux_network_time(p, 1, 2), 0.05 + 0.004 * 1e-8, 1e-15);
  EXPECT_NEAR(pollux_accum_time(p, 64), 0.116, 1e-15);
}

TEST(PolluxPerf, ExactObservationsGiveBackTheParameters) {
  // Every parameter identified: several local batches (α_c, β_c), multi-node and one-node
  // multi-replica runs beyond 2 replicas (α, β of both links), and T_net comparable to T_acc (γ).
  // At the true θ* both RMSLEs are 0, and each is a norm of the residuals, so near θ* the objective
  // grows like ‖J·d‖/√N − |∇R·d| with R the regularisers (‖∇R‖ ≈ 2·10⁻²·β/α² ≈ 10⁻², far below the
  // residuals' slope): θ* is the minimum, a sharp one, and the fit must stop there.
  const PolluxPerfParams truth{0.02, 0.0015, 0.25, 0.01, 0.05, 0.004, 2.0};
  const auto obs = exact(
      truth,
      {{1, 1, 32}, {1, 1, 128}, {1, 2, 64}, {1, 4, 64}, {1, 4, 128}, {2, 2, 64}, {2, 8, 32}, {4, 16, 64}, {2, 4, 128}});
  const PolluxPerfParams fit = fit_pollux_perf_params(obs);
  EXPECT_NEAR(fit.alpha_c, truth.alpha_c, 1e-3 * truth.alpha_c);
  EXPECT_NEAR(fit.beta_c, truth.beta_c, 1e-3 * truth.beta_c);
  EXPECT_NEAR(fit.alpha_n, truth.alpha_n, 1e-3 * truth.alpha_n);
  EXPECT_NEAR(fit.beta_n, truth.beta_n, 1e-2 * truth.beta_n);
  EXPECT_NEAR(fit.alpha_r, truth.alpha_r, 1e-3 * truth.alpha_r);
  EXPECT_NEAR(fit.beta_r, truth.beta_r, 1e-2 * truth.beta_r);
  EXPECT_NEAR(fit.gamma, truth.gamma, 1e-2);
  EXPECT_LE(pollux_perf_objective(fit, obs), pollux_perf_objective(truth, obs) + 1e-6);
}

TEST(PolluxPerf, OneObservationFixesWhatItCannotIdentify) {
  // One GPU, local batch 64, 0.1 s per step (no sync on one GPU). goodput.py: one local batch →
  // α_c = mean accum / 2 = 0.05, so β_c fits the rest: 0.05 + 64·β_c = 0.1, β_c = 0.05/64; no
  // multi-node, no one-node multi-replica, no > 2 replicas → α_n, β_n, α_r, β_r stay at 10⁻⁸, then
  // the prior α_n ≥ 1.1·α_r, β_n ≥ 1.1·β_r raises the inter-node pair to 1.1·10⁻⁸. T_net ≈ 10⁻⁸ leaves
  // T_step = T_acc whatever γ, so only the regulariser 10⁻³(γ − 1)² moves γ, down from the start 1.001
  // towards 1 (its slope there, 2·10⁻⁶, is below what either fit resolves: it ends in between).
  const std::vector<PolluxPerfObservation> obs{{1, 1, 64, 0.1, 0.1}};
  const PolluxPerfParams fit = fit_pollux_perf_params(obs);
  EXPECT_DOUBLE_EQ(fit.alpha_c, 0.05);
  EXPECT_NEAR(fit.beta_c, 0.05 / 64, 1e-6 * 0.05 / 64);
  EXPECT_DOUBLE_EQ(fit.alpha_r, 1e-8);
  EXPECT_DOUBLE_EQ(fit.beta_r, 1e-8);
  EXPECT_DOUBLE_EQ(fit.alpha_n, 1.1e-8);
  EXPECT_DOUBLE_EQ(fit.beta_n, 1.1e-8);
  EXPECT_GE(fit.gamma, 1.0);
  EXPECT_LE(fit.gamma, 1.001);
  // The artifact's optimism: the model predicts no communication cost, so 8 replicas on 2 nodes step
  // as fast as one (the speedup function then scales linearly until the job has run there).
  EXPECT_NEAR(pollux_step_time(fit, 2, 8, 64), 0.1, 1e-6);
}

TEST(PolluxPerf, NoObservationIsNoModel) {
  // A job that has never run has no fitted model: the artifact's speedup is then r / fair share
  // (pollux.py Problem.__init__), the scheduler's `unexplored: fair-share` (pollux_test.cpp).
  EXPECT_THROW((void)fit_pollux_perf_params({}), std::invalid_argument);
}

}  // namespace
}  // namespace dnnsim
