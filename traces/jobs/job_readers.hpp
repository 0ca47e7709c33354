// Readers of public job traces into a JobTrace (job_trace.hpp), one registry entry per format
// (`dnnsim list job-traces`). Schemas: docs/research/papers-cluster.md §10 and the data READMEs.
//
//   philly-csv      Pollux's philly.csv `timestamp,duration,num_gpus,gpu_time,cluster`
//   pollux-workload Pollux's workload CSV `name,time,application,num_replicas,batch_size` (work comes
//                   from the Pollux speed tables: iterations to the target at that batch size)
//   gavel           Gavel's tab-separated trace: job type, command, working dir, steps argument,
//                   needs-data-dir, total steps, scale factor (GPUs), priority, SLO, arrival time (s)
//   philly-json     Philly's cluster_job_log (JSON list; GPUs = GPUs of the first attempt,
//                   duration = last end − first start; jobs without a finished attempt are skipped
//                   and counted in JobTrace::skipped)
//   helios          Helios' cluster_log.csv (job_id,user,vc,gpu_num,cpu_num,node_num,state,
//                   submit_time,start_time,end_time,duration,queue); CPU-only rows (gpu_num 0) skipped
//   alibaba-pai     PAI's pai_job_table (job_name,inst_id,user,status,start_time,end_time; headerless
//                   as released) with `tasks:` = pai_task_table (job_name,task_name,inst_num,status,
//                   start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type): GPUs = ⌈Σ inst_num ×
//                   plan_gpu / 100⌉, GPU type of the first GPU task; only Terminated jobs
//   dnnsim          dnnsim's CSV, a superset of Tiresias' simulator CSV: required `id,submit_s,gpus`
//                   (or Tiresias' `job_id,submit_time,num_gpu`), optional `duration_s` (`duration`),
//                   `iterations`, `model` (`model_name`), `batch_size`, `virtual_cluster`, `user`,
//                   `gpu_type`; every job needs duration_s or iterations; rows sorted by submit_s.
//
// Dates: sources with absolute dates (Philly, Helios, PAI) are re-based to their earliest
// submission; sources that are unsorted as released (Philly CSV/JSON, Helios, PAI) are sorted by
// submit time (stable); the others must be sorted and a row out of order is an error.
// Every problem (malformed row, negative time, unknown column, out-of-order row) is reported as
// FILE:ROW:COL, all of them at once (InputError).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "models/common/registry.hpp"
#include "traces/jobs/job_trace.hpp"

namespace dnnsim {

// Where a trace is: its main file and, for multi-table formats, the others by role (`tasks`).
struct JobTraceFiles {
  std::string file;
  std::map<std::string, std::string> extra;
};

using JobTraceReader = std::function<JobTrace(const JobTraceFiles&)>;
using JobTraceReaderRegistry = Registry<JobTraceReader>;

void register_builtin_job_trace_readers(JobTraceReaderRegistry& registry);
[[nodiscard]] const JobTraceReaderRegistry& builtin_job_trace_readers();

// @throw InputError
[[nodiscard]] JobTrace read_job_trace(const std::string& format, const JobTraceFiles& files);

}  // namespace dnnsim
