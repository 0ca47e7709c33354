// Pollux's Philly application rule (traces/jobs/pollux_applications.hpp) on hand-built jobs: the
// GPU-time classes and filters of the artifact's simulator/workload.py, the configuration taken from
// the given list, determinism per job, and located errors.
#include "traces/jobs/pollux_applications.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/diagnostics.hpp"

namespace dnnsim {
namespace {

// One configuration per application, so the drawn one is known: GPUs tell the application apart.
const PolluxConfigurations kOne{{"bert", {{6, 384}}},       {"cifar10", {{8, 2048}}}, {"deepspeech2", {{12, 640}}},
                                {"imagenet", {{24, 3200}}}, {"ncf", {{1, 32768}}},    {"yolov3", {{4, 64}}}};

JobRecord philly_job(int index, double duration, int gpus) {
  JobRecord job;
  job.id = fmt::format("philly-{}", index);
  job.duration = Seconds(duration);
  job.gpus = gpus;
  job.where = SourceLocation{"philly.csv", index + 1, 1};
  return job;
}

TEST(PolluxApplications, GpuTimeClassesAndFilters) {
  JobTrace trace;
  // GPU-time = duration × GPUs: 59 s is dropped (< 60 s run), 3,599 GPU-s is under 1 h (cifar10 or ncf),
  // 2 × 1,800 s = 1 h exactly is the next class (deepspeech2 or bert), 8 × 4,500 s = 10 h yolov3,
  // 4 × 90,000 s = 100 h imagenet, 1 × 3,600,000 s = 1,000 h dropped (the bound is exclusive).
  trace.jobs = {philly_job(1, 59, 1),   philly_job(2, 3599, 1),  philly_job(3, 1800, 2),
                philly_job(4, 4500, 8), philly_job(5, 90000, 4), philly_job(6, 3600000, 1)};
  assign_pollux_applications(trace, kOne, 1, {});
  ASSERT_EQ(trace.jobs.size(), 4u);
  EXPECT_EQ(trace.skipped, 2u);
  EXPECT_TRUE(trace.jobs[0].model == "cifar10" || trace.jobs[0].model == "ncf") << trace.jobs[0].model;
  EXPECT_TRUE(trace.jobs[1].model == "deepspeech2" || trace.jobs[1].model == "bert") << trace.jobs[1].model;
  EXPECT_EQ(trace.jobs[2].model, "yolov3");
  EXPECT_EQ(trace.jobs[2].gpus, 4);  // the configuration's replicas, not the trace's 8 GPUs
  EXPECT_EQ(trace.jobs[2].batch_size, 64);
  EXPECT_EQ(trace.jobs[3].model, "imagenet");
  EXPECT_EQ(trace.jobs[3].gpus, 24);
  for (const JobRecord& job : trace.jobs) EXPECT_EQ(job.duration.value(), 0.0) << "work comes from the tables";
}

// Even odds between cifar10 and ncf, and between deepspeech2 and bert: over 2,000 jobs each share is
// 1,000 ± 3σ, σ = √(2000 × ¼) ≈ 22.4, so within [933, 1067]. The same seed gives the same mapping;
// a job's application does not depend on the other jobs kept.
TEST(PolluxApplications, EvenOddsDeterministicPerJob) {
  JobTrace small, medium;
  for (int i = 0; i < 2000; ++i) {
    small.jobs.push_back(philly_job(i, 600, 1));
    medium.jobs.push_back(philly_job(i, 7200, 1));
  }
  JobTrace again = small, half;
  half.jobs.assign(small.jobs.begin() + 1000, small.jobs.end());
  assign_pollux_applications(small, kOne, 7, {});
  assign_pollux_applications(medium, kOne, 7, {});
  assign_pollux_applications(again, kOne, 7, {});
  assign_pollux_applications(half, kOne, 7, {});
  int cifar10 = 0, bert = 0;
  for (std::size_t i = 0; i < small.jobs.size(); ++i) {
    cifar10 += small.jobs[i].model == "cifar10";
    bert += medium.jobs[i].model == "bert";
    EXPECT_EQ(small.jobs[i].model, again.jobs[i].model);
    if (i >= 1000) {
      EXPECT_EQ(small.jobs[i].model, half.jobs[i - 1000].model);
    }
  }
  EXPECT_GE(cifar10, 933);
  EXPECT_LE(cifar10, 1067);
  EXPECT_GE(bert, 933);
  EXPECT_LE(bert, 1067);
}

// Configurations are drawn uniformly: three of yolov3, 3,000 jobs → 1,000 ± 3σ each, σ = √(3000·2/9) ≈ 25.8.
TEST(PolluxApplications, ConfigurationDrawnUniformly) {
  PolluxConfigurations three = kOne;
  three["yolov3"] = {{2, 32}, {4, 64}, {8, 128}};
  JobTrace trace;
  for (int i = 0; i < 3000; ++i) trace.jobs.push_back(philly_job(i, 36000, 1));
  assign_pollux_applications(trace, three, 3, {});
  std::map<int, int> by_gpus;
  for (const JobRecord& job : trace.jobs) ++by_gpus[job.gpus];
  ASSERT_EQ(by_gpus.size(), 3u);
  for (const auto& [gpus, count] : by_gpus) {
    EXPECT_GE(count, 923) << gpus;
    EXPECT_LE(count, 1077) << gpus;
  }
}

TEST(PolluxApplications, JobsWithoutRunTimeAndMissingApplicationsAreLocated) {
  JobTrace trace;
  trace.jobs = {philly_job(1, 600, 1), philly_job(2, 0, 1), philly_job(3, 600, 0)};
  trace.jobs[1].iterations = 500;  // work in iterations (a Gavel-like source): no GPU-time
  PolluxConfigurations partial = kOne;
  partial.erase("yolov3");
  const auto errors = testing::diagnostics_thrown_by([&] {
    assign_pollux_applications(trace, partial, 1, SourceLocation{"s.yaml", 9, 5});
  });
  // The sink orders them by file, then place.
  testing::expect_errors(errors, {{3, 1, "job 'philly-2' needs a run time and a GPU count"},
                                  {4, 1, "job 'philly-3' needs a run time and a GPU count"},
                                  {9, 5, "configurations of 'yolov3'"}});
}

TEST(PolluxApplications, JobWithModelKeepsIt) {
  JobTrace trace;
  trace.jobs = {philly_job(1, 600, 3)};
  trace.jobs[0].model = "resnet50";
  assign_pollux_applications(trace, kOne, 1, {});
  ASSERT_EQ(trace.jobs.size(), 1u);
  EXPECT_EQ(trace.jobs[0].model, "resnet50");
  EXPECT_EQ(trace.jobs[0].gpus, 3);
}

}  // namespace
}  // namespace dnnsim
