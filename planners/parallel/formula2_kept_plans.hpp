// The complete plans the Formula 2 search keeps for the re-ranking (formula2_search.hpp,
// SearchOutcome::kept).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "planners/parallel/formula2_search.hpp"

namespace dnnsim {

// The plans the re-ranking sees (SearchOptions::rerank = K): the K best plans by Formula 2 of each of
// its K best stage shapes (replicas per stage; plans of one shape differ in their cuts and GPUs),
// and the single-stage plan, on which Formula 2 is exact (no pivot bubble to leave out), so that it
// is never dropped for another plan's underestimate. Ties: the plan offered first.
class KeptPlans {
 public:
  explicit KeptPlans(int limit) : limit_(static_cast<std::size_t>(std::max(1, limit))) {}
  // Whether a plan of this latency could be kept (checked before anything is built: most are not):
  // a new shape must beat the worst kept shape's best, a kept shape's plan that shape's K-th.
  [[nodiscard]] bool admits(Seconds latency) const { return latency.value() < admission_bound_; }
  // The latency below which admits() holds (+∞: any plan).
  [[nodiscard]] double admission_bound() const { return admission_bound_; }
  // The latency below which a plan of this shape (replicas per stage, two stages or more) would be
  // kept now, by offer()'s own rule (+∞: any would). It only rises when such a plan is kept.
  [[nodiscard]] double bound(const std::vector<std::size_t>& replicas) const;
  // `replicas`: the plan's replicas per stage; `build` makes its stages, called only if it is kept.
  void offer(std::vector<std::size_t> replicas, Seconds latency, const std::function<std::vector<StageSpec>()>& build);
  // Every kept plan, best first by Formula 2.
  [[nodiscard]] std::vector<KeptPlan> take() &&;

 private:
  struct Shape {
    std::vector<std::size_t> replicas;
    std::vector<KeptPlan> plans;  // best first
  };
  std::size_t limit_;
  std::vector<Shape> shapes_;  // by their best plan
  std::optional<KeptPlan> single_stage_;
  double admission_bound_ = std::numeric_limits<double>::infinity();
};

}  // namespace dnnsim
