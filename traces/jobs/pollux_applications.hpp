// Pollux's mapping of Philly jobs to its six applications: the rule of the artifact's workload
// generator (Qiao et al., OSDI'21 §5.3; petuum/adaptdl, branch osdi21-artifact, simulator/workload.py
// `generate`), applied to a whole trace instead of to a sample of one busy period:
//   kept         jobs that ran at least 60 s and used under 1,000 GPU-hours (the generator's two
//                filters); the others are dropped and counted in JobTrace::skipped;
//   application  by the job's GPU-time g = duration × GPUs (philly.csv's `gpu_time`): g < 1 h cifar10
//                or ncf (even odds), g < 10 h deepspeech2, half of which become bert (the generator's
//                second random stream), g < 100 h yolov3, else imagenet;
//   GPUs, batch  one of the application's TunedJobs configurations, uniformly (applications.py
//                get_configurations(0.5, 0.8), computed from the measured tables by
//                planners/jobs/pollux_tuned.hpp); the trace's own GPU count is not used, as in the
//                generator, whose re-draw of num_gpus for yolov3 and imagenet is never read;
//   work         the application's, from its tables (iterations to its target): duration becomes 0.
// Draws: per job, splitmix64(seed ⊕ FNV-1a(id)) for the first stream and splitmix64((seed + 3) ⊕
// FNV-1a(id)) for the bert switch, so a job's application does not depend on which other jobs are
// kept; they are not Python's Mersenne Twister, so the artifact's sampled workloads are not reproduced
// job by job — only the rule. A job that already has a model keeps it (the per-job override, as for
// the `models` mix of job_generator.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "traces/jobs/job_trace.hpp"

namespace dnnsim {

// Per application, its (replicas, global batch) configurations; every one of the six must be present
// with at least one.
using PolluxConfigurations = std::map<std::string, std::vector<std::pair<int, int>>>;

// The rule's thresholds of GPU-time, in GPU-seconds (workload.py).
struct PolluxApplicationRule {
  double min_duration = 60.0;              // trace.duration >= 60
  double max_gpu_seconds = 1000.0 * 3600;  // trace.gpu_time < 1000 h
  double small = 1.0 * 3600, medium = 10.0 * 3600, large = 100.0 * 3600;
};

// Maps every model-less job of `trace` (which must give run times: Philly, Helios, PAI) by the rule.
// @throw InputError located at each job without a run time or GPU count, and at `where` for an
// application missing from `configurations` — all problems at once.
void assign_pollux_applications(JobTrace& trace, const PolluxConfigurations& configurations, std::uint64_t seed,
                                const SourceLocation& where, const PolluxApplicationRule& rule = {});

}  // namespace dnnsim
