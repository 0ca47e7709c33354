// Job-trace readers (traces/jobs/job_readers.hpp): real slices of the shipped traces read as
// documented, the unshipped formats (Philly JSON, Helios, PAI) on slices written from their
// documented schemas (papers-cluster.md §10), and every kind of bad input reported at FILE:ROW:COL.
#include "traces/jobs/job_readers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dnnsim/source_paths.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/temp_files.hpp"
#include "traces/jobs/job_generator.hpp"

namespace dnnsim {
namespace {

using namespace testing;

// The first three rows of the shipped philly.csv (unsorted as released: the reader sorts them and
// re-bases dates to the earliest, 2017-09-29 07:58:32).
TEST(JobReaders, PhillyCsvSliceSortedAndRebased) {
  const std::string path = write_file("philly.csv",
                                      "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                      "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                                      "2017-10-09 06:13:03,2951.0,1,2951.0,6214e9\n"
                                      "2017-09-29 07:58:32,860662.0,1,860662.0,6c71a0\n");
  const JobTrace trace = read_job_trace("philly-csv", {path});
  ASSERT_EQ(trace.jobs.size(), 3u);
  EXPECT_EQ(trace.jobs[0].virtual_cluster, "6c71a0");
  EXPECT_DOUBLE_EQ(trace.jobs[0].submit.value(), 0.0);
  // 2017-10-09 06:13:03 − 2017-09-29 07:58:32 = 9 d 22 h 14 min 31 s = 857,671 s.
  EXPECT_DOUBLE_EQ(trace.jobs[1].submit.value(), 857671.0);
  EXPECT_DOUBLE_EQ(trace.jobs[1].duration.value(), 2951.0);
  EXPECT_EQ(trace.jobs[2].where.line, 2);
}

TEST(JobReaders, PolluxWorkloadShippedFile) {
  const JobTrace trace = read_job_trace(
      "pollux-workload", {DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21/workloads/load-1.0/workload-6.csv"});
  ASSERT_EQ(trace.jobs.size(), 160u);
  EXPECT_EQ(trace.jobs[0].id, "cifar10-0");
  EXPECT_EQ(trace.jobs[0].gpus, 6);
  EXPECT_EQ(trace.jobs[0].batch_size, 2048);
  EXPECT_DOUBLE_EQ(trace.jobs[0].submit.value(), 53.0);
  // "cifar10-0,53,cifar10,…": the application starts at column 14, the row's time at 11.
  EXPECT_EQ(trace.jobs[0].where.column, 11);
  EXPECT_EQ(trace.jobs[0].model_location().line, 2);
  EXPECT_EQ(trace.jobs[0].model_location().column, 14);
}

// The artifact's simulator decides at 60 s, 120 s, … of the file's own times (simulator.py Cluster.step),
// so its comparison keeps that clock with `from: 0s`; by default the trace is re-based to its first
// submission. Rows 1–2 of load-1.0/workload-6.csv: cifar10-0 at 53 s, cifar10-1 at 154 s.
TEST(JobReaders, PolluxWorkloadKeepsItsOwnClockFromZero) {
  const JobTrace trace = read_job_trace(
      "pollux-workload", {DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21/workloads/load-1.0/workload-6.csv"});
  JobFilter own;
  own.from = Seconds(0);
  const JobTrace kept = apply_filter(trace, own);
  EXPECT_DOUBLE_EQ(kept.jobs[0].submit.value(), 53.0);
  EXPECT_DOUBLE_EQ(kept.jobs[1].submit.value(), 154.0);
  const JobTrace rebased = apply_filter(trace, JobFilter{});
  EXPECT_DOUBLE_EQ(rebased.jobs[0].submit.value(), 0.0);
  EXPECT_DOUBLE_EQ(rebased.jobs[1].submit.value(), 101.0);  // 154 − 53
}

// The first two rows of Gavel's physical_cluster/small_test.trace (tab-separated).
TEST(JobReaders, GavelTraceSlice) {
  const std::string path = write_file(
      "gavel.trace",
      "Transformer (batch size 128)\tpython3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size 128 "
      "-proj_share_weight\ttranslation\t-step\t1\t346\t2\t1\t-1.000000\t0\n"
      "Recommendation (batch size 8192)\tpython3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size 8192\t"
      "recommendation\t-n\t1\t36\t1\t1\t-1.000000\t0\n");
  const JobTrace trace = read_job_trace("gavel", {path});
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.jobs[0].model, "Transformer (batch size 128)");
  EXPECT_DOUBLE_EQ(trace.jobs[0].iterations, 346.0);
  EXPECT_EQ(trace.jobs[0].gpus, 2);
  EXPECT_EQ(trace.jobs[1].gpus, 1);
  EXPECT_EQ(trace.jobs[1].model_location().line, 2);  // the job type is the first field
  EXPECT_EQ(trace.jobs[1].model_location().column, 1);
}

TEST(JobReaders, PhillyJsonFromSchema) {
  const std::string path = write_file("philly.json", R"([
 {"status": "Pass", "vc": "vc1", "jobid": "j1", "submitted_time": "2017-10-01 00:00:00", "user": "u1",
  "attempts": [{"start_time": "2017-10-01 00:01:00", "end_time": "2017-10-01 00:05:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}, {"ip": "m2", "gpus": ["gpu0", "gpu1"]}]},
               {"start_time": "2017-10-01 00:10:00", "end_time": "2017-10-01 01:00:00", "detail": []}]},
 {"status": "Killed", "vc": "vc1", "jobid": "j2", "submitted_time": "2017-10-01 00:02:00", "user": "u2", "attempts": []},
 {"status": "Pass", "vc": "vc2", "jobid": "j3", "submitted_time": "2017-10-01 00:03:00", "user": "u1",
  "attempts": [{"start_time": "2017-10-01 00:03:00", "end_time": null, "detail": [{"ip": "m3", "gpus": ["gpu0"]}]}]}
])");
  const JobTrace trace = read_job_trace("philly-json", {path});
  ASSERT_EQ(trace.jobs.size(), 1u);
  EXPECT_EQ(trace.skipped, 2u);  // no attempt; still running
  EXPECT_EQ(trace.jobs[0].gpus, 4);
  EXPECT_DOUBLE_EQ(trace.jobs[0].duration.value(), 59 * 60.0);  // first start 00:01 → last end 01:00
  EXPECT_EQ(trace.jobs[0].user, "u1");
}

// Found by fuzzing (tests/fuzz/crashers/job_trace/philly-json-attempt-not-an-object): an attempt that
// is not an object, and a date or user that is not a string, are located errors, not yaml-cpp
// exceptions.
TEST(JobReaders, PhillyJsonWrongTypesAreLocated) {
  const std::string path = write_file("philly-types.json", R"([
 {"jobid": "j1", "submitted_time": "2017-10-01 00:00:00", "attempts": ["oops"]},
 {"jobid": "j2", "submitted_time": "2017-10-01 00:00:00", "user": {"a": 1},
  "attempts": [{"start_time": ["2017"], "end_time": "2017-10-01 00:05:00", "detail": 7}]}
])");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)read_job_trace("philly-json", {path}); });
  expect_errors(diagnostics, {{2, 72, "expected an attempt object"},
                              {4, 31, "expected a string, got a list"},
                              {4, 86, "expected a list of placements, got \"7\""}});
}

TEST(JobReaders, HeliosFromSchema) {
  const std::string path =
      write_file("helios.csv",
                 "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                 "7,uA,vcX,8,32,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:01:00,2020-04-01 01:01:00,3600,50\n"
                 "8,uB,vcX,0,4,1,COMPLETED,2020-04-01 00:00:20,2020-04-01 00:00:20,2020-04-01 00:00:30,10,0\n"
                 "9,uA,vcY,1,4,1,FAILED,2020-04-01 00:00:00,2020-04-01 00:00:05,2020-04-01 00:00:15,10,5\n");
  const JobTrace trace = read_job_trace("helios", {path});
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.skipped, 1u);  // CPU-only
  EXPECT_EQ(trace.jobs[0].id, "9");
  EXPECT_DOUBLE_EQ(trace.jobs[1].submit.value(), 10.0);
  EXPECT_EQ(trace.jobs[1].gpus, 8);
}

TEST(JobReaders, AlibabaPaiFromSchema) {
  const std::string jobs = write_file("pai_job.csv",
                                      "j1,i1,u1,Terminated,100,400\n"
                                      "j2,i2,u2,Failed,110,200\n"
                                      "j3,i3,u1,Terminated,90,190\n");
  const std::string tasks = write_file("pai_task.csv",
                                       "j1,worker,2,Terminated,100,400,600,29,100,V100\n"
                                       "j1,ps,1,Terminated,100,400,600,29,,MISC\n"
                                       "j2,worker,1,Failed,110,200,600,29,100,T4\n"
                                       "j3,worker,1,Terminated,90,190,600,29,50,T4\n");
  const JobTrace trace = read_job_trace("alibaba-pai", {jobs, {{"tasks", tasks}}});
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.skipped, 1u);
  EXPECT_EQ(trace.jobs[0].id, "j3");  // submitted at 90, first after re-basing
  EXPECT_EQ(trace.jobs[0].gpus, 1);   // ⌈0.5⌉
  EXPECT_EQ(trace.jobs[1].gpus, 2);
  EXPECT_EQ(trace.jobs[1].gpu_type, "V100");
  EXPECT_DOUBLE_EQ(trace.jobs[1].duration.value(), 300.0);
}

// Counts are ints: a GPU count beyond 2^31 − 1 is refused where it is read, not wrapped (4294967297
// would become 1) or converted out of range (undefined). PAI's count is a sum over the job's tasks
// (inst_num × plan_gpu / 100: 2 × 1.8e19 / 100 = 3.7e17), refused at the job's row; a Philly count
// at its field. (The PAI input is a reduction of a fuzz smoke finding.)
TEST(JobReaders, CountsBeyondAnIntAreRefused) {
  const std::string jobs = write_file("pai_job_big.csv", "j1,i1,u1,Terminated,100,400\n");
  const std::string tasks =
      write_file("pai_task_big.csv", "j1,worker,2,Terminated,100,400,600,29,18446744073709551616,V100\n");
  const auto pai = diagnostics_thrown_by([&] { (void)read_job_trace("alibaba-pai", {jobs, {{"tasks", tasks}}}); });
  expect_errors(pai, {{1, 1, "asks for 3.68935e+17 GPUs"}});
  const std::string philly = write_file("philly_big.csv",
                                        "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                        "2017-10-09 07:01:55,66.0,4294967297,66.0,11cb48\n");
  const auto wide = diagnostics_thrown_by([&] { (void)read_job_trace("philly-csv", {philly}); });
  expect_errors(wide, {{2, 26, "num_gpus: 4294967297 is too large (at most 2147483647)"}});
}

// A name names a job, an application or a model: empty, it is an error at its field, once (an empty
// application also failed the speed model's lookup and its "no model" check). Rows 1-3 of the shipped
// load-1.0/workload-6.csv with the first name and the second application emptied.
TEST(JobReaders, AnEmptyNameIsLocated) {
  const std::string path = write_file("workload.csv",
                                      "name,time,application,num_replicas,batch_size\n"
                                      ",53,cifar10,6,2048\n"
                                      "cifar10-1,154,,6,2048\n"
                                      "deepspeech2-2,326,deepspeech2,8,320\n");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)read_job_trace("pollux-workload", {path}); });
  expect_errors(diagnostics, {{2, 1, "name: expected a name, found an empty field"},
                              {3, 15, "application: expected a name, found an empty field"}});
}

