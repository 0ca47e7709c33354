// Pollux's TunedJobs configurations: for an application, the replica counts a well-tuned user would
// pick and their best batch, from Qiao et al., OSDI'21 §5.3 ("TunedJobs": each job's GPU count and
// batch size chosen so that its scaling efficiency is in a reasonable range) as the artifact computes
// them (petuum/adaptdl, branch osdi21-artifact, simulator/applications.py get_configurations(0.5, 0.8)):
//   for r in 1, 2, 4, 6, 8, 12, 16, 24, 32, 48 (stop when r × the smallest local batch exceeds the
//   largest measured batch), on r GPUs packed 4 per node, the measured batch B of least
//   JCT = iterations to the target at B × T, T the iteration of local batch ⌈B/r⌉ split into
//   accumulation micro-steps of at most the largest local batch (T = step + accum·(step − sync));
//   kept when JCT < 12 h and the scaling efficiency JCT₁ / JCT / r is in (lo, hi); none kept: (1, its
//   best batch). Used by the Philly application rule (traces/jobs/pollux_applications.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "planners/jobs/pollux_goodput.hpp"
#include "traces/jobs/pollux_applications.hpp"

namespace dnnsim {

struct PolluxTunedConfiguration {
  int replicas = 1;
  int batch = 0;
  double jct = 0;  // seconds, alone on the cluster
};

// @throw InputError for an application the tables do not have.
[[nodiscard]] std::vector<PolluxTunedConfiguration> pollux_tuned_configurations(const PolluxGoodput& goodput,
                                                                                const std::string& application,
                                                                                double lo = 0.5, double hi = 0.8);

// Every application of the tables: its configurations as the application rule takes them.
[[nodiscard]] PolluxConfigurations pollux_tuned_configurations(const PolluxGoodput& goodput);

}  // namespace dnnsim
