// The admission/pricing plug-in (planners/jobs/admission.hpp): the posted price's shape and, on
// online-knapsack instances, the competitive bound that makes the threshold policy the baseline.
#include "planners/jobs/admission.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

namespace dnnsim {
namespace {

AdmissionConfig range(double low, double high) {
  AdmissionConfig config;
  config.min_value = low;
  config.max_value = high;
  return config;
}

std::unique_ptr<AdmissionPolicy> make(const std::string& name, const AdmissionConfig& values) {
  return builtin_admissions().at(name).value(builtin_admissions().defaults(name), values);
}

TEST(Admission, ThresholdPriceRunsFromLOverEToU) {
  // ψ(0) = L/e, ψ(1) = (L/e)(Ue/L) = U, and ψ(y*) = L at y* = 1/(1 + ln(U/L)): below it every value
  // in [L, U] is admitted. L = 1, U = 10: y* = 1/(1 + 2.302585) = 0.302804.
  const auto policy = make("threshold-price", range(1, 10));
  EXPECT_NEAR(policy->price(0), 1 / std::exp(1.0), 1e-12);
  EXPECT_NEAR(policy->price(1), 10, 1e-12);
  EXPECT_NEAR(policy->price(1 / (1 + std::log(10.0))), 1, 1e-12);
  EXPECT_TRUE(policy->admit(1.0, 0.30));
  EXPECT_FALSE(policy->admit(1.0, 0.31));
  EXPECT_TRUE(make("admit-all", range(1, 10))->admit(0.0, 1.0));
}

// Online knapsack of `capacity` unit items that never leave: admit while there is room and the
// policy accepts at the current fill. Returns the admitted value; the offline optimum takes the
// `capacity` most valuable items.
double online_value(const AdmissionPolicy& policy, const std::vector<double>& values, int capacity) {
  int used = 0;
  double total = 0;
  for (double v : values) {
    if (used < capacity && policy.admit(v, static_cast<double>(used) / capacity)) {
      ++used;
      total += v;
    }
  }
  return total;
}

double offline_value(std::vector<double> values, int capacity) {
  std::sort(values.begin(), values.end(), std::greater<>());
  values.resize(std::min<std::size_t>(values.size(), static_cast<std::size_t>(capacity)));
  return std::accumulate(values.begin(), values.end(), 0.0);
}

TEST(Admission, ThresholdPolicyIsWithinOnePlusLnUOverLOfTheOptimum) {
  // Zhou et al. (WINE'08): OPT/ALG ≤ 1 + ln(U/L) when items are small against the capacity; with
  // 1,000 unit items the discretisation adds at most one item's worth. U/L = 10: bound 3.3026.
  const double bound = 1 + std::log(10.0);
  const int capacity = 1000;
  const auto threshold = make("threshold-price", range(1, 10));
  const auto all = make("admit-all", range(1, 10));

  // The adversarial order for a threshold rule: values rising slowly from L to U, each level a full
  // knapsack's worth of items, so that admitting early fills the room the best items need.
  std::vector<double> rising;
  for (int level = 0; level <= 100; ++level) rising.insert(rising.end(), capacity, std::pow(10.0, level / 100.0));
  const double opt = offline_value(rising, capacity);  // the last level: 1,000 × 10
  EXPECT_DOUBLE_EQ(opt, 10000.0);
  const double alg = online_value(*threshold, rising, capacity);
  EXPECT_LE(opt / alg, bound * 1.001);
  // Admitting everything fills the knapsack with the first level: ratio U/L = 10.
  EXPECT_DOUBLE_EQ(opt / online_value(*all, rising, capacity), 10.0);

  // A random stream (values uniform in [L, U], the cluster kind's draw): the bound holds too.
  const std::vector<double> random = draw_job_values(20000, range(1, 10));
  EXPECT_LE(offline_value(random, capacity) / online_value(*threshold, random, capacity), bound);
}

TEST(Admission, ValuesAreSeededAndInRange) {
  AdmissionConfig config = range(2, 5);
  config.seed = 7;
  const std::vector<double> a = draw_job_values(1000, config), b = draw_job_values(1000, config);
  EXPECT_EQ(a, b);
  for (double v : a) {
    EXPECT_GE(v, 2);
    EXPECT_LT(v, 5);
  }
  config.seed = 8;
  EXPECT_NE(draw_job_values(1000, config), a);
}

}  // namespace
}  // namespace dnnsim
