// Job interference model (planners/jobs/interference.hpp): exact recovery on a hand-built instance,
// and the held-out error on Gavel's real co-located throughputs.
#include "planners/jobs/interference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "dnnsim/source_paths.hpp"
#include "planners/jobs/interference_mlp.hpp"

namespace dnnsim {
namespace {

const std::string kGavel = DNNSIM_SOURCE_DIR "/data/traces/gavel/simulation_throughputs.json";

TEST(InterferenceModel, NoCoRunnersMeansNoSlowdown) {
  const auto model = InterferenceModel::fit({{"a", "b", 1.5}});
  EXPECT_DOUBLE_EQ(model.slowdown("a", {}), 1.0);
}

TEST(InterferenceModel, RecoversAnAdditiveLogInstance) {
  // Built from a = {x: 0.1, y: 0.3}, b = {x: 0.2, y: 0.0}: s_ij = exp(a_i + b_j). Three of the four
  // pairs determine a_y − a_x = 0.2 and b_x − b_y = 0.2 up to the gauge, so the fourth is predicted
  // exactly: s_yy = exp(log s_yx + log s_xy − log s_xx) = exp(0.5 + 0.1 − 0.3) = exp(0.3).
  const auto model =
      InterferenceModel::fit({{"x", "x", std::exp(0.3)}, {"x", "y", std::exp(0.1)}, {"y", "x", std::exp(0.5)}});
  EXPECT_NEAR(model.slowdown("y", {"y"}), std::exp(0.3), 1e-9);
  // Two co-runners add their excess slowdowns: 1 + (s_yx − 1) + (s_yy − 1) = exp(0.5) + exp(0.3) − 1.
  EXPECT_NEAR(model.slowdown("y", {"x", "y"}), std::exp(0.5) + std::exp(0.3) - 1.0, 1e-9);
}

// Independent baseline: every held-out pair (of types the model knows) predicted by the training
// pairs' mean slowdown; mean |relative error|.
double mean_slowdown_baseline(const PairSplit& split, const InterferencePredictor& model) {
  double mean = 0.0;
  for (const auto& pair : split.train) mean += pair.slowdown / static_cast<double>(split.train.size());
  double baseline = 0.0;
  std::size_t counted = 0;
  for (const auto& pair : split.held_out) {
    if (!model.knows(pair.victim) || !model.knows(pair.aggressor)) continue;
    baseline += std::abs(mean - pair.slowdown) / pair.slowdown;
    ++counted;
  }
  return baseline / static_cast<double>(counted);
}

TEST(InterferenceModel, PredictsHeldOutGavelPairsBetterThanTheMeanSlowdown) {
  const auto pairs = read_gavel_colocated_pairs(kGavel, "v100");
  ASSERT_GT(pairs.size(), 500u);  // 636 single-GPU pairs with a non-zero co-located rate in the v100 table
  const auto split = split_pairs(pairs, 5);
  const auto model = InterferenceModel::fit(split.train);
  const auto held_out = evaluate(model, split.held_out);
  ASSERT_GT(held_out.pairs, split.held_out.size() / 2);
  const double baseline = mean_slowdown_baseline(split, model);
  RecordProperty("held_out_pairs", static_cast<int>(held_out.pairs));
  std::printf("held-out v100 pairs %zu: fit mean |rel err| %.4f rmse %.4f, mean-slowdown baseline %.4f\n",
              held_out.pairs, held_out.mean_abs_relative, held_out.rmse, baseline);
  EXPECT_LT(held_out.mean_abs_relative, baseline);
}

// The MLP variant on the same split: it must also beat the constant predictor on pairs it never saw
// (its error beside the additive model's is printed for docs/cluster.md).
TEST(InterferenceMlp, PredictsHeldOutGavelPairsBetterThanTheMeanSlowdown) {
  for (const char* table : {"v100", "p100"}) {
    const auto split = split_pairs(read_gavel_colocated_pairs(kGavel, table), 5);
    const auto mlp_model = fit_interference_mlp(split.train, 1);
    const InterferencePredictor& mlp = *mlp_model;
    const auto additive = InterferenceModel::fit(split.train);
    const auto held_out = evaluate(mlp, split.held_out);
    const double baseline = mean_slowdown_baseline(split, mlp);
    std::printf(
        "held-out %s pairs %zu: MLP mean |rel err| %.4f rmse %.4f; additive %.4f; mean-slowdown baseline %.4f\n", table,
        held_out.pairs, held_out.mean_abs_relative, held_out.rmse, evaluate(additive, split.held_out).mean_abs_relative,
        baseline);
    EXPECT_LT(held_out.mean_abs_relative, baseline) << table;
    EXPECT_DOUBLE_EQ(mlp.slowdown(split.train.front().victim, {}), 1.0);
  }
}

// The oracle bound of co-location on the multi-agent scenarios' job mixes (docs/cluster.md "What any
// placement can gain"): packing i beside j on one GPU runs them at 1/s_ij and 1/s_ji of their solo
// speeds, so the GPU does c_ij = 1/s_ij + 1/s_ji solo-GPUs of work. An oracle that always finds each
// job its best partner gets max_j c_ij; a random partner, the mix-weighted mean. Printed per table and
// mix for the docs. Independent checks: every c is in (0, 2] when no slowdown is below 1 (printed: the
// smallest measured slowdown, which decides whether a job's solo time bounds its JCT from below), and
// the best partner is at least the random one.
TEST(InterferenceModel, ColocationOracleOnTheMultiAgentMixes) {
  const std::map<std::string, std::map<std::string, double>> mixes{{"marl-gavel",
                                                                    {{"ResNet-18 (batch size 64)", 2},
                                                                     {"ResNet-50 (batch size 64)", 2},
                                                                     {"Transformer (batch size 64)", 2},
                                                                     {"LM (batch size 20)", 2},
                                                                     {"Recommendation (batch size 2048)", 1},
                                                                     {"A3C", 1},
                                                                     {"CycleGAN", 1}}},
                                                                   {"marl-gavel-heavy",
                                                                    {{"ResNet-18 (batch size 64)", 2},
                                                                     {"ResNet-50 (batch size 64)", 2},
                                                                     {"Transformer (batch size 64)", 1},
                                                                     {"LM (batch size 20)", 1},
                                                                     {"Recommendation (batch size 2048)", 2},
                                                                     {"A3C", 1},
                                                                     {"CycleGAN", 2}}}};
  for (const char* table : {"v100", "p100"}) {
    std::map<std::pair<std::string, std::string>, double> slowdown;
    for (const auto& pair : read_gavel_colocated_pairs(kGavel, table))
      slowdown[{pair.victim, pair.aggressor}] = pair.slowdown;
    for (const auto& [scenario, mix] : mixes) {
      double weights = 0, best_sum = 0, random_sum = 0, random_weights = 0, smallest = 1e9;
      for (const auto& [i, wi] : mix) {
        double best = 0;
        for (const auto& [j, wj] : mix) {
          const auto ij = slowdown.find({i, j});
          const auto ji = slowdown.find({j, i});
          if (ij == slowdown.end() || ji == slowdown.end()) continue;  // not measured fitting together
          const double c = 1.0 / ij->second + 1.0 / ji->second;
          smallest = std::min({smallest, ij->second, ji->second});
          best = std::max(best, c);
          random_sum += wi * wj * c;
          random_weights += wi * wj;
          EXPECT_GT(c, 0.0);
          if (smallest >= 1.0) {
            EXPECT_LE(c, 2.0 + 1e-12);
          }
        }
        best_sum += wi * best;
        weights += wi;
      }
      const double best = best_sum / weights, random = random_sum / random_weights;
      std::printf(
          "%s %s: combined throughput of a packed GPU, best partner %.3f, random partner %.3f; "
          "smallest slowdown %.3f\n",
          scenario.c_str(), table, best, random, smallest);
      EXPECT_GE(best, random);
    }
  }
}

}  // namespace
}  // namespace dnnsim
