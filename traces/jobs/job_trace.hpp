// A stream of training jobs for cluster-level simulation, independent of where it was read from.
//
// Every reader of traces/jobs/ (Philly, Pollux, Gavel, Helios, Alibaba PAI, dnnsim's own CSV) and the
// synthetic generator produce a JobTrace; schedulers (planners/jobs/) and the cluster simulation
// (sim/cluster/) consume it. Field meanings follow the union of the sources' schemas
// (docs/research/papers-cluster.md §10; Tiresias' simulator CSV `job_id,num_gpu,submit_time,
// iterations,model_name,duration,interval`, of which dnnsim's CSV is a superset).
//
// Work rule (docs/cluster.md): a job's work is a number of training iterations. Sources that give it
// (Gavel's total steps, Pollux's iterations to the target metric, dnnsim CSV `iterations`) set
// `iterations`; sources that give a run time only (Philly, Helios, PAI) set `duration`, and the
// simulator derives iterations = duration × the job's solo speed (its requested GPUs, consolidated,
// alone on the cluster), so that a job alone on an idle cluster finishes in its trace duration.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/units.hpp"

namespace dnnsim {

struct JobRecord {
  std::string id;               // the source's job id or name; unique inside a trace
  Seconds submit;               // seconds since the trace's origin (its first submission, or 0)
  Seconds duration;             // run time in the source at `gpus` GPUs; 0 when the source gives work
  double iterations = 0.0;      // work in iterations when the source gives it; 0 = from `duration`
  int gpus = 1;                 // GPUs requested (gang-scheduled: all or nothing)
  std::string model;            // model / application name; empty until mapped (job_workload_map.hpp)
  int batch_size = 0;           // global batch size; 0 = the model's default
  std::string virtual_cluster;  // Philly/Helios VC, PAI group; empty when none
  std::string user;
  std::string gpu_type;  // requested GPU type ("V100"); empty = any
  // Parameter-server architecture (planners/jobs/parameter_server.hpp): > 0 makes the job one of
  // workers (its GPUs) and ceil(workers × this) parameter servers, each on ps_cores CPU cores; 0 is
  // a ring all-reduce job. Set by the cluster workload's `architecture` section, not by traces.
  double ps_per_worker = 0.0;
  int ps_cores = 1;
  SourceLocation where;  // the row it came from, for messages about this job
  // The field that names its model, where the source has one: an unknown model is that field's
  // mistake, not the row's.
  SourceLocation model_where;
  [[nodiscard]] const SourceLocation& model_location() const { return model_where.file.empty() ? where : model_where; }
};

// Jobs in submission order (ties keep the source order). Readers reject unsorted sources unless the
// format is documented as unsorted (Philly's CSV is sorted by the reader; see job_readers.hpp).
struct JobTrace {
  std::vector<JobRecord> jobs;
  std::string source;       // file or generator description, for reports
  std::size_t skipped = 0;  // source rows the format documents as not jobs (no finished attempt, CPU only)
};

// Which jobs of a trace to replay. All bounds inclusive; applied in this order: virtual cluster,
// time window, GPU range, then the first `max_jobs` remaining. Submission times are re-based so that
// the first kept job's window start is 0 when `rebase` is set.
struct JobFilter {
  std::vector<std::string> virtual_clusters;  // empty = all
  std::optional<Seconds> from;                // submit >= from
  std::optional<Seconds> until;               // submit < until
  int min_gpus = 0;
  std::optional<int> max_gpus;
  std::optional<std::size_t> max_jobs;
  bool rebase = true;  // subtract `from` (or the first kept submission) from every submit time
};

[[nodiscard]] JobTrace apply_filter(JobTrace trace, const JobFilter& filter);

}  // namespace dnnsim
