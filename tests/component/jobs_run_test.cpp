// Two jobs on one fabric (workload kind `jobs`, sim/workloads/jobs): simulated in one engine, their
// flows share the links they both cross, and summary.json times each job. Each run is simulated in a
// forked child (one SimGrid engine per process).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"
#include "tests/support/summary_in_child.hpp"

namespace dnnsim {
namespace {

// A TaskGraph file of one 1 GB transfer from `src` to `dst` (GPU names of the cluster).
std::string transfer_file(const std::string& name, const std::string& src, const std::string& dst) {
  return testing::write_file(name, R"({"format": "dnnsim-taskgraph", "version": 1, "devices": [")" + src + R"(", ")" +
                                       dst + R"("], "streams": ["comm"], "tasks": [
  {"id": 0, "kind": "transfer", "src": ")" +
                                       src + R"(", "dst": ")" + dst +
                                       R"(", "size_bytes": 1e9, "stream": "comm", "deps": []}]})");
}

// Four single-GPU nodes, two per leaf, one spine, 2:1 oversubscribed: each uplink direction carries
// 2 × 10 GB/s / 2 = 10 GB/s. Job a sends node0 → node2 and job b `b_src` → `b_dst`, both across the leaves.
nlohmann::ordered_json two_jobs(const std::string& b_src, const std::string& b_dst) {
  const std::string a = transfer_file("a.json", "node0/gpu0", "node2/gpu0");
  const std::string b = transfer_file("b.json", b_src, b_dst);
  const std::string yaml =
      "name: two-jobs\n" +
      testing::single_gpu_nodes_cluster(
          4, "  interconnect: {kind: leaf_spine, nodes_per_leaf: 2, spines: 1, oversubscription: 2}\n") +
      R"(workload:
  kind: jobs
  jobs:
    - {name: a, nodes: [0, 2], workload: {kind: taskgraph, file: )" +
      a + R"(}}
    - {name: b, nodes: [1, 3], workload: {kind: taskgraph, file: )" +
      b + R"(}}
outputs: {trace: false, tasks_csv: false}
)";
  return testing::summary_in_child(testing::write_file("two-jobs.yaml", yaml));
}

TEST(JobsRun, FlowsOfTwoJobsShareTheUplinkTheyBothCross) {
  // node0 → node2 and node1 → node3 both climb leaf0's uplink and descend leaf1's (10 GB/s each way):
  // max-min gives each flow 5 GB/s there, below its NICs' 10 GB/s, so each 1 GB takes
  // α + 1 GB / 5 GB/s = 10 us + 0.2 s, where alone it would take 10 us + 0.1 s.
  const auto summary = two_jobs("node1/gpu0", "node3/gpu0");
  ASSERT_FALSE(summary.is_null());
  ASSERT_EQ(summary["jobs"].size(), 2u);
  for (const auto& job : summary["jobs"]) {
    EXPECT_NEAR(job["makespan_s"].get<double>(), 10e-6 + 0.2, 1e-9) << job.dump();
    EXPECT_EQ(job["iterations"].get<int>(), 1);
  }
  EXPECT_EQ(summary["jobs"][0]["name"], "a");
  EXPECT_EQ(summary["jobs"][1]["nodes"], (nlohmann::ordered_json{1, 3}));
}

TEST(JobsRun, FlowsInOppositeDirectionsDoNotContend) {
  // node3 → node1 climbs leaf1's uplink and descends leaf0's: split-duplex, so no link direction is
  // shared with job a's flow, and each takes 10 us + 1 GB / 10 GB/s.
  const auto summary = two_jobs("node3/gpu0", "node1/gpu0");
  ASSERT_FALSE(summary.is_null());
  for (const auto& job : summary["jobs"]) EXPECT_NEAR(job["makespan_s"].get<double>(), 10e-6 + 0.1, 1e-9) << job.dump();
}

TEST(JobsRun, AJobRunsItsOwnIterations) {
  // Jobs a and b train the same model on one leaf each: no link is shared, so each iteration of
  // either takes the same time T, and a's 3 iterations end at 3T where b's one ends at T.
  const std::string job =
      R"(workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2})";
  const std::string yaml =
      "name: own-iterations\n" +
      testing::single_gpu_nodes_cluster(
          4, "  interconnect: {kind: leaf_spine, nodes_per_leaf: 2, spines: 1, oversubscription: 2}\n") +
      "workload:\n  kind: jobs\n  jobs:\n    - {name: a, nodes: [0, 1], iterations: 3, " + job +
      "}\n    - {name: b, nodes: [2, 3], " + job + "}\noutputs: {trace: false, tasks_csv: false}\n";
  const auto summary = testing::summary_in_child(testing::write_file("own-iterations.yaml", yaml));
  ASSERT_FALSE(summary.is_null());
  const auto& a = summary["jobs"][0];
  const auto& b = summary["jobs"][1];
  EXPECT_EQ(a["iterations"].get<int>(), 3);
  EXPECT_EQ(b["iterations"].get<int>(), 1);
  const double t = b["makespan_s"].get<double>();
  ASSERT_GT(t, 0.0);
  for (const auto& time : a["iteration_time_s"]) EXPECT_NEAR(time.get<double>(), t, 1e-9 * t) << a.dump();
  EXPECT_NEAR(a["makespan_s"].get<double>(), 3 * t, 1e-9 * t);
}

}  // namespace
}  // namespace dnnsim
