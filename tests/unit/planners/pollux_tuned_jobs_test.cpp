// The `pollux` speed source's TunedJobs rules (planners/jobs/measured_speed.hpp): `work: progress` and
// `accumulation: artifact`, as the Pollux artifact runs a job at a fixed batch (petuum/adaptdl,
// osdi21-artifact, simulator.py Job.step, update_local_bsz; optimus.py). Expected values are computed
// by hand from rows of the shipped files, quoted in the comments.
#include <gtest/gtest.h>

#include "planners/jobs/measured_speed.hpp"
#include "planners/jobs/speed_models.hpp"
#include "tests/support/options.hpp"
#include "tests/support/pollux_tables.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

using testing::kPolluxTables;
const std::string& kSettings = testing::kPolluxSettings;
JobRecord job(const std::string& app, int batch) { return testing::pollux_job(app, batch); }

std::shared_ptr<const JobSpeedModel> pollux(testing::OptionValues values) {
  Options options = testing::options_of(builtin_speed_models(), "pollux", {{"tables", kPolluxTables}});
  for (const auto& [key, value] : values) options.set(key, value);
  return builtin_speed_models().at("pollux").value(options);
}

// gain = (var + sqr) / (var·B₀/B + sqr) (goodput.py efficiency × scale).
double gain(double sqr, double var, double scale) { return (var + sqr) / (var / scale + sqr); }

TEST(PolluxTunedJobs, WorkIsTheLeastProgressOfTheLastEpoch) {
  // validation-256.csv's last row has the least progress of cifar10's six files: 39062.90816659533.
  const auto progress = pollux({{"work", std::string("progress")}});
  EXPECT_TRUE(progress->counts_progress());
  EXPECT_DOUBLE_EQ(*progress->iterations_to_target(job("cifar10", 2048)), 39062.90816659533);
  // The default stays the iteration column: validation-2048.csv's last row, 3178.
  const auto iterations = pollux({});
  EXPECT_FALSE(iterations->counts_progress());
  EXPECT_DOUBLE_EQ(*iterations->iterations_to_target(job("cifar10", 2048)), 3178.0);
  EXPECT_TRUE(iterations->progress_curve(job("cifar10", 2048), Placement{{{0, 1}}}, 0.0).empty());
}

TEST(PolluxTunedJobs, MicroStepsOfAtMostTheApplicationsLargestLocalBatch) {
  // yolov3 at B = 64 on one node's 4 GPUs: local 16. The artifact's largest local batch is 8
  // (applications.csv), so accum = ⌈16/8⌉ − 1 = 1 and atomic = 8: T = 2·(step − sync) + sync at the
  // row `4,8,0.5009251087903976,0.11896183347702027`.
  const double step8 = 0.5009251087903976, sync8 = 0.11896183347702027;
  const auto artifact = pollux({{"accumulation", std::string("artifact")}, {"applications", kSettings}});
  const IterationCost cost = artifact->iteration(job("yolov3", 64), Placement{{{0, 4}}}, {});
  EXPECT_NEAR(cost.compute.value(), 2 * (step8 - sync8), 1e-12);
  EXPECT_NEAR(cost.sync.value(), sync8, 1e-12);
  // The measured rule runs local 16, a measured batch (`4,16,0.7603336274623871,…`), in one step.
  EXPECT_NEAR(pollux({})->iteration(job("yolov3", 64), Placement{{{0, 4}}}, {}).total().value(), 0.7603336274623871,
              1e-12);
}

TEST(PolluxTunedJobs, OneGpuAboveTheSmallestBatchAccumulatesOnce) {
  // ncf at 32,768 on one GPU (B₀ = 256): local 32,768 is measured, but one replica above B₀
  // accumulates at least once: atomic 16,384, between the rows `1,11606,0.013640518188476563,
  // 0.0003407334405183791` and `1,16413,0.014976799488067627,0.0003391219192743301`.
  const double t = (16384.0 - 11606.0) / (16413.0 - 11606.0);
  const double step = 0.013640518188476563 + t * (0.014976799488067627 - 0.013640518188476563);
  const double sync = 0.0003407334405183791 + t * (0.0003391219192743301 - 0.0003407334405183791);
  const auto artifact = pollux({{"accumulation", std::string("artifact")}});
  EXPECT_NEAR(artifact->iteration(job("ncf", 32768), Placement{{{0, 1}}}, {}).total().value(), 2 * step - sync, 1e-12);
}

