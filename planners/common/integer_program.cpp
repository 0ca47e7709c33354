#include "planners/common/integer_program.hpp"

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <algorithm>

namespace dnnsim {

namespace {

double bound(double v) { return std::clamp(v, -COIN_DBL_MAX, COIN_DBL_MAX); }

}  // namespace

int IntegerProgram::add_column(double cost, double lower, double upper, bool integer) {
  cost_.push_back(cost);
  lower_.push_back(lower);
  upper_.push_back(upper);
  integer_.push_back(integer);
  return columns() - 1;
}

void IntegerProgram::add_row(const std::vector<int>& columns, const std::vector<double>& values, double lower,
                             double upper) {
  rows_.push_back({columns, values, lower, upper});
}

std::optional<IntegerProgram::Solution> IntegerProgram::solve(double seconds, bool* infeasible) const {
  CoinPackedMatrix matrix(false, 0, 0);  // row-ordered
  std::vector<double> row_lower, row_upper, lower, upper;
  for (const Row& row : rows_) {
    matrix.appendRow(static_cast<int>(row.columns.size()), row.columns.data(), row.values.data());
    row_lower.push_back(bound(row.lower));
    row_upper.push_back(bound(row.upper));
  }
  matrix.setDimensions(static_cast<int>(rows_.size()), columns());
  for (std::size_t j = 0; j < cost_.size(); ++j) {
    lower.push_back(bound(lower_[j]));
    upper.push_back(bound(upper_[j]));
  }
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, lower.data(), upper.data(), cost_.data(), row_lower.data(), row_upper.data());
  for (int j = 0; j < columns(); ++j)
    if (integer_[static_cast<std::size_t>(j)]) solver.setInteger(j);
  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.setMaximumSeconds(seconds);
  model.branchAndBound();
  if (infeasible) *infeasible = model.isProvenInfeasible();
  const double* best = model.bestSolution();
  if (best == nullptr) return std::nullopt;
  return Solution{std::vector<double>(best, best + columns()), model.isProvenOptimal()};
}

}  // namespace dnnsim