// Gavel's parse_trace converts needs_data_dir, priority_weight and SLO (int, float, float) although
// dnnsim does not simulate them: a row Gavel would refuse is refused. The two rows of GavelTraceSlice,
// those fields corrupted.
TEST(JobReaders, GavelFieldsGavelConvertsAreChecked) {
  const std::string path = write_file(
      "gavel-bad.trace",
      "Transformer (batch size 128)\tpython3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size 128 "
      "-proj_share_weight\ttranslation\t-step\tyes\t346\t2\t1\t-1.000000\t0\n"
      "Recommendation (batch size 8192)\tpython3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size 8192\t"
      "recommendation\t-n\t1\t36\t1\t-1\tnone\t0\n");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)read_job_trace("gavel", {path}); });
  ASSERT_EQ(diagnostics.size(), 3u) << dump(diagnostics);
  EXPECT_EQ(diagnostics[0].location.line, 1);
  EXPECT_NE(diagnostics[0].message.find("needs_data_dir: expected an integer"), std::string::npos) << dump(diagnostics);
  EXPECT_EQ(diagnostics[1].location.line, 2);
  EXPECT_NE(diagnostics[1].message.find("priority_weight"), std::string::npos) << dump(diagnostics);
  EXPECT_NE(diagnostics[2].message.find("slo: expected a number"), std::string::npos) << dump(diagnostics);
}

