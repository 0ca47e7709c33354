#include "traces/jobs/job_trace.hpp"

#include <algorithm>

namespace dnnsim {

JobTrace apply_filter(JobTrace trace, const JobFilter& filter) {
  std::vector<JobRecord> kept;
  for (JobRecord& job : trace.jobs) {
    if (!filter.virtual_clusters.empty() && std::find(filter.virtual_clusters.begin(), filter.virtual_clusters.end(),
                                                      job.virtual_cluster) == filter.virtual_clusters.end())
      continue;
    if (filter.from && job.submit < *filter.from) continue;
    if (filter.until && !(job.submit < *filter.until)) continue;
    if (job.gpus < filter.min_gpus) continue;
    if (filter.max_gpus && job.gpus > *filter.max_gpus) continue;
    if (filter.max_jobs && kept.size() >= *filter.max_jobs) break;
    kept.push_back(std::move(job));
  }
  if (filter.rebase && !kept.empty()) {
    const Seconds origin = filter.from ? *filter.from : kept.front().submit;
    for (JobRecord& job : kept) job.submit = job.submit - origin;
  }
  trace.jobs = std::move(kept);
  return trace;
}

}  // namespace dnnsim
