// Expanded collectives checked by hand in the collective tests (tests/unit/models/collective_*_test.cpp):
// the expansion on a default topology, bytes per sender, the shape every expansion must have, and the
// no-contention critical path the docs' formulas describe.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "models/program/collective_algorithms.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim::testing {

// The expansion of `c` with the algorithm it names, on 64 devices of one node unless told otherwise.
inline CollectiveExpansion expand(const Collective& c, const DeviceTopology& topology = nodes_of(64, 64)) {
  return expand_collective(c, topology);
}

inline std::map<DeviceId, double> bytes_sent(const CollectiveExpansion& e) {
  std::map<DeviceId, double> sent;
  for (const CollectiveStep& s : e.steps) sent[s.src] += s.size.value();
  return sent;
}

// Every dependency names an earlier step, that step delivers to the sender (a send waits only for
// data it needs), and no device sends to itself.
inline void expect_well_formed(const CollectiveExpansion& e) {
  for (std::size_t k = 0; k < e.steps.size(); ++k) {
    const CollectiveStep& step = e.steps[k];
    EXPECT_NE(step.src, step.dst) << "step " << k;
    for (std::uint32_t dep : step.deps) {
      ASSERT_LT(dep, k) << "step " << k;
      EXPECT_EQ(e.steps[dep].dst, step.src) << "step " << k << " waits for a step that does not feed its sender";
    }
  }
}

// The no-contention executor of the brief: a step starts when its deps and the previous send of
// the same source are done, and lasts cost(step). Returns the end of the last step.
inline double critical_path(const CollectiveExpansion& e, const std::function<double(const CollectiveStep&)>& cost) {
  std::vector<double> finish(e.steps.size(), 0.0);
  std::map<DeviceId, double> source_free;
  double end = 0.0;
  for (std::size_t k = 0; k < e.steps.size(); ++k) {
    const CollectiveStep& step = e.steps[k];
    double start = source_free[step.src];
    for (std::uint32_t dep : step.deps) start = std::max(start, finish[dep]);
    finish[k] = start + cost(step);
    source_free[step.src] = finish[k];
    end = std::max(end, finish[k]);
  }
  return end;
}

// Every step on uniform links: latency alpha plus size over bandwidth.
inline std::function<double(const CollectiveStep&)> uniform(double alpha, double bandwidth) {
  return [=](const CollectiveStep& s) { return alpha + s.size.value() / bandwidth; };
}

}  // namespace dnnsim::testing
