// Pollux measured tables (planners/jobs/measured_speed.hpp) read from the shipped copy, with the
// documented interpolation rule checked against rows of the files themselves; Gavel's throughputs and
// co-located pairs from data/traces/gavel.
#include "planners/jobs/measured_speed.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "dnnsim/source_paths.hpp"
#include "planners/jobs/interference.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/pollux_tables.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

using testing::kPolluxTables;
JobRecord job(const std::string& app, int batch) { return testing::pollux_job(app, batch); }

TEST(PolluxSpeed, MeasuredPlacementIsExact) {
  const PolluxSpeedModel model(kPolluxTables);
  // cifar10/placements.csv row `1,32,0.0427886962890625,0.0004995360016822816`: one GPU, local 32.
  const IterationCost cost = model.iteration(job("cifar10", 32), Placement{{{0, 1}}}, {});
  EXPECT_NEAR(cost.total().value(), 0.0427886962890625, 1e-12);
  EXPECT_NEAR(cost.sync.value(), 0.0004995360016822816, 1e-12);
}

TEST(PolluxSpeed, BetweenMeasuredBatchesIsLinear) {
  const PolluxSpeedModel model(kPolluxTables);
  // Rows `2,32,…` and `2,45,…` (2 GPUs on one node): local 38.5 is halfway, so is its step time.
  const IterationCost mid = model.iteration(job("cifar10", 77), Placement{{{0, 2}}}, {});
  const IterationCost lo = model.iteration(job("cifar10", 64), Placement{{{0, 2}}}, {});
  const IterationCost hi = model.iteration(job("cifar10", 90), Placement{{{0, 2}}}, {});
  EXPECT_NEAR(mid.total().value(), (lo.total().value() + hi.total().value()) / 2, 1e-9);
}

TEST(PolluxSpeed, IterationsToTargetFromValidationFiles) {
  const PolluxSpeedModel model(kPolluxTables);
  // Last row of cifar10/validation-2048.csv: iteration 3178.
  EXPECT_DOUBLE_EQ(*model.iterations_to_target(job("cifar10", 2048)), 3178.0);
}

// At the field that names the application (a workload row's third column), not at the row's time.
TEST(PolluxSpeed, UnknownApplicationIsAnInputErrorAtItsField) {
  const PolluxSpeedModel model(kPolluxTables);
  JobRecord unknown = job("cifar100", 32);
  unknown.where = {"workload.csv", 2, 11};
  unknown.model_where = {"workload.csv", 2, 14};
  const auto diagnostics = testing::diagnostics_thrown_by([&] {
    (void)model.iteration(unknown, Placement{{{0, 1}}}, {});
  });
  ASSERT_EQ(diagnostics.size(), 1u) << testing::dump(diagnostics);
  testing::expect_error(diagnostics[0], 2, 14, "no Pollux throughput table for application 'cifar100'");
}

// Network mode's ring bytes: 2(s−1)/s × the gradient size over s servers, none on one server, and
// none for an application whose gradient size was not given.
TEST(PolluxSpeed, GradientBytesBecomeRingBytesAcrossServers) {
  PolluxSpeedModel model(kPolluxTables);
  model.set_gradient_bytes("cifar10", Bytes(44.7e6), {});
  EXPECT_DOUBLE_EQ(model.iteration(job("cifar10", 128), Placement{{{0, 4}}}, {}).sync_bytes.value(), 0.0);
  EXPECT_DOUBLE_EQ(model.iteration(job("cifar10", 128), Placement{{{0, 2}, {1, 2}}}, {}).sync_bytes.value(), 44.7e6);
  EXPECT_DOUBLE_EQ(
      model.iteration(job("cifar10", 128), Placement{{{0, 1}, {1, 1}, {2, 1}, {3, 1}}}, {}).sync_bytes.value(),
      1.5 * 44.7e6);
  EXPECT_DOUBLE_EQ(model.iteration(job("bert", 32), Placement{{{0, 1}, {1, 1}}}, {}).sync_bytes.value(), 0.0);
  EXPECT_THROW(model.set_gradient_bytes("cifar100", Bytes(1.0), {}), InputError);
}

// A fuzzing finding (tests/fuzz/crashers/scenario/gavel-tables-is-a-directory.yaml): a directory
// given as Gavel's file escaped as std::ios_base::failure from the JSON reader; now an InputError at
// the path, as is a pair key whose scale is not a number.
TEST(GavelSpeed, ADirectoryOrABadKeyIsAnInputError) {
  try {
    (void)GavelSpeedModel(DNNSIM_SOURCE_DIR);
    ADD_FAILURE() << "a directory was read";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("is a directory, not a file"), std::string::npos) << error.what();
  }
  const std::string bad_key = ::testing::TempDir() + "gavel-bad-key.json";
  std::ofstream(bad_key) << R"json({"v100": {"('ResNet-18 (batch size 16)', x)": {"null": 1.0}}})json";
  EXPECT_THROW((void)GavelSpeedModel(bad_key), InputError);
}