// Every problem of the file at once, each at its row and column.
TEST(JobReaders, DnnsimCsvBadRowsLocated) {
  const std::string path = write_file("bad.csv",
                                      "id,submit_s,gpus,duration_s\n"
                                      "a,0,1,10\n"
                                      "b,-5,1,10\n"
                                      "c,20,zero,10\n"
                                      "d,10,1,10\n"
                                      "e,5,1,10\n"
                                      "a,30,1\n");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)read_job_trace("dnnsim", {path}); });
  expect_errors(diagnostics, {{3, 3, "below the minimum"},
                              {4, 6, "expected an integer"},
                              {6, 3, "before the previous row"},
                              {7, 1, "without work"},
                              {7, 3, "appears twice"}});
}

TEST(JobReaders, UnknownFormatSuggests) {
  const auto diagnostics = diagnostics_thrown_by([&] { (void)read_job_trace("phily-csv", {"x"}); });
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].message.find("did you mean 'philly-csv'"), std::string::npos);
}

TEST(JobReaders, FilterWindowGpusAndCount) {
  JobTrace trace;
  for (int i = 0; i < 10; ++i)
    trace.jobs.push_back(
        JobRecord{"j" + std::to_string(i), Seconds(i * 10.0), Seconds(5), 0, i % 3 + 1, "", 0, i % 2 ? "odd" : "even"});
  JobFilter filter;
  filter.virtual_clusters = {"even"};
  filter.from = Seconds(20);
  filter.max_gpus = 2;
  const JobTrace kept = apply_filter(trace, filter);
  // even VC: j0 j2 j4 j6 j8; from 20: j2 j4 j6 j8; GPUs i%3+1 = 3, 2, 1, 3 → j4, j6.
  ASSERT_EQ(kept.jobs.size(), 2u);
  EXPECT_EQ(kept.jobs[0].id, "j4");
  EXPECT_DOUBLE_EQ(kept.jobs[0].submit.value(), 20.0);  // 40 − from
}

