// A mixed-integer program built row by row and solved by COIN-OR Cbc over Clp (the solver the
// planners' ILPs share: Rhino's cone and stage programs, planners/spmd/rhino_*.cpp): minimize c·x
// subject to row_lower ≤ A·x ≤ row_upper and lower ≤ x ≤ upper, the columns marked integer taking
// integer values.
#pragma once

#include <optional>
#include <vector>

namespace dnnsim {

class IntegerProgram {
 public:
  // @return the new column's index.
  int add_column(double cost, double lower, double upper, bool integer = true);
  void add_row(const std::vector<int>& columns, const std::vector<double>& values, double lower, double upper);
  // Adds `cost` to a column's objective coefficient.
  void add_cost(int column, double cost) { cost_[static_cast<std::size_t>(column)] += cost; }
  [[nodiscard]] int columns() const { return static_cast<int>(cost_.size()); }

  struct Solution {
    std::vector<double> values;  // of every column
    bool optimal = false;        // proven within the time limit
  };
  // The best solution found within `seconds`; none when there is none (infeasible, or none in time).
  // `infeasible` (when given) tells whether Cbc proved there is none.
  [[nodiscard]] std::optional<Solution> solve(double seconds, bool* infeasible = nullptr) const;

  static constexpr double kUnbounded = 1e300;  // a row or column bound that is none

 private:
  std::vector<double> cost_, lower_, upper_;
  std::vector<bool> integer_;
  struct Row {
    std::vector<int> columns;
    std::vector<double> values;
    double lower = 0, upper = 0;
  };
  std::vector<Row> rows_;
};

}  // namespace dnnsim
