// The hand-made bad scenarios of the robustness issue (docs/testing.md, "Bad input"): each is
// refused with located diagnostics, never a crash, a hang or a silent default.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

// A valid scenario in which `{LINK}` is replaced by the NIC declaration and `{RUN}` by the run section.
const std::string kBadBase = R"(name: bad
cluster:
  node_types:
    box: {gpu: A100-40GB-SXM, gpus_per_node: 2, fabric: nvswitch, nic: {LINK}}
  nodes: [{type: box, count: 2}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop", parameter_bytes: "1MiB"}]}
  global_batch: 4
run: {RUN}
)";

std::string with(std::string link, std::string run = "{iterations: 1}") {
  std::string yaml = kBadBase;
  yaml.replace(yaml.find("{LINK}"), 6, link);
  yaml.replace(yaml.find("{RUN}"), 5, run);
  return yaml;
}

struct BadCase {
  std::string name;
  std::string yaml;
  std::string message;  // a part of the first diagnostic
};
void PrintTo(const BadCase& c, std::ostream* out) { *out << c.name; }

class BadScenario : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadScenario, IsALocatedError) {
  const auto diagnostics = testing::diagnostics_thrown_by([&] { (void)testing::load(GetParam().yaml); });
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_GT(diagnostics[0].location.line, 0) << testing::dump(diagnostics);
  EXPECT_THAT(diagnostics[0].message, HasSubstr(GetParam().message)) << testing::dump(diagnostics);
}

std::string deep_flow_map(int depth) {
  std::string yaml = "name: deep\nx: ";
  for (int i = 0; i < depth; ++i) yaml += "{a: ";
  yaml += "1";
  for (int i = 0; i < depth; ++i) yaml += "}";
  return yaml + "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Robustness, BadScenario,
    ::testing::Values(BadCase{"nan_bandwidth", with(R"({bandwidth: "nanGbps", latency: "2us"})"), "bandwidth"},
                      BadCase{"yaml_nan_bandwidth", with(R"({bandwidth: .nan, latency: "2us"})"), "bandwidth"},
                      BadCase{"negative_latency", with(R"({bandwidth: "25Gbps", latency: "-2us"})"), "non-negative"},
                      BadCase{"huge_duration", with(R"({bandwidth: "25Gbps", latency: "1e400s"})"),
                              "expected a duration"},
                      BadCase{"tab_indentation", "name: tabs\ncluster:\n\tnode_types: {}\n", ""},
                      BadCase{"undefined_anchor", with("*nowhere"), ""},
                      BadCase{"duplicate_key", with(R"({bandwidth: "25Gbps", bandwidth: "50Gbps"})"), "bandwidth"},
                      BadCase{"deep_flow_map", deep_flow_map(400), ""},
                      BadCase{"zero_iterations", with(R"({bandwidth: "25Gbps", latency: "2us"})", "{iterations: 0}"),
                              "expected an integer in [1, 1000000]"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

}  // namespace
}  // namespace dnnsim
