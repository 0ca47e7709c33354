// The `jobs` workload kind's section (sim/workloads/jobs): each job read against its own nodes, every
// problem located, and each job's view of the scenario.
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1;
// kTwoBoxCluster (tests/support/scenario_files.hpp) is 7 lines long, so a workload appended to
// "name: j\n" + kTwoBoxCluster starts at line 9.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/jobs/jobs_kind.hpp"
#include "tests/support/scenario_files.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

const std::string kHead = "name: j\n" + testing::kTwoBoxCluster;

TEST(JobsScenario, EachJobIsReadOnItsOwnNodes) {
  const Scenario scenario = load(kHead + R"(workload:
  kind: jobs
  jobs:
    - name: a
      nodes: [1]
      workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2}
    - name: b
      nodes: {first: 0, count: 1}
      workload: {kind: data_parallel, model: {layers: [{forward_flops: "2GFlop"}]}, global_batch: 4}
)");
  const auto* spec = scenario.workload_as<JobsWorkload>();
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->jobs.size(), 2u);
  // Job a's GPUs are node1's, under their names in the whole cluster.
  const Scenario a = job_scenario(scenario, spec->jobs[0]);
  EXPECT_EQ(a.cluster.gpu_names(), (std::vector<std::string>{"node1/gpu0", "node1/gpu1"}));
  EXPECT_EQ(a.workload_kind, "data_parallel");
  EXPECT_EQ(a.workload->samples_per_iteration(), 2);
  // Nothing of a job may be mirrored: the other job's traffic shares the fabric.
  EXPECT_TRUE(a.network.shared_with_other_jobs);
  EXPECT_EQ(job_scenario(scenario, spec->jobs[1]).cluster.gpu_names(),
            (std::vector<std::string>{"node0/gpu0", "node0/gpu1"}));
  // The whole run has no one batch: throughput is per job (summary.json `jobs`).
  EXPECT_EQ(scenario.workload->samples_per_iteration(), std::nullopt);
}

TEST(JobsScenario, EveryProblemIsLocated) {
  expect_errors(errors_of(kHead + R"(workload:
  kind: jobs
  jobs:
    - name: a
      nodes: [0, 0, 5]
      workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2}
    - name: b
      nodes: {first: 1, count: 2}
      workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2}
    - name: c
      nodes: [1]
      workload: {kind: gnn}
      priority: 3
    - name: c
      nodes: [0]
      workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2,
                 data_parallel_fidelity: window}
)"),
                {{13, 18, "node 0 is listed twice"},
                 {13, 21, "node 5 is beyond the cluster's 2 nodes"},
                 {16, 14, "nodes 1–2 are beyond the cluster's 2 nodes"},
                 // A kind with its own actors cannot share one engine's graph.
                 {20, 24, "a gnn workload drives the simulation itself"},
                 {21, 7, "unknown key 'priority' in a job"},
                 {22, 13, "job 'c' is named twice (first at line 18)"},
                 // A window mirrors replicas whose links the other job's flows may cross; on its single node the
                 // data-parallel kind's own reason is reported as well.
                 {24, 17, "shares the fabric with other jobs, but data_parallel_fidelity: window"},
                 {25, 42, "data_parallel_fidelity: window is exact only for replicas that are translates"}});
}

TEST(JobsScenario, OverlappingNodesAndALoneJobAreRefused) {
  expect_errors(errors_of(kHead + R"(workload:
  kind: jobs
  jobs:
    - {name: a, nodes: [0, 1], workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 4}}
    - {name: b, nodes: [1], workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2}}
)"),
                {{13, 24, "node 1 is job 'a''s too: jobs run on disjoint nodes"}});

  expect_errors(errors_of(kHead + R"(workload:
  kind: jobs
  jobs:
    - {name: a, nodes: [0, 1], workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 4}}
)"),
                {{12, 5, "a jobs workload needs two jobs or more"}});
}

TEST(JobsScenario, AJobMayCountItsOwnIterations) {
  const Scenario scenario = load(kHead + R"(workload:
  kind: jobs
  jobs:
    - {name: a, nodes: [0], iterations: 3, workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2}}
    - {name: b, nodes: [1], workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2}}
run: {iterations: 2}
)");
  const auto* spec = scenario.workload_as<JobsWorkload>();
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->jobs.size(), 2u);
  // Job a counts its own; job b follows run.iterations.
  EXPECT_EQ(job_scenario(scenario, spec->jobs[0]).run.iterations, 3);
  EXPECT_EQ(job_scenario(scenario, spec->jobs[1]).run.iterations, 2);
  // What the resource guard says it sized.
  EXPECT_EQ(spec->iterations_phrase(2), "iterations per job (a 3, b 2)");
}

TEST(JobsScenario, IterationsOutOfRangeOrOfARecordedGraphAreRefused) {
  const std::string graph = testing::write_file("one-compute.json", R"({"format": "dnnsim-taskgraph", "version": 1,
  "devices": ["node1/gpu0"], "streams": ["compute"],
  "tasks": [{"id": 0, "kind": "compute", "device": "node1/gpu0", "flops": 1e9, "stream": "compute", "deps": []}]})");
  expect_errors(errors_of(kHead + R"(workload:
  kind: jobs
  jobs:
    - {name: a, nodes: [0], iterations: 0, workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 2}}
    - {name: b, nodes: [1], iterations: 2, workload: {kind: taskgraph, file: )" +
                          graph + R"(}}
)"),
                {{12, 41, "expected an integer in [1, 1000000], got 0"},
                 // A TaskGraph file is one recorded run, simulated as it is: a count would be silently ignored.
                 {13, 41, "job 'b' is a taskgraph workload, simulated as recorded"}});
}

}  // namespace
}  // namespace dnnsim