TEST(PolluxTunedJobs, AtomicBatchIsCappedByTheLargestMeasuredBatch) {
  // bert at 384 on 6 GPUs, largest local 12: local 64, accum ⌈64/12⌉ − 1 = 5, atomic ⌈64/6⌉ = 11,
  // capped at ⌊384 / (6·6)⌋ = 10: the batch runs as 6·10·6 = 360.
  const PolluxSpeedModel tables(kPolluxTables);
  const PolluxMicroSteps steps = tables.application(job("bert", 384)).fixed_batch_steps(384, 6, 12);
  EXPECT_EQ(steps.accum, 5);
  EXPECT_EQ(steps.atomic, 10);
}

TEST(PolluxTunedJobs, ProgressGrowsAtTheGainOfTheBatchAsRun) {
  // yolov3 at 64 on 4 GPUs (T above). Epoch 0 ends at the least first-row progress over the seven
  // files, validation-16.csv's 2068.9729098930034; in it the gain is validation-64.csv's first row
  // (grad_sqr 3732441.01487553, grad_var 186061.8285963139) at B/B₀ = 64/8.
  const double step = 2 * (0.5009251087903976 - 0.11896183347702027) + 0.11896183347702027;
  const auto speed = pollux(
      {{"work", std::string("progress")}, {"accumulation", std::string("artifact")}, {"applications", kSettings}});
  const auto curve = speed->progress_curve(job("yolov3", 64), Placement{{{0, 4}}}, 0.0);
  ASSERT_EQ(curve.size(), 50u);  // every file has 50 epochs
  EXPECT_DOUBLE_EQ(curve.front().to, 2068.9729098930034);
  EXPECT_NEAR(curve.front().rate, gain(3732441.01487553, 186061.8285963139, 8) / step, 1e-9);
  // From inside epoch 0 the curve still starts with it; past its end, with epoch 1.
  EXPECT_EQ(speed->progress_curve(job("yolov3", 64), Placement{{{0, 4}}}, 2068.0).size(), 50u);
  EXPECT_EQ(speed->progress_curve(job("yolov3", 64), Placement{{{0, 4}}}, 2069.0).size(), 49u);
}

TEST(PolluxTunedJobs, OptimusEstimatesTheIterationsLeftFromTheIterationColumn) {
  // optimus.py: remaining = get_iteration(B, last epoch) − get_iteration(B, epochs completed);
  // cifar10 at 2,048 (validation-2048.csv: 112 after the first epoch, 3,178 after the last). Before
  // any epoch is complete: 3178 − 112; past the last epoch's start: 1.
  const auto speed = pollux({{"work", std::string("progress")}});
  EXPECT_DOUBLE_EQ(speed->iterations_left(job("cifar10", 2048), 0.0, 39062.90816659533), 3178.0 - 112.0);
  EXPECT_DOUBLE_EQ(speed->iterations_left(job("cifar10", 2048), 39000.0, 39062.90816659533), 1.0);
  // Counted as iterations, what is left is the work left.
  EXPECT_DOUBLE_EQ(pollux({})->iterations_left(job("cifar10", 2048), 100.0, 3178.0), 3078.0);
}

TEST(PolluxTunedJobs, SettingsWithoutTheArtifactsAccumulationAreRefused) {
  // The applications file only feeds accumulation: artifact; given alone it would be silently unused.
  EXPECT_THROW((void)pollux({{"applications", kSettings}}), InputError);
  const std::string bad = testing::write_file("applications.csv", "application,max_local_bsz\nyolov3,8\n");
  EXPECT_THROW((void)pollux({{"accumulation", std::string("artifact")}, {"applications", bad}}), InputError);
}

}  // namespace
}  // namespace dnnsim
