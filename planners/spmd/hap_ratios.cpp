#include "planners/spmd/hap_ratios.hpp"

#include <ClpSimplex.hpp>
#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

namespace dnnsim {

namespace {

// Columns of the LP, added as they are needed.
class RatioLp {
 public:
  RatioLp(int segments, int devices) : segments_(segments), devices_(devices) {
    lp_.setLogLevel(0);
    lp_.resize(0, segments * devices + segments);
    for (int c = 0; c < segments * devices; ++c) lp_.setColumnBounds(c, 0.0, 1.0);
    for (int s = 0; s < segments; ++s) {
      lp_.setColumnBounds(max_column(s), 0.0, 1.0);
      // Σ_j B[s][j] = 1 and M_s ≥ B[s][j].
      std::vector<int> idx(static_cast<std::size_t>(devices));
      std::iota(idx.begin(), idx.end(), s * devices);
      std::vector<double> ones(static_cast<std::size_t>(devices), 1.0);
      lp_.addRow(devices, idx.data(), ones.data(), 1.0, 1.0);
      for (int j = 0; j < devices; ++j) {
        const int cols[2] = {max_column(s), ratio_column(s, j)};
        const double vals[2] = {1.0, -1.0};
        lp_.addRow(2, cols, vals, 0.0, COIN_DBL_MAX);
      }
    }
  }

  [[nodiscard]] int ratio_column(int segment, int device) const { return segment * devices_ + device; }
  [[nodiscard]] int max_column(int segment) const { return segments_ * devices_ + segment; }

  // The largest share over segments s and t (M_st), created once per pair.
  int pair_max(int s, int t) {
    if (s == t) return max_column(s);
    const auto key = std::minmax(s, t);
    if (auto found = pairs_.find(key); found != pairs_.end()) return found->second;
    const int column = add_column(0.0);
    for (int m : {max_column(s), max_column(t)}) {
      const int cols[2] = {column, m};
      const double vals[2] = {1.0, -1.0};
      lp_.addRow(2, cols, vals, 0.0, COIN_DBL_MAX);
    }
    pairs_.emplace(key, column);
    return column;
  }

  int add_column(double cost) {
    const int column = lp_.numberColumns();
    lp_.resize(lp_.numberRows(), column + 1);
    lp_.setColumnBounds(column, 0.0, COIN_DBL_MAX);
    lp_.setObjectiveCoefficient(column, cost);
    return column;
  }

  void add_cost(int column, double kappa) {
    lp_.setObjectiveCoefficient(column, lp_.getObjCoefficients()[column] + kappa);
  }

  void add_row(int count, const int* cols, const double* vals, double lower) {
    lp_.addRow(count, cols, vals, lower, COIN_DBL_MAX);
  }

  ShardRatios solve() {
    lp_.primal();
    if (!lp_.isProvenOptimal())
      throw std::runtime_error("the sharding-ratio LP has no optimum (a bug: it is always feasible)");
    const double* solution = lp_.primalColumnSolution();
    ShardRatios ratios;
    ratios.values.assign(1, {});
    for (int s = 0; s < segments_; ++s) {
      std::vector<double> r(solution + s * devices_, solution + (s + 1) * devices_);
      // Clp's tolerances leave tiny negatives and a sum off by 1e-12: clean them for the rounding.
      double sum = 0;
      for (double& x : r) sum += (x = std::max(0.0, x));
      for (double& x : r) x /= sum;
      ratios.values[0].push_back(std::move(r));
    }
    return ratios;
  }

 private:
  int segments_, devices_;
  ClpSimplex lp_;
  std::map<std::pair<int, int>, int> pairs_;
};

}  // namespace

ShardRatios balance_ratios(const OpGraph& graph, const SpmdProgram& program, const SpmdCluster& cluster) {
  const int m = static_cast<int>(cluster.size());
  const int segments = program.segments();
  RatioLp lp(segments, m);
  const CollectiveLines& lines = cluster.all;
  const double n = static_cast<double>(m);
  const double element = dtype_bytes(graph.dtype());
  for (const ShardedOp& s : program.ops()) {
    const SpmdOp& op = graph.op(s.op);
    const int seg = program.segment_of(s.op);
    // Computation: c ≥ (2 + [not SFB])·F/speed_j · B_j (+ F/speed_j for SFB's full weight gradient), or
    // c ≥ 3F/speed_j when every device computes all of it.
    const int comp = lp.add_column(1.0);
    for (int j = 0; j < m; ++j) {
      const double per_share = op.forward_flops.value() / cluster.flops_per_second[static_cast<std::size_t>(j)];
      if (s.rule.sharded) {
        const int cols[2] = {comp, lp.ratio_column(seg, j)};
        const double vals[2] = {1.0, -(s.rule.sfb ? 2.0 : 3.0) * per_share};
        lp.add_row(2, cols, vals, s.rule.sfb ? per_share : 0.0);
      } else {
        const int cols[1] = {comp};
        const double vals[1] = {1.0};
        lp.add_row(1, cols, vals, 3 * per_share);
      }
    }
    // Communication: padded collectives cost κ · (largest share); the rest is constant.
    const auto padded = [&](const LinearCost& line, double bytes, int column) {
      lp.add_cost(column, line.seconds_per_byte * bytes * n);
    };
    for (const ShardedOp::Convert& c : s.converts) {
      const double bytes = graph.bytes(op.inputs[c.input]).value();
      const int column = lp.pair_max(seg, program.segment_of(op.inputs[c.input]));
      switch (c.conversion) {
        case Conversion::reduce_scatter:
        case Conversion::all_gather:
          padded(lines.all_gather, bytes, column);
          padded(lines.reduce_scatter, bytes, column);
          break;
        case Conversion::all_to_all:
        case Conversion::reshard:
          padded(lines.all_to_all, 2 * bytes / n, column);  // each device's send buffer is its shard
          break;
        case Conversion::slice:
          padded(lines.all_gather, bytes, column);
          break;
        case Conversion::all_reduce:
        case Conversion::grouped_broadcast:
        case Conversion::grouped_reduce:
          break;
      }
    }
    const double rows = static_cast<double>(op.rows) * element;
    const double k = op.inputs.empty() ? 0.0 : static_cast<double>(graph.op(op.inputs[0]).columns);
    if (s.rule.sfb) {
      padded(lines.all_gather, rows * k, lp.max_column(seg));
      padded(lines.all_gather, rows * static_cast<double>(op.columns), lp.max_column(seg));
    }
    if (op.kind == OpKind::experts && s.rule.inputs[1] == Layout::split_rows)
      padded(lines.all_to_all, 2 * rows * op.routed * (k + static_cast<double>(op.columns)) / n, lp.max_column(seg));
  }
  return lp.solve();
}

}  // namespace dnnsim
