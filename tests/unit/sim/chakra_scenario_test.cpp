// The `chakra` workload kind's keys (sim/workloads/chakra): files as a pattern or a list, the rank
// map, every problem located in the scenario.
#include <gtest/gtest.h>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/chakra/chakra_kind.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

std::string with_workload(const std::string& workload) {
  return R"(name: chakra
cluster:
  node_types:
    box: {gpu: A100-40GB-SXM, gpus_per_node: 4, nic: {link: Ethernet-25G}}
  nodes: [{type: box, count: 1}]
workload:
)" + workload;
}

TEST(ChakraScenario, PatternExpandsOverTheClusterGpus) {
  const Scenario s =
      testing::load(with_workload("  kind: chakra\n  files: \"et/trace.%d.et\"\n  recorded_on: V100-16GB\n"));
  const auto* spec = s.workload_as<ChakraWorkload>();
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->files.size(), 4u);
  EXPECT_NE(spec->files[3].find("et/trace.3.et"), std::string::npos);
  EXPECT_EQ(spec->ranks[3], "node0/gpu3");
  EXPECT_EQ(spec->options.recorded_on, "V100-16GB");
}

TEST(ChakraScenario, ExplicitRankMap) {
  const Scenario s = testing::load(
      with_workload("  kind: chakra\n  files: [a.et, b.et]\n  ranks: [node0/gpu2, node0/gpu0]\n  dtype: bf16\n"));
  const auto* spec = s.workload_as<ChakraWorkload>();
  EXPECT_EQ(spec->ranks, (std::vector<std::string>{"node0/gpu2", "node0/gpu0"}));
  EXPECT_EQ(spec->options.dtype, Dtype::bf16);
}

TEST(ChakraScenarioErrors, AllReportedAtOnce) {
  const auto diagnostics = testing::diagnostics_thrown_by([] {
    (void)testing::load(
        with_workload("  kind: chakra\n  files: trace.et\n  ranks: [node0/gpu9, node0/gpu1, node0/gpu1]\n"
                      "  recorded_on: H900\n"));
  });
  testing::expect_errors(diagnostics, {{8, 10, "needs '%d'"},
                                       {9, 11, "'node0/gpu9' is not a GPU of the cluster"},
                                       {9, 35, "given to two ranks"},
                                       {10, 16, "unknown GPU model 'H900'"}});
}

}  // namespace
}  // namespace dnnsim
