// Sweep files: expansion of grid, zip, range and random axes (expected values derived in comments),
// the product order and point ids, every kind of error with its line and column, and the CSV helpers
// of the runner. Each sweep is written inline next to a small valid base scenario.
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/sweep/sweep_runner.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

// The sweep `yaml` over the scenario `base`, written beside it as base.yaml (kTwoGpuBase: one node of
// 2 GPUs, one layer, valid for every override the tests below make).
SweepSpec load_sweep_text(const std::string& yaml, bool validate = true, const std::string& base = kTwoGpuBase) {
  write_file("base.yaml", base);
  const std::string path = write_file("sweep.yaml", yaml);
  return validate ? load_sweep(path) : load_sweep_unvalidated(path);
}

std::vector<Diagnostic> sweep_errors(const std::string& yaml, bool validate = true,
                                     const std::string& base = kTwoGpuBase) {
  return diagnostics_thrown_by([&] { (void)load_sweep_text(yaml, validate, base); });
}

// The values of every point for one key, in point order.
std::vector<std::string> column(const SweepSpec& spec, const std::string& key) {
  std::vector<std::string> values;
  for (const SweepPoint& point : spec.points)
    for (const auto& [k, text] : point.assignments)
      if (k == key) values.push_back(text);
  return values;
}

TEST(SweepSpec, ReadsTheTopLevelKeys) {
  const SweepSpec spec = load_sweep_text(R"(name: s1
base: base.yaml
metrics: [mean.iteration_time_s, status]
timeout: "90s"
axes:
  - grid: {run.seed: [1, 2]}
)");
  EXPECT_EQ(spec.name, "s1");
  EXPECT_EQ(spec.base_path, (testing::test_dir() / "base.yaml").string());
  EXPECT_EQ(spec.metrics, (std::vector<std::string>{"mean.iteration_time_s", "status"}));
  EXPECT_DOUBLE_EQ(spec.timeout.value(), 90.0);
  EXPECT_EQ(spec.axis_keys, std::vector<std::string>{"run.seed"});
  // The metric "status" collides with the status column: it is named summary.status.
  EXPECT_EQ(sweep_columns(spec), (std::vector<std::string>{"point", "run.seed", "status", "error",
                                                           "mean.iteration_time_s", "summary.status"}));
}

TEST(SweepSpec, DefaultTimeoutIsTenMinutes) {
  const SweepSpec spec = load_sweep_text("name: s\nbase: base.yaml\naxes: []\n");
  EXPECT_DOUBLE_EQ(spec.timeout.value(), 600.0);
  ASSERT_EQ(spec.points.size(), 1u);  // no axis: the base scenario as it is
  EXPECT_TRUE(spec.points[0].assignments.empty());
}

TEST(SweepSpec, GridIsTheProductWithTheLastKeyFastest) {
  // 2 × 3 = 6 points; index i = 3·(seed index) + (iterations index):
  //   p0000 (1,1) p0001 (1,2) p0002 (1,3) p0003 (2,1) p0004 (2,2) p0005 (2,3)
  const SweepSpec spec = load_sweep_text(R"(name: g
base: base.yaml
axes:
  - grid: {run.seed: [1, 2], run.iterations: [1, 2, 3]}
)");
  ASSERT_EQ(spec.points.size(), 6u);
  EXPECT_EQ(spec.axis_keys, (std::vector<std::string>{"run.seed", "run.iterations"}));
  EXPECT_EQ(column(spec, "run.seed"), (std::vector<std::string>{"1", "1", "1", "2", "2", "2"}));
  EXPECT_EQ(column(spec, "run.iterations"), (std::vector<std::string>{"1", "2", "3", "1", "2", "3"}));
  for (std::size_t i = 0; i < spec.points.size(); ++i) EXPECT_EQ(spec.points[i].index, i);
}

