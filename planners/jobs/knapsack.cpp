#include "planners/jobs/knapsack.hpp"

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace dnnsim {
namespace {
constexpr double kLargestUnscaledCost = 1e12;
}  // namespace

std::optional<KnapsackSolution> solve_multiple_choice_knapsack(const std::vector<std::vector<KnapsackOption>>& groups,
                                                               const std::vector<double>& capacity,
                                                               double time_limit_s) {
  const int resources = static_cast<int>(capacity.size());
  const int rows = static_cast<int>(groups.size()) + resources;
  CoinPackedMatrix matrix(true, 0, 0);  // column-ordered
  matrix.setDimensions(rows, 0);
  std::vector<double> cost, lower, upper;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (const KnapsackOption& option : groups[g]) {
      std::vector<int> index{static_cast<int>(g)};
      std::vector<double> value{1.0};
      for (int r = 0; r < resources; ++r)
        if (option.use[static_cast<std::size_t>(r)] != 0.0) {
          index.push_back(static_cast<int>(groups.size()) + r);
          value.push_back(option.use[static_cast<std::size_t>(r)]);
        }
      matrix.appendCol(static_cast<int>(index.size()), index.data(), value.data());
      cost.push_back(option.cost);
      lower.push_back(0.0);
      upper.push_back(1.0);
    }
  // Clp refuses an objective coefficient of 1e25 or more (an assertion in ClpSimplex::createRim: a job
  // stream of 1e30 s jobs reached it) and its tolerances are absolute, meant for costs near 1. Costs that
  // large are divided by the largest magnitude, which keeps the argmin; costs of ordinary size are
  // passed as they are, so their solutions do not move.
  const double largest =
      std::accumulate(cost.begin(), cost.end(), 0.0, [](double m, double c) { return std::max(m, std::abs(c)); });
  if (!std::isfinite(largest)) throw std::invalid_argument("multiple-choice knapsack: a cost is not finite");
  if (largest > kLargestUnscaledCost)
    for (double& c : cost) c /= largest;
  std::vector<double> row_lower(static_cast<std::size_t>(rows)), row_upper(static_cast<std::size_t>(rows));
  for (std::size_t g = 0; g < groups.size(); ++g) row_lower[g] = row_upper[g] = 1.0;
  for (int r = 0; r < resources; ++r) {
    row_lower[groups.size() + static_cast<std::size_t>(r)] = -std::numeric_limits<double>::max();
    row_upper[groups.size() + static_cast<std::size_t>(r)] = capacity[static_cast<std::size_t>(r)];
  }
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, lower.data(), upper.data(), cost.data(), row_lower.data(), row_upper.data());
  for (int c = 0; c < static_cast<int>(cost.size()); ++c) solver.setInteger(c);
  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.setMaximumSeconds(time_limit_s);
  model.branchAndBound();
  const double* best = model.bestSolution();
  if (best == nullptr) return std::nullopt;
  KnapsackSolution solution;
  solution.optimal = model.isProvenOptimal();
  std::size_t column = 0;
  for (const auto& group : groups) {
    int chosen = 0;
    double largest = -1.0;
    for (std::size_t o = 0; o < group.size(); ++o, ++column)
      if (best[column] > largest) {
        largest = best[column];
        chosen = static_cast<int>(o);
      }
    solution.choice.push_back(chosen);
    solution.cost += group[static_cast<std::size_t>(chosen)].cost;
  }
  return solution;
}

}  // namespace dnnsim
