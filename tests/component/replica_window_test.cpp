// data_parallel_fidelity: window on the data-parallel workload (docs/collectives.md, "Symmetric
// windows"): the same runs with every GPU simulated and with a window of two nodes' GPUs whose
// translates mirror them. The pipeline's counterpart is PipelineRun.WindowedReplicasGiveTheReplicasRun.
// Every run is in a child process (one SimGrid engine per process).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/scenario_files.hpp"
#include "tests/support/summary_in_child.hpp"

namespace dnnsim {
namespace {

using nlohmann::ordered_json;
using testing::summary_in_child;
using testing::write_file;

// 6 nodes of 2 A100 on NVSwitch on one non-blocking switch, one NIC per node that both GPUs' ring
// hops out of the node share (so the window's wrapped hop must load its NICs as the hop into the
// next copy does): a 4-block GPT-like model, 2 sequences per GPU, two iterations, bucketed
// all-reduces overlapped with the backward pass.
std::string six_nodes(const std::string& fidelity, const std::string& keys, const std::string& collective_fidelity) {
  return "name: dp-" + fidelity + "\n" + testing::dgx_cluster(2, 6, false) + "workload:\n  kind: data_parallel\n" +
         testing::kMiniGptModel +
         fmt::format(R"(  global_batch: 24
  dtype: fp16
  precision: mixed
  data_parallel_fidelity: {0}
{1}run: {{iterations: 2, collective_fidelity: {2}}}
)",
                     fidelity, keys, collective_fidelity);
}

// Translating by two nodes maps the platform (identical nodes, a switch that never binds) and the
// traffic (even batches; the rings, whose hop out of the window's last node lands on its first as it
// would on the next window's) onto themselves: the iterations agree to rounding, and a mirrored GPU
// reports what it did in the full run. Cases: hierarchical (the default rule) and ring all-reduces,
// step (every group of 12 ≤ 64) and flow fidelity.
TEST(ReplicaWindow, DataParallelWindowGivesTheFullRun) {
  struct Case {
    std::string keys;
    std::string collective_fidelity;
  };
  for (const Case& c : std::vector<Case>{{"", "step"}, {"  collective_algorithm: ring\n", "step"}, {"", "flow"}}) {
    SCOPED_TRACE(c.keys + c.collective_fidelity);
    const std::string every = six_nodes("replicas", c.keys, c.collective_fidelity);
    const std::string window = six_nodes("window", c.keys, c.collective_fidelity);
    const ordered_json all = summary_in_child(write_file("replicas.yaml", every));
    const ordered_json windowed = summary_in_child(write_file("window.yaml", window));
    ASSERT_FALSE(all.is_null());
    ASSERT_FALSE(windowed.is_null());
    ASSERT_EQ(all["status"], "ok") << all["messages"].dump();
    ASSERT_EQ(windowed["status"], "ok") << windowed["messages"].dump();
    EXPECT_FALSE(all.contains("data_parallel"));
    // 6 nodes: the smallest divisor ≥ 2 below 6 is 2, so 2 nodes of 2 GPUs.
    EXPECT_EQ(windowed["data_parallel"]["data_parallel_fidelity"], "window");
    EXPECT_EQ(windowed["data_parallel"]["data_parallel_window"], 4);
    testing::expect_mirrored_run_matches(
        windowed, all, 2,
        {"model_flops_per_iteration", "utilization", "compute_s", "communication_s", "peak_memory_bytes"});
    // node5/gpu1 (GPU 11) mirrors GPU 11 mod 4 = 3, node1/gpu1.
    const ordered_json& mirror = windowed["devices"]["node5/gpu1"];
    EXPECT_EQ(mirror["mirrors"], "node1/gpu1");
    EXPECT_NEAR(mirror["communication_s"].get<double>(), all["devices"]["node5/gpu1"]["communication_s"].get<double>(),
                1e-6 * all["devices"]["node5/gpu1"]["communication_s"].get<double>());
  }
}

}  // namespace
}  // namespace dnnsim
