// `--set` overrides of a scenario (sim/scenario/overrides.hpp): values replaced, added, removed (~),
// and the problems of an override located at it rather than in the file.
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1;
// kTwoBoxBase (tests/support/scenario_files.hpp) is 12 lines long.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/data_parallel/data_parallel_kind.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using testing::dump;
using testing::errors_of;
using testing::load;

using testing::kTwoBoxBase;

// ---- --set overrides -----------------------------------------------------------------------------

TEST(ScenarioOverrides, SetReplacesOrAddsValues) {
  const Scenario s = load(kTwoBoxBase + "run: {iterations: 2}\n",
                          {"run.iterations=7", "run.seed=9", "cluster.nodes.0.count=3", "workload.dtype=fp16",
                           "workload.global_batch=6", "cluster.node_types.box.nic.bandwidth=\"100Gbps\""});
  EXPECT_EQ(s.run.iterations, 7);        // replaced
  EXPECT_EQ(s.run.seed, 9u);             // added to an existing mapping
  EXPECT_EQ(s.cluster.gpu_count(), 6u);  // list entries by index
  EXPECT_EQ(s.workload_as<DataParallelWorkload>()->config.dtype, Dtype::fp16);
  EXPECT_DOUBLE_EQ(s.cluster.node_types[0].nic_bandwidth.value(), 12.5e9);
}

TEST(ScenarioOverrides, SetCreatesAMissingSection) {
  const Scenario s = load(kTwoBoxBase, {"run.iterations=7", "outputs.dir=elsewhere"});
  EXPECT_EQ(s.run.iterations, 7);
  EXPECT_EQ(s.outputs.dir, "elsewhere");
}

TEST(ScenarioOverrides, BadPaths) {
  auto errors = errors_of(kTwoBoxBase, {"cluster.nodes.first.count=3"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set cluster.nodes.first.count=3");
  EXPECT_EQ(errors[0].location.line, 0);
  EXPECT_EQ(errors[0].message, "'nodes' is a list; expected an index, got 'first'");

  // An index is digits only: std::stoul read "0x" as 0 and "-1" as 2^64 − 1.
  for (const std::string index : {"0x", "-1", "+0", " 0", ""}) {
    errors = errors_of(kTwoBoxBase, {"cluster.nodes." + index + ".count=3"});
    ASSERT_EQ(errors.size(), 1u) << dump(errors);
    EXPECT_EQ(errors[0].message, "'nodes' is a list; expected an index, got '" + index + "'");
  }

  errors = errors_of(kTwoBoxBase, {"cluster.nodes.5.count=3"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "index 5 is out of range (1 entries)");

  errors = errors_of(kTwoBoxBase, {"name.first=x"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "cannot set 'name.first': 'name' is a scalar");

  errors = errors_of(kTwoBoxBase, {"run.iterations"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "expected KEY.PATH=VALUE");

  // Every bad override is reported, and the file is not read on.
  errors = errors_of(kTwoBoxBase, {"=1", "run.iterations=[1"});
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  EXPECT_NE(errors[1].message.find("the value is not valid YAML"), std::string::npos) << dump(errors);
}

TEST(ScenarioOverrides, UnknownKeyFromAnOverrideIsReported) {
  const auto errors = errors_of(kTwoBoxBase + "run: {iterations: 2}\n", {"run.iteratons=7"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_NE(errors[0].message.find("unknown key 'iteratons' in run; did you mean 'iterations'?"), std::string::npos)
      << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set run.iteratons=7");  // not the scenario file without a line
}

TEST(ScenarioOverrides, BadOverriddenValueIsNotLocatedInTheFile) {
  const auto errors = errors_of(kTwoBoxBase + "run: {iterations: 2}\n", {"run.iterations=0"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set run.iterations=0");
  EXPECT_EQ(errors[0].location.line, 0);
  EXPECT_NE(errors[0].message.find("expected an integer in [1, 1000000], got 0"), std::string::npos);
}

// `--set ~KEY.PATH` removes a map key, as if the file did not have it (the run section's
// iterations fall back to their default, 1); a path to nothing is left as it is; a list element is
// not removed (the error names the list).
TEST(ScenarioOverrides, TildeRemovesAKey) {
  const Scenario s =
      load(kTwoBoxBase + "run: {iterations: 2, seed: 5}\n", {"~run.iterations", "~run.nothing", "~no.such.path"});
  EXPECT_EQ(s.run.iterations, 1);
  EXPECT_EQ(s.run.seed, 5u);
  // Removed, then set again: the overrides apply in order.
  EXPECT_EQ(load(kTwoBoxBase + "run: {iterations: 2}\n", {"~run.iterations", "run.iterations=4"}).run.iterations, 4);

  auto errors = errors_of(kTwoBoxBase, {"~cluster.nodes"});  // a required section gone: the file's own check
  ASSERT_FALSE(errors.empty());
  errors = errors_of(kTwoBoxBase, {"~cluster.nodes.0"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set ~cluster.nodes.0");
  EXPECT_EQ(errors[0].message, "'nodes' is a list: ~ removes a map key; set the whole list instead");
  errors = errors_of(kTwoBoxBase, {"~run.iterations=3"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "expected ~KEY.PATH (removes the key) or KEY.PATH=VALUE");
}

// A map or list given whole by an override: a problem inside it is located at the override too, not
// at the line and column of the override string (its marks).
TEST(ScenarioOverrides, ProblemInsideAnOverriddenMapIsLocatedAtTheOverride) {
  auto errors = errors_of(kTwoBoxBase, {"run={iterations: 0}"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set run={iterations: 0}");
  EXPECT_EQ(errors[0].location.line, 0);
  errors = errors_of(kTwoBoxBase, {"run={iteratons: 2}"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set run={iteratons: 2}");
}

}  // namespace
}  // namespace dnnsim
