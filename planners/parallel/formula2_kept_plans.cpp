// The plans the Formula 2 search keeps (see formula2_kept_plans.hpp).
#include "planners/parallel/formula2_kept_plans.hpp"

#include <algorithm>
#include <limits>

namespace dnnsim {

double KeptPlans::bound(const std::vector<std::size_t>& replicas) const {
  const double any = std::numeric_limits<double>::infinity();
  const auto shape =
      std::find_if(shapes_.begin(), shapes_.end(), [&](const Shape& s) { return s.replicas == replicas; });
  if (shape != shapes_.end()) return shape->plans.size() < limit_ ? any : shape->plans.back().latency.value();
  return shapes_.size() < limit_ ? any : shapes_.back().plans.front().latency.value();
}

void KeptPlans::offer(std::vector<std::size_t> replicas, Seconds latency,
                      const std::function<std::vector<StageSpec>()>& build) {
  if (replicas.size() == 1) {
    if (!single_stage_ || latency < single_stage_->latency) single_stage_ = KeptPlan{build(), latency};
    return;
  }
  const auto by_latency = [](Seconds l, const KeptPlan& kept) { return l < kept.latency; };
  auto shape = std::find_if(shapes_.begin(), shapes_.end(), [&](const Shape& s) { return s.replicas == replicas; });
  if (shape == shapes_.end()) {
    if (shapes_.size() >= limit_ && !(latency < shapes_.back().plans.front().latency)) return;
    shapes_.push_back(Shape{std::move(replicas), {KeptPlan{build(), latency}}});
  } else {
    if (shape->plans.size() >= limit_ && !(latency < shape->plans.back().latency)) return;
    shape->plans.insert(std::upper_bound(shape->plans.begin(), shape->plans.end(), latency, by_latency),
                        KeptPlan{build(), latency});
    if (shape->plans.size() > limit_) shape->plans.pop_back();
  }
  // Shapes by their best plan (stable: ties keep the shape found first), the worst dropped.
  std::stable_sort(shapes_.begin(), shapes_.end(),
                   [](const Shape& a, const Shape& b) { return a.plans.front().latency < b.plans.front().latency; });
  if (shapes_.size() > limit_) shapes_.pop_back();
  // Asked for every candidate scored, changed only here.
  if (shapes_.size() < limit_) return;
  admission_bound_ = shapes_.back().plans.front().latency.value();
  for (const Shape& s : shapes_)
    admission_bound_ = std::max(admission_bound_, s.plans.size() < limit_ ? std::numeric_limits<double>::infinity()
                                                                          : s.plans.back().latency.value());
}

std::vector<KeptPlan> KeptPlans::take() && {
  std::vector<KeptPlan> plans;
  if (single_stage_) plans.push_back(std::move(*single_stage_));
  for (Shape& shape : shapes_)
    for (KeptPlan& plan : shape.plans) plans.push_back(std::move(plan));
  std::stable_sort(plans.begin(), plans.end(),
                   [](const KeptPlan& a, const KeptPlan& b) { return a.latency < b.latency; });
  return plans;
}

}  // namespace dnnsim