TEST(SweepSpec, ZipTakesListsTogetherAndGroupsMultiply) {
  // zip: 3 rows (seed, iterations) = (1,1) (2,2) (3,3); grid after it: bucket sizes 10MB, 20MB.
  // Groups combine like nested loops in file order, the last group fastest: 3 × 2 = 6 points,
  // point i = 2·(zip row) + (grid row).
  const SweepSpec spec = load_sweep_text(R"(name: z
base: base.yaml
axes:
  - zip: {run.seed: [1, 2, 3], run.iterations: [1, 2, 3]}
  - grid: {workload.bucket_size: ["10MB", "20MB"]}
)");
  ASSERT_EQ(spec.points.size(), 6u);
  EXPECT_EQ(spec.axis_keys, (std::vector<std::string>{"run.seed", "run.iterations", "workload.bucket_size"}));
  EXPECT_EQ(column(spec, "run.seed"), (std::vector<std::string>{"1", "1", "2", "2", "3", "3"}));
  EXPECT_EQ(column(spec, "run.iterations"), (std::vector<std::string>{"1", "1", "2", "2", "3", "3"}));
  EXPECT_EQ(column(spec, "workload.bucket_size"),
            (std::vector<std::string>{"10MB", "20MB", "10MB", "20MB", "10MB", "20MB"}));
  // Assignments follow the columns, and point 3 is (2, 2, 20MB).
  EXPECT_EQ(spec.points[3].assignments,
            (std::vector<std::pair<std::string, std::string>>{
                {"run.seed", "2"}, {"run.iterations", "2"}, {"workload.bucket_size", "20MB"}}));
}

TEST(SweepSpec, ListValuesMayBeAnyYaml) {
  // A mapping value is passed as flow YAML and shown as such in the CSV.
  const SweepSpec spec = load_sweep_text(R"(name: y
base: base.yaml
axes:
  - grid: {cluster.nodes: [[{type: box, count: 1}], [{type: box, count: 2}]]}
)");
  EXPECT_EQ(column(spec, "cluster.nodes"),
            (std::vector<std::string>{"[{type: box, count: 1}]", "[{type: box, count: 2}]"}));
  EXPECT_EQ(display_value("[{type: box, count: 1}]"), "[{type: box, count: 1}]");
  EXPECT_EQ(display_value("\"25MB\""), "25MB");
}

TEST(SweepSpec, IntegerRangesStayIntegers) {
  // Linear: v_i = from + (to − from)·i/(steps − 1). 1…4 in 4 steps: 1 2 3 4; 1…10 in 4: 1 4 7 10;
  // 1…1000 log in 4: 1·1000^(i/3) = 1 10 100 1000.
  const SweepSpec spec = load_sweep_text(R"(name: r
base: base.yaml
axes:
  - range: {key: cluster.nodes.0.count, from: 1, to: 4, steps: 4}
  - range: {key: run.seed, from: 1, to: 10, steps: 4}
  - range: {key: run.iterations, from: 1, to: 1000, steps: 4, scale: log}
)",
                                         false);
  ASSERT_EQ(spec.points.size(), 64u);
  EXPECT_EQ(column(spec, "cluster.nodes.0.count")[0], "1");
  EXPECT_EQ(column(spec, "cluster.nodes.0.count")[63], "4");
  std::vector<std::string> seeds, iterations;
  for (std::size_t i = 0; i < 16; i += 4) seeds.push_back(column(spec, "run.seed")[i]);
  for (std::size_t i = 0; i < 4; ++i) iterations.push_back(column(spec, "run.iterations")[i]);
  EXPECT_EQ(seeds, (std::vector<std::string>{"1", "4", "7", "10"}));
  EXPECT_EQ(iterations, (std::vector<std::string>{"1", "10", "100", "1000"}));
}

TEST(SweepSpec, RangesWithUnitsKeepTheUnitOfFrom) {
  // Log 10…100 Gbps in 3 steps: 10, 10·10^0.5 = 31.6227766…, 100, written with 6 significant digits.
  // Linear 1 GB … 2000 MB in 3 steps, in GB (the unit of `from`): 1, 1.5, 2.
  // Linear 0.1 … 0.9 in 5 steps (plain numbers): 0.1 0.3 0.5 0.7 0.9.
  const SweepSpec spec = load_sweep_text(R"(name: u
base: base.yaml
axes:
  - range: {key: a, from: "10Gbps", to: "100Gbps", steps: 3, scale: log}
  - range: {key: b, from: "1GB", to: "2000MB", steps: 3}
  - range: {key: c, from: 0.1, to: 0.9, steps: 5}
)",
                                         false);
  ASSERT_EQ(spec.points.size(), 45u);
  EXPECT_EQ(column(spec, "a")[0], "10Gbps");
  EXPECT_EQ(column(spec, "a")[15], "31.6228Gbps");
  EXPECT_EQ(column(spec, "a")[30], "100Gbps");
  EXPECT_EQ(column(spec, "b")[0], "1GB");
  EXPECT_EQ(column(spec, "b")[5], "1.5GB");
  EXPECT_EQ(column(spec, "b")[10], "2GB");
  const std::vector<std::string> all_c = column(spec, "c");
  const std::vector<std::string> c(all_c.begin(), all_c.begin() + 5);
  EXPECT_EQ(c, (std::vector<std::string>{"0.1", "0.3", "0.5", "0.7", "0.9"}));
  // The text goes back through the unit parser: 31.6228 Gb/s = 31.6228e9 / 8 B/s.
  EXPECT_DOUBLE_EQ(parse_as<BytesPerSecond>(column(spec, "a")[15]).value(), 31.6228e9 / 8);
}

