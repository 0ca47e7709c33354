// The `pollux` scheduler's bad input (planners/jobs/pollux.hpp): an option out of its declared range,
// a statistical-efficiency (validation) file without its gradient columns, a speed source without
// the goodput tables and `network: true` are refused at load time with located errors, all at once;
// so are Pollux's application rule without the tables, an unknown rule, and the rule beside a mix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/diagnostics.hpp"
#include "tests/support/pollux_tables.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using testing::kPolluxTables;

// Two 4-GPU T4 nodes, one cifar10 job; the scheduler section on line 11.
std::string pollux_yaml(const std::string& speed, const std::string& scheduler, const std::string& extra = "") {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s,model\na,0,1,10,cifar10\n");
  return "name: t\ncluster:\n  node_types:\n    n: {gpu: T4, gpus_per_node: 4, fabric: pcie, nic: {link: "
         "Ethernet-25G}}\n"
         "  nodes: [{type: n, count: 2}]\n  interconnect: {kind: switch, latency: \"1us\"}\nworkload:\n  kind: "
         "cluster\n"
         "  trace: {format: dnnsim, file: " +
         trace + "}\n  speed: " + speed + "\n  scheduler: " + scheduler + "\n" + extra +
         "outputs: {trace: false, tasks_csv: false}\n";
}

TEST(PolluxScenario, FairnessOutOfRangeIsLocatedAtItsValue) {
  const auto diagnostics = testing::diagnostics_thrown_by([] {
    (void)testing::load(pollux_yaml("{source: pollux, tables: " + kPolluxTables + "}",
                                    "{name: pollux, fairness: 2, population: 1, search: exhaustive}"));
  });
  // The three wrong values, at once: `fairness` in [−10, 1] (column 39), `population` in [2, 100000],
  // `search` one of genetic, marginal (column 65).
  testing::expect_errors(diagnostics, {{11, 39, "[-10, 1]"}, {11, 54, "[2, 100000]"}, {11, 65, "marginal"}});
}

TEST(PolluxScenario, ValidationFileWithoutGradientColumnsIsLocated) {
  // One application whose validation file lacks grad_sqr and grad_var: both reported at its header.
  const auto dir = std::filesystem::path(testing::write_file("placeholder", "")).parent_path() / "tables" / "cifar10";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "placements.csv")
      << "placement,local_bsz,step_time,sync_time\n1,32,0.04,0.0005\n1,64,0.06,0.0005\n";
  std::ofstream(dir / "scalability.csv") << "num_nodes,num_replicas,local_bsz,step_time,sync_time\n";
  std::ofstream(dir / "validation-64.csv") << "progress,iteration,metric\n100,99,0.5\n";
  const auto diagnostics = testing::diagnostics_thrown_by([&] {
    (void)testing::load(pollux_yaml("{source: pollux, tables: " + dir.parent_path().string() + "}", "{name: pollux}"));
  });
  ASSERT_EQ(diagnostics.size(), 2u) << testing::dump(diagnostics);
  EXPECT_EQ(diagnostics[0].location.file, (dir / "validation-64.csv").string());
  testing::expect_error(diagnostics[0], 1, 1, "missing column 'grad_sqr'");
  testing::expect_error(diagnostics[1], 1, 1, "missing column 'grad_var'");
}

TEST(PolluxScenario, ValidationFileNameWithoutABatchSizeIsLocated) {
  // The batch size is the file name's (validation-BATCH.csv): none, one past a double and one with
  // letters after it are each an error at their file, the good validation-64.csv is read. Before,
  // std::stod threw std::invalid_argument (not an InputError) on the first two and read the third as 64.
  const auto dir =
      std::filesystem::path(testing::write_file("placeholder", "")).parent_path() / "named-tables" / "cifar10";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "placements.csv")
      << "placement,local_bsz,step_time,sync_time\n1,32,0.04,0.0005\n1,64,0.06,0.0005\n";
  std::ofstream(dir / "scalability.csv") << "num_nodes,num_replicas,local_bsz,step_time,sync_time\n";
  const std::string rows = "progress,iteration,grad_sqr,grad_var\n100,99,0.5,0.1\n";
  for (const char* name : {"validation-.csv", "validation-1e999.csv", "validation-64x.csv", "validation-64.csv"})
    std::ofstream(dir / name) << rows;
  const auto diagnostics = testing::diagnostics_thrown_by([&] {
    (void)testing::load(pollux_yaml("{source: pollux, tables: " + dir.parent_path().string() + "}", "{name: pollux}"));
  });
  // In the reader's order, the file names sorted.
  ASSERT_EQ(diagnostics.size(), 3u) << testing::dump(diagnostics);
  EXPECT_EQ(diagnostics[0].location.file, (dir / "validation-.csv").string());
  EXPECT_EQ(diagnostics[1].location.file, (dir / "validation-1e999.csv").string());
  EXPECT_EQ(diagnostics[2].location.file, (dir / "validation-64x.csv").string());
  for (const Diagnostic& d : diagnostics)
    EXPECT_NE(d.message.find("expected validation-BATCH.csv"), std::string::npos) << testing::dump(diagnostics);
}