// The mapping depends on the seed and the job alone: the same job keeps its model when the trace is
// filtered, and only covering entries are drawn.
TEST(JobGenerator, ModelMappingIsPerJobAndSeeded) {
  JobTrace trace;
  for (int i = 0; i < 50; ++i)
    trace.jobs.push_back(JobRecord{"j" + std::to_string(i), Seconds(i), Seconds(1), 0, i % 2 ? 8 : 1});
  const std::vector<ModelMixEntry> mix{{"resnet50", 1, 1, 1}, {"bert-base", 1, 1, 1}, {"gpt2-small", 1, 2, 64}};
  JobTrace all = trace, half = trace;
  half.jobs.resize(10);
  map_models(all, mix, 7);
  map_models(half, mix, 7);
  for (std::size_t i = 0; i < half.jobs.size(); ++i) EXPECT_EQ(half.jobs[i].model, all.jobs[i].model);
  for (const JobRecord& job : all.jobs) {
    if (job.gpus == 8) {
      EXPECT_EQ(job.model, "gpt2-small");
    }
  }
}

// Poisson generator: the mean gap of 20,000 exponential draws is 1/rate within 3 standard errors
// (σ/√n = 1/(rate·√n) = 0.7% of the mean).
TEST(JobGenerator, PoissonArrivalsHaveTheRequestedRate) {
  JobGeneratorSpec spec;
  spec.count = 20001;
  spec.rate = 0.5;
  spec.seed = 3;
  const JobTrace trace = generate_jobs(spec);
  const double mean_gap = trace.jobs.back().submit.value() / 20000.0;
  EXPECT_NEAR(mean_gap, 2.0, 3 * 2.0 / std::sqrt(20000.0));
  EXPECT_EQ(generate_jobs(spec).jobs[123].submit, trace.jobs[123].submit);  // seeded
}

}  // namespace
}  // namespace dnnsim