TEST(SweepSpec, RandomDrawsAreDeterministicFromTheSeed) {
  const std::string yaml = R"(name: rnd
base: base.yaml
axes:
  - random:
      samples: 5
      seed: 7
      keys:
        run.seed: {int: [1, 1000]}
        workload.bucket_size: {choice: ["10MB", "50MB"]}
        x.y: {uniform: [0.1, 0.9]}
)";
  const SweepSpec spec = load_sweep_text(yaml, false);
  ASSERT_EQ(spec.points.size(), 5u);
  // The contract: std::mt19937_64(seed); per sample, per key in file order, u = (rng() >> 11)·2⁻⁵³;
  // int [lo, hi] → lo + ⌊u·(hi − lo + 1)⌋, choice → value ⌊u·n⌋, uniform [a, b] → a + u·(b − a) (6 digits).
  std::mt19937_64 rng(7);
  const auto u = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  for (std::size_t s = 0; s < 5; ++s) {
    const auto seed = 1 + static_cast<std::int64_t>(u() * 1000);
    const char* bucket = u() < 0.5 ? "10MB" : "50MB";
    const std::string x = fmt::format("{:.6g}", 0.1 + u() * 0.8);
    EXPECT_EQ(spec.points[s].assignments[0].second, std::to_string(seed)) << "sample " << s;
    EXPECT_EQ(spec.points[s].assignments[1].second, bucket) << "sample " << s;
    EXPECT_EQ(spec.points[s].assignments[2].second, x) << "sample " << s;
  }
  // Same file, same points.
  const SweepSpec again = load_sweep_text(yaml, false);
  for (std::size_t s = 0; s < 5; ++s) EXPECT_EQ(again.points[s].assignments, spec.points[s].assignments);
}

TEST(SweepSpec, PointIdsArePaddedToTheLargestIndex) {
  EXPECT_EQ(point_id(7, 40), "p0007");
  EXPECT_EQ(point_id(0, 1), "p0000");
  EXPECT_EQ(point_id(9999, 10000), "p9999");
  EXPECT_EQ(point_id(42, 10001), "p00042");  // the largest index, 10000, has 5 digits
}

// ---- errors ----

TEST(SweepSpec, StructuralErrorsAreLocated) {
  expect_errors(sweep_errors(R"(name: bad
base: base.yaml
timout: 5s
axes:
  - grid: {run.seed: [1, 2]}
  - zip: {a.b: [1, 2, 3], c.d: ["x", "y"]}
  - range: {key: e, from: 1, to: 4, steps: 1}
  - range: {key: f, from: "10Gbps", to: "10GB", steps: 3}
  - random: {samples: 2, keys: {g: {normal: [1, 2]}}}
  - grd: {h: [1]}
  - grid: {run.seed: [3]}
  - range: {key: i, from: 1, to: "10MB", steps: 3}
  - range: {key: j, from: 1, to: 2, steps: 5}
)"),
                {{3, 1, "unknown key 'timout' in the sweep; did you mean 'timeout'?"},
                 {6, 32, "zip lists must have the same length: 'a.b' has 3 values, 'c.d' has 2"},
                 {7, 44, "expected an integer in [2, 100000], got 1"},
                 {8, 41, "mismatched units: 'from' is a bandwidth (Gbps) but 'to' is a size (GB)"},
                 {9, 37, "unknown distribution 'normal'"},
                 {10, 5, "unknown axis kind 'grd'; did you mean 'grid'?"},
                 {11, 12, "key 'run.seed' is already set by the axis at line 5"},
                 {12, 27, "'from' and 'to' must both have units or both be plain numbers"},
                 {13, 44, "an integer range from 1 to 2 has only 2 distinct values"}});
}

