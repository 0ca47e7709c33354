// Pollux's TunedJobs configurations (planners/jobs/pollux_tuned.hpp) against the artifact's own
// output: its 32 shipped workloads were drawn by simulator/workload.py from get_configurations(0.5,
// 0.8), each configuration of each application at least 33 times over the 1,600 jobs, so the distinct
// (application, replicas, batch) triples in them are the artifact's configurations — computed here
// from the same throughput and validation tables.
#include "planners/jobs/pollux_tuned.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "dnnsim/source_paths.hpp"
#include "traces/jobs/job_readers.hpp"

namespace dnnsim {
namespace {

const std::string kData = DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21";

TEST(PolluxTuned, SameConfigurationsAsTheArtifactsWorkloads) {
  std::set<std::tuple<std::string, int, int>> shipped;
  for (const char* load : {"0.5", "1.0", "1.5", "2.0"})
    for (int w = 1; w <= 8; ++w)
      for (const JobRecord& job :
           read_job_trace("pollux-workload", {fmt::format("{}/workloads/load-{}/workload-{}.csv", kData, load, w)})
               .jobs)
        shipped.emplace(job.model, job.gpus, job.batch_size);
  const PolluxSpeedModel speed(kData + "/throughput");
  PolluxGoodput goodput(speed);
  goodput.read_settings(kData + "/applications.csv");  // yolov3's local batch ≤ 8, as applications.py
  std::set<std::tuple<std::string, int, int>> computed;
  for (const auto& [application, configurations] : pollux_tuned_configurations(goodput))
    for (const auto& [replicas, batch] : configurations) computed.emplace(application, replicas, batch);
  EXPECT_EQ(computed, shipped);
}

}  // namespace
}  // namespace dnnsim