TEST(PolluxScenario, APlacementThatIsNoDigitStringIsLocated) {
  // Rows 2-4 of the shipped cifar10/placements.csv with their placements emptied, negated and typo'd:
  // keys no placement is ever looked up by, whose rows were silently unused.
  const auto dir =
      std::filesystem::path(testing::write_file("placeholder", "")).parent_path() / "placement-tables" / "cifar10";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "placements.csv") << "placement,local_bsz,step_time,sync_time\n"
                                           ",32,0.0427886962890625,0.0004995360016822816\n"
                                           "-1,45,0.05048525333404541,0.000504022404551506\n"
                                           "1x,64,0.05983335971832275,0.0005080448031425476\n";
  std::ofstream(dir / "scalability.csv") << "num_nodes,num_replicas,local_bsz,step_time,sync_time\n";
  std::ofstream(dir / "validation-64.csv") << "progress,iteration,grad_sqr,grad_var\n100,99,0.5,0.1\n";
  const auto diagnostics = testing::diagnostics_thrown_by([&] {
    (void)testing::load(pollux_yaml("{source: pollux, tables: " + dir.parent_path().string() + "}", "{name: pollux}"));
  });
  testing::expect_errors(diagnostics,
                         {{2, 1, "placement: expected a name, found an empty field"},
                          {3, 1, "expected the replicas on each node as digits 1-9 (e.g. 1422), found '-1'"},
                          {4, 1, "found '1x'"}});
}

TEST(PolluxScenario, NeedsTheGoodputTablesAndTheJobLevel) {
  const auto duration =
      testing::diagnostics_thrown_by([] { (void)testing::load(pollux_yaml("{source: duration}", "{name: pollux}")); });
  ASSERT_EQ(duration.size(), 1u) << testing::dump(duration);
  EXPECT_EQ(duration[0].location.line, 11);
  EXPECT_NE(duration[0].message.find("source: pollux"), std::string::npos) << testing::dump(duration);
  const auto network = testing::diagnostics_thrown_by([] {
    (void)testing::load(
        pollux_yaml("{source: pollux, tables: " + kPolluxTables + "}", "{name: pollux}", "  network: true\n"));
  });
  ASSERT_EQ(network.size(), 1u) << testing::dump(network);
  EXPECT_NE(network[0].message.find("remove `network: true`"), std::string::npos) << testing::dump(network);
}

// A misspelt `speed` leaves the default speed model in place: the unknown key is the one error, not also
// "scheduler 'pollux' … needs workload.speed" judged against that default.
TEST(PolluxScenario, AMisspeltSpeedIsOneError) {
  std::string yaml = pollux_yaml("{source: pollux, tables: " + kPolluxTables + "}", "{name: pollux}");
  yaml.replace(yaml.find("  speed:"), 8, "  spee:");  // line 10, the key at column 3
  const auto errors = testing::diagnostics_thrown_by([&] { (void)testing::load(yaml); });
  testing::expect_errors(errors, {{10, 3, "unknown key 'spee' in the workload; did you mean 'speed'?"}});
}

TEST(PolluxScenario, ApplicationRuleNeedsTheTablesAndAKnownRule) {
  // The rule on line 12, after the scheduler; `{rule:` opens at column 21.
  const auto no_tables = testing::diagnostics_thrown_by([] {
    (void)testing::load(pollux_yaml("{source: duration}", "fifo", "  application_rule: {rule: pollux-gpu-time}\n"));
  });
  testing::expect_errors(no_tables, {{12, 21, "needs workload.speed {source: pollux"}});
  const auto unknown = testing::diagnostics_thrown_by([] {
    (void)testing::load(pollux_yaml("{source: pollux, tables: " + kPolluxTables + "}", "fifo",
                                    "  application_rule: {rule: by-size}\n"
                                    "  models: [{model: cifar10}]\n"));
  });
  ASSERT_EQ(unknown.size(), 2u) << testing::dump(unknown);
  testing::expect_error(unknown[0], 12, 21, "give one of 'models' (a mix) and 'application_rule'");
  EXPECT_EQ(unknown[1].location.line, 12);
  EXPECT_NE(unknown[1].message.find("by-size"), std::string::npos) << testing::dump(unknown);
}

// A bad field of Pollux's applications.csv, read by both the application rule and the scheduler, is
// one error: not once per reader, and the jobs the rule would have given an application are not also
// "has no model" (the shipped philly-pollux bench reported 23 errors for one such field).
TEST(PolluxScenario, ABadSettingsFieldIsOneError) {
  const std::string settings =
      testing::write_file("applications.csv", "application,max_local_bsz,fixed_batch_size,max_replicas\nyolov3,x,,\n");
  std::string yaml =
      pollux_yaml("{source: pollux, tables: " + kPolluxTables + "}", "{name: pollux, applications: " + settings + "}",
                  "  application_rule: {rule: pollux-gpu-time, settings: " + settings + "}\n");
  const std::string jobs = testing::write_file("jobs-without-models.csv", "id,submit_s,gpus,duration_s\na,0,1,10\n");
  const std::size_t file = yaml.find("file: ") + 6;
  yaml.replace(file, yaml.find('}', file) - file, jobs);
  const auto errors = testing::diagnostics_thrown_by([&] { (void)testing::load(yaml); });
  ASSERT_EQ(errors.size(), 1u) << testing::dump(errors);
  EXPECT_EQ(errors[0].location.file, settings);
  testing::expect_error(errors[0], 2, 8, "max_local_bsz: expected a number, found 'x'");
}

}  // namespace
}  // namespace dnnsim