// A zip value that is no list is one error: it is not also compared as a list of 0 values.
TEST(SweepSpec, AZipValueThatIsNoListIsOneError) {
  expect_errors(sweep_errors(R"(name: bad
base: base.yaml
axes:
  - zip:
      a.b: 12
      c.d: [3, 4]
)"),
                {{5, 12, "expected a list of values for 'a.b'"}});
}

TEST(SweepSpec, AnInvalidAxisValueIsReportedAtTheValue) {
  // "lots" is no size: the error is the scenario's, located at the value in the sweep file.
  // bucket_sise is a misspelt key: the scenario's "unknown key" goes to the key's first value.
  expect_errors(sweep_errors(R"(name: v
base: base.yaml
axes:
  - grid: {workload.bucket_size: ["10MB", lots]}
  - grid: {workload.bucket_sise: ["1MB"]}
)"),
                {{4, 43, "workload.bucket_size=lots: expected a size"},
                 {5, 35,
                  "workload.bucket_sise=1MB: unknown key 'bucket_sise' in the workload; did you "
                  "mean 'bucket_size'?"}});
}

// A misspelt key of an axis with several values is met by every value alike: one error, at the key
// (the shipped ADSP sweep's misspelt workload.sync was four, one per value); a value only some points
// refuse is still reported at that value.
TEST(SweepSpec, AMistakeEveryValueOfAKeyMeetsIsOneErrorAtTheKey) {
  expect_errors(
      sweep_errors(R"(name: v
base: base.yaml
axes:
  - grid: {workload.bucket_sise: ["1MB", "2MB", "4MB"]}
  - grid: {workload.bucket_size: ["10MB", lots]}
)"),
      {{4, 12, "workload.bucket_sise: unknown key 'bucket_sise' in the workload; did you mean 'bucket_size'?"},
       {5, 43, "workload.bucket_size=lots: expected a size"}});
}

TEST(SweepSpec, AProblemOfSeveralAxesIsReportedAtAxesOnce) {
  // The base's global_batch 2 fits 2 GPUs but not 4 (two nodes): the scenario blames its own line,
  // which no axis sets, and the point has two axis values, so the error goes to `axes`, once (for the
  // first point that has it: p0002 = second count, first seed), with the base scenario's location.
  const std::string base = edited(kTwoGpuBase, "global_batch: 8", "global_batch: 2");
  const auto errors = sweep_errors(R"(name: w
base: base.yaml
axes:
  - grid: {cluster.nodes.0.count: [1, 2]}
  - grid: {run.seed: [1, 2]}
)",
                                   true, base);
  ASSERT_NO_FATAL_FAILURE(expect_errors(
      errors, {{4, 3, "point p0002 (cluster.nodes.0.count=2, run.seed=1) makes the base scenario invalid: "}}));
  EXPECT_NE(errors[0].message.find("base.yaml:12:17: error: global_batch 2 is smaller than the 4 GPUs"),
            std::string::npos)
      << dump(errors);
}

TEST(SweepSpec, AnErrorAtAnOverrideGoesToItsValue) {
  // The scenario locates "global_batch 2 is smaller than the 4 GPUs" at global_batch, here the
  // override: so the error is reported at that value, although the node count matters too.
  expect_errors(sweep_errors(R"(name: w
base: base.yaml
axes:
  - grid: {workload.global_batch: [2, 4]}
  - grid: {cluster.nodes.0.count: [1, 2]}
)"),
                {{4, 36, "workload.global_batch=2: global_batch 2 is smaller than the 4 GPUs"}});
}

TEST(SweepSpec, MissingBaseAndName) {
  expect_errors(sweep_errors(R"(base: nowhere.yaml
axes: []
)"),
                {{1, 1, "missing key 'name' in the sweep"}, {1, 7, "cannot open the base scenario"}});
}

// ---- CSV helpers of the runner ----

TEST(SweepCsv, QuotesOnlyWhenNeededAndReadsBack) {
  EXPECT_EQ(csv_field("25MB"), "25MB");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  const auto rows = parse_csv("point,v\np0000,\"a,b\"\r\np0001,\"say \"\"hi\"\"\nthere\"\np0002,cut sh");
  ASSERT_EQ(rows.size(), 3u);  // the unterminated last line is a row cut short: dropped
  EXPECT_EQ(rows[1], (std::vector<std::string>{"p0000", "a,b"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"p0001", "say \"hi\"\nthere"}));
  EXPECT_EQ(parse_csv("a,,\n")[0], (std::vector<std::string>{"a", "", ""}));
}

}  // namespace
}  // namespace dnnsim
