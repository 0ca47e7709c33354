// The `pollux` scheduler end to end (planners/jobs/pollux.hpp) on one GPU, where every quantity is
// known by hand: the job's work, its goodput at a fixed batch, and when the rounds start it.
#include <gtest/gtest.h>

#include <string>

#include "dnnsim/source_paths.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/cluster/cluster_kind.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

// One cifar10 job submitted at 0 s on a single GPU, its batch fixed at B₀ = 128 (applications
// file). Arrivals wait for the next round: the first is at 60 s. There, at B = B₀ the gain is 1 in
// every epoch, so progress runs at 1 / step(128) steps per second, step(128) from cifar10's
// placements.csv on one GPU, 37/38 of the way from local batch 91 (0.07591350078582763 s) to 129
// (0.10385050773620605 s); the work is the validation files' least final progress,
// 39062.90816659533 (validation-256.csv). No later round moves it (one GPU, nothing to gain). With
// `throughput: fitted` the job's agent keeps the fixed batch too (simulator.py update_local_bsz), so
// its curve, asked again every round, never changes: the same end.
void expect_one_job_at_its_initial_batch(const std::string& throughput) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s,model\na,0,1,10,cifar10\n");
  const std::string settings = testing::write_file(
      "applications.csv", "application,max_local_bsz,fixed_batch_size,max_replicas\ncifar10,,128,\n");
  const Scenario scenario = testing::load(
      "name: t\ncluster:\n  node_types:\n    n: {gpu: T4, gpus_per_node: 1, fabric: pcie, nic: {link: Ethernet-25G}}\n"
      "  nodes: [{type: n, count: 1}]\n  interconnect: {kind: switch, latency: \"1us\"}\nworkload:\n  kind: cluster\n"
      "  trace: {format: dnnsim, file: " +
      trace +
      "}\n  speed: {source: pollux, tables: " DNNSIM_SOURCE_DIR
      "/data/traces/pollux-osdi21/throughput}\n  scheduler: {name: pollux, throughput: " +
      throughput + ", applications: " + settings + "}\noutputs: {trace: false, tasks_csv: false}\n");
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  ASSERT_EQ(report.sim.jobs.size(), 1u);
  const JobOutcome& job = report.sim.jobs[0];
  const double step = 0.07591350078582763 + 37.0 / 38.0 * (0.10385050773620605 - 0.07591350078582763);
  EXPECT_EQ(job.status, JobOutcome::Status::finished);
  EXPECT_DOUBLE_EQ(job.start, 60.0);
  EXPECT_NEAR(job.end, 60.0 + 39062.90816659533 * step, 1e-3);
  EXPECT_EQ(job.preemptions, 0);
}

TEST(PolluxRun, OneJobAtItsInitialBatchRunsItsWorkAtTheMeasuredStep) {
  expect_one_job_at_its_initial_batch("measured");
}
TEST(PolluxRun, ItsAgentKeepsTheFixedBatchWithTheFittedModel) { expect_one_job_at_its_initial_batch("fitted"); }

}  // namespace
}  // namespace dnnsim