// Every problem of Gavel's file at once, each at its line and column (they were thrown one at a time at
// the file, and a negative rate — a negated value of the shipped file — was accepted). The shipped
// v100 table's first row and pair, corrupted: a negative solo rate, a pair key with no scale, a pair
// rate that is text, a pair of one rate, a row without its "null", and a table named in capitals (never
// looked up: gavel_gpu_type names tables in lower case).
TEST(GavelSpeed, EveryProblemOfTheFileIsLocated) {
  const std::string path = testing::write_file("gavel-bad.json", R"json({
  "v100": {
    "('ResNet-18 (batch size 16)', 1)": {
      "null": -32.353384,
      "('ResNet-18 (batch size 256)')": [24.454648, 10.300256],
      "('ResNet-18 (batch size 32)', 1)": ["fast", 11.0],
      "('ResNet-18 (batch size 64)', 1)": [20.0]
    },
    "('ResNet-18 (batch size 32)', 1)": {"('ResNet-18 (batch size 16)', 1)": [11.0, 20.0]}
  },
  "V100_unconsolidated": {}
})json");
  const auto diagnostics = testing::diagnostics_thrown_by([&] { (void)GavelSpeedModel(path); });
  testing::expect_errors(
      diagnostics,
      {{4, 15, "expected a throughput >= 0 steps/s (0: did not fit), found -32.353384"},
       {5, 41,
        "expected a job key ('JOB TYPE', SCALE FACTOR) such as ('ResNet-50 (batch size 64)', 2), found "
        "'('ResNet-18 (batch size 256)')'"},
       {6, 44, "expected a throughput in steps/s, found \"fast\""},
       {7, 43, "expected the pair's two rates [this job's, the other's]"},
       {9, 41, "expected an object with the job's own rate at \"null\""},
       {11, 26,
        "expected a GPU type in lower case such as v100 (v100_unconsolidated: its jobs spread over servers), "
        "found 'V100_unconsolidated'"}});
}

// Gavel's v100 table: ResNet-18 at batch 16 runs 32.353384 steps/s alone and 24.454648 beside
// ResNet-18 at batch 256, which keeps its 10.300256 (the file's row and pair). A catalog V100 of
// either memory size reads the v100 table.
TEST(GavelSpeed, CatalogGpuNamesAndPackedSlowdowns) {
  const GavelSpeedModel gavel(DNNSIM_SOURCE_DIR "/data/traces/gavel/simulation_throughputs.json");
  JobRecord small, large;
  small.model = "ResNet-18 (batch size 16)";
  large.model = "ResNet-18 (batch size 256)";
  const std::vector<ServerInfo> servers{ServerInfo{0, 1, "V100-16GB", 1.0}};
  EXPECT_NEAR(gavel.iteration(small, Placement{{{0, 1}}}, servers).total().value(), 1 / 32.353384328946916, 1e-12);
  EXPECT_NEAR(*gavel.packed_slowdown(small, large, "V100-32GB"), 32.353384328946916 / 24.45464779058787, 1e-12);
  EXPECT_NEAR(*gavel.packed_slowdown(large, small, "V100-16GB"), 1.0, 1e-12);
  EXPECT_FALSE(gavel.packed_slowdown(small, large, "T4").has_value());
  JobRecord unknown;
  unknown.model = "nothing";
  EXPECT_FALSE(gavel.packed_slowdown(small, unknown, "V100-16GB").has_value());
}

// `colocation: fitted`: a measured pair's slowdown becomes the additive interference model's, fitted
// independently here on every pair of the same v100 table; an unprofiled pair stays unpackable.
TEST(GavelSpeed, FittedColocationIsTheInterferenceModel) {
  const std::string file = DNNSIM_SOURCE_DIR "/data/traces/gavel/simulation_throughputs.json";
  GavelSpeedModel gavel(file);
  gavel.use_fitted_colocation();
  const InterferenceModel model = InterferenceModel::fit(read_gavel_colocated_pairs(file, "v100"));
  JobRecord small, large, unknown;
  small.model = "ResNet-18 (batch size 16)";
  large.model = "ResNet-18 (batch size 256)";
  unknown.model = "nothing";
  EXPECT_NEAR(*gavel.packed_slowdown(small, large, "V100-16GB"), model.slowdown(small.model, {large.model}), 1e-9);
  EXPECT_NEAR(*gavel.packed_slowdown(large, small, "V100-16GB"), model.slowdown(large.model, {small.model}), 1e-9);
  EXPECT_FALSE(gavel.packed_slowdown(small, unknown, "V100-16GB").has_value());
}

}  // namespace
}  // namespace dnnsim
