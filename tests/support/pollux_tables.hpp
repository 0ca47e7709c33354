// The Pollux artifact's shipped tables (data/traces/pollux-osdi21) and a job of one of its applications,
// for the tests of the Pollux speed model, goodput model and scheduler. Pure: usable from every layer's
// tests.
#pragma once

#include <string>

#include "dnnsim/source_paths.hpp"
#include "traces/jobs/job_trace.hpp"

namespace dnnsim::testing {

inline const std::string kPolluxTables = DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21/throughput";
inline const std::string kPolluxSettings = DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21/applications.csv";

// A job of `application` at global batch `batch` (0: none given, the tables' smallest).
inline JobRecord pollux_job(const std::string& application, int batch = 0) {
  JobRecord record;
  record.id = "t";
  record.model = application;
  record.batch_size = batch;
  return record;
}

}  // namespace dnnsim::testing
