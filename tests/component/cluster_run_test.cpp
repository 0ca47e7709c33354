// `kind: cluster` end to end: the same five jobs under each scheduler on one 4-GPU server, job level,
// duration speed (a job runs exactly its trace duration), no restart cost; every start and end below
// is derived by hand from the scheduler's rule (papers-cluster.md §11), not read from a run.
//
//   job  submit  GPUs  duration
//   a       0     2     100
//   b       0     4      50
//   c      10     1      20
//   d      20     2      12
//   e      35     1     200
// Submissions and ends are chosen so that no two events coincide where their order would matter.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "dnnsim/source_paths.hpp"
#include "planners/jobs/gadget.hpp"
#include "sim/platform/platform.hpp"
#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/cluster/cluster_kind.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

constexpr const char* kFiveJobs =
    "id,submit_s,gpus,duration_s\n"
    "a,0,2,100\n"
    "b,0,4,50\n"
    "c,10,1,20\n"
    "d,20,2,12\n"
    "e,35,1,200\n";

struct Times {
  double start, end;
  int preemptions;
};

std::string cluster_yaml(const std::string& trace, const std::string& scheduler, int nodes, int gpus_per_node,
                         const std::string& extra = "") {
  return "name: t\ncluster:\n  node_types:\n    n: {gpu: V100-16GB, gpus_per_node: " + std::to_string(gpus_per_node) +
         ", fabric: pcie, nic: {link: Ethernet-25G}}\n  nodes:\n    - {type: n, count: " + std::to_string(nodes) +
         "}\n  interconnect: {kind: switch, latency: \"1us\"}\nworkload:\n  kind: cluster\n  trace: {format: dnnsim, "
         "file: " +
         trace + "}\n  scheduler: " + scheduler + "\n" + extra + "outputs: {trace: false, tasks_csv: false}\n";
}

// Three users' five jobs of 2 GPUs on the same 4-GPU server, for the schedulers that rank by user
// (DRF, QSSF); FIFO with backfill starts d at 70 and e at 100 here.
//
//   job  user   submit  duration
//   a    alice     0      100
//   b    alice     0       50
//   c    bob      10       20
//   d    alice    20       30
//   e    bob      25       40
constexpr const char* kUserJobs =
    "id,submit_s,gpus,duration_s,user\n"
    "a,0,2,100,alice\n"
    "b,0,2,50,alice\n"
    "c,10,2,20,bob\n"
    "d,20,2,30,alice\n"
    "e,25,2,40,bob\n";

std::map<std::string, Times> run_jobs(const std::string& jobs_csv, const std::string& scheduler) {
  const std::string trace = testing::write_file("jobs.csv", jobs_csv);
  const Scenario scenario = testing::load(cluster_yaml(trace, scheduler, 1, 4));
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  std::map<std::string, Times> times;
  for (std::size_t i = 0; i < report.sim.jobs.size(); ++i) {
    const JobOutcome& job = report.sim.jobs[i];
    EXPECT_EQ(job.status, JobOutcome::Status::finished);
    times[report.spec->trace.jobs[i].id] = Times{job.start, job.end, job.preemptions};
  }
  return times;
}

std::map<std::string, Times> run_five(const std::string& scheduler) { return run_jobs(kFiveJobs, scheduler); }

void expect_ends(const std::map<std::string, Times>& times, const std::map<std::string, double>& ends) {
  for (const auto& [id, end] : ends) EXPECT_NEAR(times.at(id).end, end, 1e-6) << "job " << id;
}

// Strict FIFO: a runs 0–100; b (4 GPUs) blocks the queue until a ends: 100–150; then c, d, e start
// together at 150: d ends 162, c 170, e 350.
TEST(ClusterRun, FifoStrictFiveJobs) {
  expect_ends(run_five("fifo"), {{"a", 100}, {"b", 150}, {"c", 170}, {"d", 162}, {"e", 350}});
}

// Posted-price admission (planners/jobs/admission.hpp), L = 1, U = 10, seed 1: the jobs' values per
// GPU-hour are draw_job_values' a 2.2049, b 2.2277, c 5.0609, d 1.1892, e 4.1581. The price is
// ψ(y) = (1/e)(10e)^y at the committed load y (allocated + queued GPUs over 4). At 0, a meets an empty
// cluster (ψ(0) = 0.368): admitted; b arrives with a queued (y = 2/4, ψ = 1.918 ≤ 2.2277): admitted.
// From then on a runs and b waits for all four GPUs: y = (2 + 4)/4, capped at 1, ψ = 10 > every value,
// so c (10 s), d (20 s) and e (35 s) are rejected. a runs 0–100, b 100–150. Welfare = Σ value ×
// GPU-hours of work = (2.2049 × 2 × 100 + 2.2277 × 4 × 50)/3600.
TEST(ClusterRun, ThresholdPriceRejectsJobsOnceTheClusterIsCommitted) {
  const std::string trace = testing::write_file("jobs.csv", kFiveJobs);
  const Scenario scenario = testing::load(cluster_yaml(
      trace, "fifo", 1, 4, "  admission: {policy: threshold-price, min_value: 1, max_value: 10, seed: 1}\n"));
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  const std::vector<double> values = draw_job_values(5, AdmissionConfig{1, 10, 1});
  using Status = JobOutcome::Status;
  const std::vector<Status> expected{Status::finished, Status::finished, Status::rejected, Status::rejected,
                                     Status::rejected};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(report.sim.jobs[i].status, expected[i]) << "job " << i;
    EXPECT_DOUBLE_EQ(report.sim.jobs[i].value, values[i]);
  }
  EXPECT_NEAR(report.sim.jobs[1].price, std::pow(10 * std::exp(1.0), 0.5) / std::exp(1.0), 1e-12);
  EXPECT_NEAR(report.sim.jobs[2].price, 10, 1e-12);
  EXPECT_NEAR(report.sim.jobs[1].end, 150, 1e-6);
  const nlohmann::ordered_json summary = make_summary(scenario, result);
  EXPECT_EQ(summary["cluster"]["admission"]["rejected"], 3);
  EXPECT_NEAR(summary["cluster"]["admission"]["welfare"].get<double>(), (values[0] * 200 + values[1] * 200) / 3600,
              1e-9);
  // A cluster drives the engine without tasks: its one iteration is the run (it was 0 s beside a mean
  // iteration of the makespan).
  ASSERT_EQ(summary["iteration_time_s"].size(), 1u);
  EXPECT_EQ(summary["iteration_time_s"][0].get<double>(), summary["makespan_s"].get<double>());
  EXPECT_EQ(summary["mean"]["iteration_time_s"].get<double>(), summary["makespan_s"].get<double>());
}

// Backfill: a 0–100; c fits at 10: 10–30; d (2) waits for c's GPU: 30–42; e 42–242; b needs all four
// GPUs, which are never free together before e ends: 242–292.
TEST(ClusterRun, FifoBackfillFiveJobs) {
  expect_ends(run_five("fifo-backfill"), {{"a", 100}, {"b", 292}, {"c", 30}, {"d", 42}, {"e", 242}});
}

// SJF (non-preemptive, backfill): at 0 b (50) before a (100): 0–50; at 50 the order is d, c, a, e:
// d 50–62, c 50–70, a does not fit (1 GPU left), e 50–250; a starts when d ends: 62–162.
TEST(ClusterRun, SjfFiveJobs) {
  expect_ends(run_five("sjf"), {{"a", 162}, {"b", 50}, {"c", 70}, {"d", 62}, {"e", 250}});
}

// SRTF (preemptive): b 0–10, preempted by c (20 < 40 left), a starts beside c at 10; at 20 d (12)
// and c (10 left) win, a (90) is preempted; c ends 30 and a restarts beside d; d ends 32, b (40) beats
// a (88): a preempted, b 32–72; then a 72–160 and e 72–272.
TEST(ClusterRun, SrtfFiveJobs) {
  const auto times = run_five("srtf");
  expect_ends(times, {{"a", 160}, {"b", 72}, {"c", 30}, {"d", 32}, {"e", 272}});
  EXPECT_EQ(times.at("a").preemptions, 2);
  EXPECT_EQ(times.at("b").preemptions, 1);
}

// Tiresias 2D-LAS, one threshold of 100 GPU·s, rounds every 60 s: a 0–…, c 10–30, d 30–42, e from 42;
// at the 60 s round a has 120 GPU·s (queue 1), b (0) and e (18) are in queue 0 and b comes first
// by arrival: a and e are preempted, b 60–110; then a (40 s left) 110–150 and e (182 left) 110–292.
TEST(ClusterRun, TiresiasLasFiveJobs) {
  const std::string trace = testing::write_file("jobs.csv", kFiveJobs);
  const Scenario scenario =
      testing::load(cluster_yaml(trace, "{name: tiresias-las, thresholds: [100s], round: 60s}", 1, 4));
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  const std::map<std::string, double> ends{{"a", 150}, {"b", 110}, {"c", 30}, {"d", 42}, {"e", 292}};
  for (std::size_t i = 0; i < report.sim.jobs.size(); ++i)
    EXPECT_NEAR(report.sim.jobs[i].end, ends.at(report.spec->trace.jobs[i].id), 1e-6) << report.spec->trace.jobs[i].id;
}

// Pollux's artifact Tiresias on one 2-GPU server: one threshold (100 GPU·s), decisions only at the
// 60 s rounds, a restart cost of 10 s paid on the first start too (simulator.py Job.reallocate). Jobs
// a (submit 0, 2 GPUs, 100 s) and b (submit 10, 2 GPUs, 30 s):
//   60  round: both in queue 0, a first by arrival: a starts, restores 60–70, works 70–120 (50 s).
//   120 round: a has (120 − 60) × 2 = 120 GPU·s ≥ 100: queue 1; b (queue 0) preempts it. b restores
//       120–130, works 130–160: ends 160 (the completion decides nothing: rounds only).
//   180 round: a restarts, restores 180–190, works its last 50 s: ends 240.
// Without the first-start cost: a works 60–120 (60 s), b 120–150, a from 190 its last 40 s: ends 230.
// (One engine per process: each case is its own test.)
void expect_artifact_tiresias_timeline(bool on_start) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s\na,0,2,100\nb,10,2,30\n");
  const Scenario scenario = testing::load(
      cluster_yaml(trace, "{name: tiresias-las, thresholds: [100s], rounds_only: true}", 1, 2,
                   std::string("  restart_cost: 10s\n  restart_cost_on_start: ") + (on_start ? "true\n" : "false\n")));
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  ASSERT_EQ(report.sim.jobs.size(), 2u);
  EXPECT_NEAR(report.sim.jobs[0].start, 60, 1e-6);
  EXPECT_NEAR(report.sim.jobs[0].end, on_start ? 240 : 230, 1e-6);
  EXPECT_EQ(report.sim.jobs[0].preemptions, 1);
  EXPECT_NEAR(report.sim.jobs[1].start, 120, 1e-6);
  EXPECT_NEAR(report.sim.jobs[1].end, on_start ? 160 : 150, 1e-6);
}

TEST(ClusterRun, TiresiasAsPolluxArtifactPaysRestartsAtRounds) { expect_artifact_tiresias_timeline(true); }
TEST(ClusterRun, TiresiasWithoutFirstStartCost) { expect_artifact_tiresias_timeline(false); }

// Tiresias 2D-Gittins, one threshold of 100 GPU·s, rounds every 60 s. Inside a queue jobs go by the
// Gittins index G(a) = #{S ∈ (a, a+Δ]} / (Σ_{S ∈ (a, a+Δ]} (S − a) + Δ·#{S > a+Δ}), S the GPU-times
// seen so far (a 200, b 200, c 20, d 24, e 200), a the attained GPU·s, Δ = 100 − a in queue 0; ties
// by arrival.
//   0   S={200,200}: G = 0 for a and b; a (first) runs, b (4) does not fit beside it.
//   10  S+={20}: G(0) = 1/220 for b and c, G(20) = 0 for a: b wins all 4 GPUs, a is preempted.
//   20  S+={24}: G(0) = 2/244 for c, d; G(20) = 1/164 for a; G(40) = 0 for b: c and d run, b preempted.
//   32  d ends: G_c(12) = 2/196 > G_a(20) = 1/164 > G_b(40) = 0: a returns beside c.
//   35  S+={200}: G_c(15) = 2/269 > G_e(0) = 2/344 > G_a(26) = G_b(40) = 0: c, e, a run; b waits.
//   40  c ends; 60: round, G = 0 for a (76), b (40), e (25): a, then e (b does not fit) — no change.
//   120 round: a has 196 GPU·s (queue 1, 98 of its 100 s done); b (40) and e (85) are in queue 0 with
//       G = 0, b first: a and e are preempted, b runs its last 40 s: 120–160.
//   160 a (queue 1) runs its last 2 s beside e (queue 0): a ends 162, e (115 s left) 275.
TEST(ClusterRun, TiresiasGittinsFiveJobs) {
  const auto times = run_five("{name: tiresias-gittins, thresholds: [100s], round: 60s}");
  expect_ends(times, {{"a", 162}, {"b", 160}, {"c", 40}, {"d", 32}, {"e", 275}});
  EXPECT_EQ(times.at("a").preemptions, 2);
  EXPECT_EQ(times.at("b").preemptions, 1);
  EXPECT_EQ(times.at("e").preemptions, 1);
}

// Gandiva-like time slicing, 60 s quanta: arrivals and completions fill free GPUs in arrival order
// (a 0–, c 10–30, d 30–42, e 42–; b never fits). At 60 the longest-waiting first is a (running since
// 0, ahead of b queued since 0 by arrival), then b (does not fit), then e: no change. a ends 100. At
// the 120 round b (waiting since 0) comes before e (running since 42): e yields, b 120–170; then e's
// remaining 122 s: 170–292.
TEST(ClusterRun, GandivaFiveJobs) {
  const auto times = run_five("{name: gandiva, quantum: 60s}");
  expect_ends(times, {{"a", 100}, {"b", 170}, {"c", 30}, {"d", 42}, {"e", 292}});
  EXPECT_EQ(times.at("e").preemptions, 1);
}

// Jobs a and b of the packing tests below on one V100 under Gandiva with packing, Gavel's tables;
// `extra`: more workload keys; `rows`: the jobs (default a and b).
constexpr const char* kPackedPair =
    "a,0,1,1030.0256432,ResNet-18 (batch size 256)\nb,10,1,3235.33843289,ResNet-18 (batch size 16)\n";
std::vector<JobOutcome> run_packed_pair(const std::string& extra, const std::string& rows = kPackedPair) {
  const std::string gavel = std::string(DNNSIM_SOURCE_DIR) + "/data/traces/gavel/simulation_throughputs.json";
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,iterations,model\n" + rows);
  const Scenario scenario = testing::load(
      "name: t\ncluster:\n  node_types:\n    n: {gpu: V100-16GB, gpus_per_node: 1, fabric: pcie, nic: {link: "
      "Ethernet-25G}}\n"
      "  nodes:\n    - {type: n, count: 1}\n  interconnect: {kind: switch, latency: \"1us\"}\nworkload:\n  kind: "
      "cluster\n"
      "  trace: {format: dnnsim, file: " +
      trace + "}\n  speed: {source: gavel, tables: " + gavel + "}\n" + extra +
      "  scheduler: {name: gandiva, quantum: 60s, packing: true}\noutputs: {trace: false, tasks_csv: false}\n");
  const SimulationResult result = run_scenario(scenario, {});
  return dynamic_cast<const ClusterRunReport&>(*result.workload_result).sim.jobs;
}

// Gandiva's packing with Gavel's measured co-locations (v100 table): on one V100, a =
// ResNet-18 (batch 256) from 0 with 100 s of work (1,030.0256 iterations at 10.300256 steps/s), b =
// ResNet-18 (batch 16) from 10 with 100 s of work (3,235.3384 at 32.353384 steps/s). Beside b, a keeps
// all its speed (10.300256 steps/s: slowdown 1), b runs at 24.454648 (slowdown 1.322995); 1/1.323 + 1
// > 1, so b is packed onto a at 10. a ends at 100; b has done 90 / 1.322995 = 68.027 s of its work
// and does the remaining 31.973 s alone: it ends at 131.973 (without packing it would wait: 100–200).
// The 60 s round keeps both (a pair holds one GPU).
TEST(ClusterRun, GandivaPacksTwoJobsOnOneGpu) {
  const std::vector<JobOutcome> jobs = run_packed_pair("");
  EXPECT_NEAR(jobs[0].end, 100.0, 1e-3);
  EXPECT_NEAR(jobs[1].start, 10.0, 1e-9);
  EXPECT_NEAR(jobs[1].end, 100.0 + 100.0 - 90.0 / 1.322995309766805, 1e-3);
  EXPECT_NEAR(jobs[0].packed_s, 90.0, 1e-6);
  EXPECT_NEAR(jobs[1].packed_s, 90.0, 1e-6);
}

// A partner ends and another packs on at the same date (the host is repriced twice before its actor
// runs again; cancelling its execution twice crashed SimGrid). a as above; b = ResNet-18 (batch 16)
// packed from 10 with 489.09296 iterations, 20 s at the packed 24.454648 steps/s: ends at 30; c, the
// same type with 100 s of work, arrives at 20 and waits (a's GPU holds a pair) until b's end, then
// packs onto a at 30. a never slows (slowdown 1 beside either): it ends at 100. c does 70 s packed =
// 70 / 1.322995 s of its work and the rest alone: it ends at 100 + 100 − 70 / 1.322995 = 147.090.
TEST(ClusterRun, GandivaRepacksAHostAtItsPartnersEnd) {
  const std::vector<JobOutcome> jobs = run_packed_pair("",
                                                       "a,0,1,1030.0256432,ResNet-18 (batch size 256)\n"
                                                       "b,10,1,489.09296,ResNet-18 (batch size 16)\n"
                                                       "c,20,1,3235.33843289,ResNet-18 (batch size 16)\n");
  EXPECT_NEAR(jobs[0].end, 100.0, 1e-3);
  EXPECT_NEAR(jobs[1].end, 30.0, 1e-3);
  EXPECT_NEAR(jobs[2].start, 30.0, 1e-3);
  EXPECT_NEAR(jobs[2].end, 200.0 - 70.0 / 1.322995309766805, 1e-3);
}

// The same two jobs in network mode with 10 s batches: b's batches are ⌊10 × 32.353384⌋ = 323
// iterations, 9.9835 s alone, 13.2081 s packed (× 1.322995). Packed from 10, b ends batches at
// 10 + 13.2081 k; its 7th, begun at 89.25 while a still ran, ends at 102.457 at the packed speed (a
// change of speed applies from the next batch). Then the remaining 3,235.338 − 7 × 323 = 974.338
// iterations alone take 30.115 s: b ends at 132.572 (job level: 131.973).
TEST(ClusterRun, GandivaPackingInNetworkModeAppliesPerBatch) {
  const std::vector<JobOutcome> jobs = run_packed_pair("  network: true\n  batch: \"10s\"\n");
  EXPECT_NEAR(jobs[0].end, 100.0, 1e-3);
  EXPECT_NEAR(jobs[1].end, 132.57236, 1e-3);
}

// Optimus-like with the duration speed model: a second GPU brings no marginal gain, so every active
// job gets exactly one GPU in arrival order (at most four at once) and runs its trace duration from
// its arrival: a 0–100, b 0–50, c 10–30, d 20–32, e 35–235, never preempted.
TEST(ClusterRun, OptimusFiveJobsOneGpuEach) {
  const auto times = run_five("optimus");
  expect_ends(times, {{"a", 100}, {"b", 50}, {"c", 30}, {"d", 32}, {"e", 235}});
  for (const auto& [id, t] : times) EXPECT_EQ(t.preemptions, 0) << id;
}

// Tetris, score = demand/4 · free/4 + shortest/remaining over the jobs waiting (weight 1):
//   0   b 1·1 + 50/50 = 2 beats a 0.5·1 + 50/100 = 1: b 0–50; a does not fit beside it.
//   50  all four GPUs free, shortest 12: d 0.5 + 1 = 1.5 (c 0.85, a 0.62, e 0.31): d 50–62;
//       2 free, shortest 20: c 0.125 + 1 (a 0.45, e 0.225): c 50–70;
//       1 free, shortest 100: a does not fit, e 0.0625 + 0.5: e 50–250.
//   62  d's two GPUs: a 62–162.
TEST(ClusterRun, TetrisFiveJobs) {
  expect_ends(run_five("tetris"), {{"a", 162}, {"b", 50}, {"c", 70}, {"d", 62}, {"e", 250}});
}

// DRF over users, GPUs only: at 0 alice's a and b fill the server. At 50 (b ends) bob holds 0 GPUs,
// alice 2: bob's c 50–70. At 70 bob 0, alice 2 again: bob's e (not alice's older d) 70–110. a ends
// 100: d 100–130.
TEST(ClusterRun, DrfFiveJobsByUser) {
  expect_ends(run_jobs(kUserJobs, "drf"), {{"a", 100}, {"b", 50}, {"c", 70}, {"d", 130}, {"e", 110}});
}

// Helios QSSF, key = GPUs × the user's mean finished duration (else the mean of all finished jobs):
// at 0 no history (key = GPUs): a, b start. At 50 alice's mean is 50 (b) and bob has none (global
// 50): c, d, e tie at 100, c first by arrival: 50–70. At 70 bob's mean is 20: e (40) before d (100):
// e 70–110; a ends 100: d 100–130. (FIFO with backfill: d 70–100, e 100–140.)
TEST(ClusterRun, QssfFiveJobsLearnsUserDurations) {
  expect_ends(run_jobs(kUserJobs, "qssf"), {{"a", 100}, {"b", 50}, {"c", 70}, {"d", 130}, {"e", 110}});
}

// A job larger than the cluster is an input error at its row, unless reported as never_fits.
TEST(ClusterRun, OversizedJobIsLocatedErrorOrReported) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s\na,0,2,10\nbig,1,8,10\n");
  try {
    (void)testing::load(cluster_yaml(trace, "fifo", 1, 4));
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    ASSERT_EQ(error.diagnostics().size(), 1u);
    EXPECT_EQ(error.diagnostics()[0].location.line, 3);
    EXPECT_NE(error.diagnostics()[0].message.find("asks for 8 GPUs"), std::string::npos);
  }
  const Scenario scenario = testing::load(cluster_yaml(trace, "fifo", 1, 4, "  oversized_jobs: report\n"));
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  EXPECT_EQ(report.sim.jobs[0].status, JobOutcome::Status::finished);
  EXPECT_EQ(report.sim.jobs[1].status, JobOutcome::Status::never_fits);
}

// A job stream's memory is bounded before anything runs (cluster_kind.cpp, 1 KiB per job as measured
// and 64 B per utilisation sample). The five jobs' last submission is at 35 s: every 1 ms that is
// 35,001 samples, 2.24 MB with 5 KiB of jobs, over a budget of 1 MiB — refused at the interval, which
// would fit from 35 s × 64 B / (1 MiB − 5 KiB) = 2.147 ms. 2,000 generated jobs need 2,000 KiB, over
// the same budget: refused at `jobs` before they are made (1,024 would fit).
TEST(ClusterRun, AStreamOverTheMemoryBudgetIsRefusedBeforeItRuns) {
  const std::string trace = testing::write_file("jobs.csv", kFiveJobs);
  const std::string budget = "run: {memory_budget: 1MiB}\n";
  const auto series = testing::diagnostics_thrown_by(
      [&] { (void)testing::load(cluster_yaml(trace, "fifo", 1, 4, "  utilisation_interval: 1ms\n" + budget)); });
  ASSERT_EQ(series.size(), 1u) << testing::dump(series);
  EXPECT_EQ(series[0].location.line, 12) << testing::dump(series);
  EXPECT_NE(series[0].message.find("35001 samples"), std::string::npos) << testing::dump(series);
  EXPECT_NE(series[0].message.find("at least 2.147 ms would fit"), std::string::npos) << testing::dump(series);
  (void)testing::load(cluster_yaml(trace, "fifo", 1, 4, "  utilisation_interval: 3ms\n" + budget));

  std::string generated = cluster_yaml("x", "fifo", 1, 4, budget);
  generated.replace(generated.find("trace: {format: dnnsim, file: x}"), 32,
                    "generator: {jobs: 2000, mean_interarrival: 10s, mean_duration: 100s}");
  const auto jobs = testing::diagnostics_thrown_by([&] { (void)testing::load(generated); });
  ASSERT_EQ(jobs.size(), 1u) << testing::dump(jobs);
  EXPECT_NE(jobs[0].message.find("2000 jobs would need about"), std::string::npos) << testing::dump(jobs);
  EXPECT_NE(jobs[0].message.find("At most 1024 jobs fit"), std::string::npos) << testing::dump(jobs);
}

// The five jobs under strict FIFO (FifoStrictFiveJobs: 0–350 s) with a utilisation sample every 3 ms
// and the given run.memory_budget.
struct FiveJobsRun {
  Scenario scenario;
  SimulationResult result;
  const ClusterSimResult& sim() const { return dynamic_cast<const ClusterRunReport&>(*result.workload_result).sim; }
};
FiveJobsRun run_five_every_3ms(const std::string& budget) {
  FiveJobsRun run{testing::load(cluster_yaml(testing::write_file("jobs.csv", kFiveJobs), "fifo", 1, 4,
                                             "  utilisation_interval: 3ms\nrun: {memory_budget: " + budget + "}\n")),
                  {}};
  run.result = run_scenario(run.scenario, {});
  return run;
}

// The series beyond the last submission is bounded as it grows (ClusterSimInput::max_utilisation_samples).
// Every 3 ms the five jobs' 350 s are 116,667 samples, and a budget of 1 MiB leaves (1,048,576 − 5 ×
// 1,024) / 64 = 16,304 beside the jobs, full at 16,304 × 3 ms = 48.91 s. The next event is a's end at
// 100 s: the run stops there, a finished and the other four unfinished (b would start at 100, but the
// scheduler is not asked), with a's 2 GPUs busy for 100 s of the 4 GPUs' 100 s: utilisation 0.5.
// Reaching 100 s takes 100 s / 16,304 = 6.133 ms a sample.
TEST(ClusterRun, AUtilisationSeriesThatFillsTheBudgetStopsTheRun) {
  const FiveJobsRun run = run_five_every_3ms("1MiB");
  EXPECT_EQ(run.sim().utilisation.size(), 16304u);
  EXPECT_EQ(run.sim().stopped_at, 100.0);
  EXPECT_EQ(run.sim().jobs[0].status, JobOutcome::Status::finished);
  for (std::size_t j = 1; j < 5; ++j) EXPECT_EQ(run.sim().jobs[j].status, JobOutcome::Status::unfinished) << j;
  EXPECT_FALSE(run.result.interrupted);
  const nlohmann::ordered_json summary = make_summary(run.scenario, run.result);
  EXPECT_EQ(summary["status"], "stopped");
  const std::string message = summary["messages"][0];
  EXPECT_NE(message.find("full at simulated time 48.91 s (16304 samples"), std::string::npos) << message;
  EXPECT_NE(message.find("the next event, at 100 s"), std::string::npos) << message;
  EXPECT_NE(message.find("at least 6.133 ms reaches that event"), std::string::npos) << message;
  EXPECT_DOUBLE_EQ(summary["cluster"]["gpu_utilisation"].get<double>(), 0.5);
  EXPECT_EQ(summary["cluster"]["preemptions"], 0);
}

// Under 1 GiB the same run ends at 350 s with ceil(350 s / 3 ms) = 116,667 samples. 3 ms is no binary
// fraction: (b + 1) × 3 ms / 3 ms once rounded to just under b + 1 and the series' loop stood still at
// that boundary, so the run never returned.
TEST(ClusterRun, AnIntervalThatIsNoBinaryFractionEndsItsSeries) {
  const FiveJobsRun run = run_five_every_3ms("1GiB");
  EXPECT_EQ(run.sim().stopped_at, -1.0);
  EXPECT_EQ(run.sim().makespan, 350.0);
  EXPECT_EQ(run.sim().utilisation.size(), 116667u);
}

// 25 oversized jobs are one mistake: the first 20 are listed at their rows (2 … 21), then one line
// counts the other 5 at the first row not listed (22).
TEST(ClusterRun, ManyOversizedJobsAreListedThenCounted) {
  std::string rows = "id,submit_s,gpus,duration_s\n";
  for (int j = 0; j < 25; ++j) rows += fmt::format("j{},{},8,10\n", j, j);
  const std::string trace = testing::write_file("oversized.csv", rows);
  const auto errors = testing::diagnostics_thrown_by([&] { (void)testing::load(cluster_yaml(trace, "fifo", 1, 4)); });
  ASSERT_EQ(errors.size(), 21u) << testing::dump(errors);
  EXPECT_EQ(errors[19].location.line, 21);
  EXPECT_EQ(errors[20].location.line, 22);
  EXPECT_EQ(errors[20].message, "and 5 more jobs ask for more GPUs than the cluster's 4 (the first 20 are listed)");
}

// `speed.gradients`: an application the Pollux tables lack is an error naming the closest one; a size
// without a proper value is located at its value; the option under another speed source is the
// option reader's error (an option of pollux).
TEST(ClusterRun, GradientSizesAreCheckedAgainstTheTables) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s,model\na,0,2,10,cifar10\n");
  const std::string tables = DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21/throughput";
  const auto errors_of = [&](const std::string& speed) {
    return testing::diagnostics_thrown_by([&] { (void)testing::load(cluster_yaml(trace, "fifo", 1, 4, speed)); });
  };
  const auto unknown =
      errors_of("  speed: {source: pollux, tables: " + tables + ", gradients: {cifar100: \"40MB\"}}\n");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_NE(unknown[0].message.find("did you mean 'cifar10'"), std::string::npos) << unknown[0].message;
  const auto negative = errors_of("  speed: {source: pollux, tables: " + tables + ", gradients: {bert: \"-1MB\"}}\n");
  ASSERT_EQ(negative.size(), 1u);
  EXPECT_NE(negative[0].message.find("option 'gradients' of speed source 'pollux'"), std::string::npos)
      << negative[0].message;
  const auto elsewhere = errors_of("  speed: {source: analytical, gradients: {cifar10: \"40MB\"}}\n");
  ASSERT_EQ(elsewhere.size(), 1u);
  EXPECT_NE(elsewhere[0].message.find("speed source 'analytical' has no option 'gradients' (an option of pollux)"),
            std::string::npos)
      << elsewhere[0].message;
}

// The artifact's TunedJobs accounting end to end (speed `work: progress`, `accumulation: artifact`):
// bert at B = 384 on 2 × 4 GPUs, alone, FIFO, no restart cost. Local 48 in micro-steps of at most 12:
// accum 3, atomic 12, so T = 4·(step − sync) + sync at the row `44,12,2.538950562477112,
// 1.6628430938720702`. Its two epochs end at the least progress of each row over the six files,
// 7387.0 and 14774.0 (validation-12.csv); each runs at gain / T, the gain of validation-384.csv's row
// (grad_sqr, grad_var) at B/B₀ = 384/12. The job ends at 7387 / r₀ + (14774 − 7387) / r₁. With the
// network simulated, progress work is refused.
TEST(ClusterRun, TunedJobProgressesAtTheGainOfItsBatch) {
  const std::string trace =
      testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s,model,batch_size\nb,0,8,1,bert,384\n");
  const std::string speed = "  speed: {source: pollux, tables: " DNNSIM_SOURCE_DIR
                            "/data/traces/pollux-osdi21/throughput, work: progress, accumulation: artifact}\n";
  const Scenario scenario = testing::load(cluster_yaml(trace, "fifo", 2, 4, speed));
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  const double step = 4 * (2.538950562477112 - 1.6628430938720702) + 1.6628430938720702;
  const auto rate = [&](double sqr, double var) { return (var + sqr) / (var / 32 + sqr) / step; };
  const double end = 7387.0 / rate(6509198881259.403, 6086044601707605.0) +
                     (14774.0 - 7387.0) / rate(43032304393.29889, 45868579275033.31);
  ASSERT_EQ(report.sim.jobs.size(), 1u);
  EXPECT_NEAR(report.sim.jobs[0].end, end, 1e-6 * end);
  const auto refused = testing::diagnostics_thrown_by(
      [&] { (void)testing::load(cluster_yaml(trace, "fifo", 2, 4, speed + "  network: true\n")); });
  ASSERT_EQ(refused.size(), 1u) << testing::dump(refused);
  EXPECT_NE(refused[0].message.find("work: progress is counted at the job level only"), std::string::npos)
      << testing::dump(refused);
}

// Starts every job at once on the placement the test gives it (job i on where[i], or where[0]).
class FixedPlacementScheduler final : public JobScheduler {
 public:
  explicit FixedPlacementScheduler(std::vector<Placement> where) : where_(std::move(where)) {}
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent) override {
    std::vector<Decision> decisions;
    for (const JobView& job : state.queued)
      decisions.push_back(Decision{Decision::Kind::start, job.id, where_.size() > job.id ? where_[job.id] : where_[0]});
    return decisions;
  }

 private:
  std::vector<Placement> where_;
};

// Runs the scenario's jobs under `scheduler`, in network mode unless `network` is false (job level).
ClusterSimResult run_with(const Scenario& scenario, JobScheduler& scheduler, bool network = true) {
  const auto& spec = *scenario.workload_as<ClusterWorkload>();
  const auto engine = create_engine();
  const Platform platform = build_platform(scenario);
  ClusterSimInput input;
  input.servers = cluster_servers(scenario, spec);
  const auto node_of_gpu = scenario.cluster.node_of_gpu();
  if (network) input.server_gpus.resize(input.servers.size());
  for (std::size_t g = 0; network && g < platform.gpus.size(); ++g)
    input.server_gpus[node_of_gpu[g]].push_back(platform.gpus[g]);
  input.controller_host = platform.gpus[0];
  input.trace = &spec.trace;
  input.speed = spec.speed.get();
  input.batch_seconds = spec.batch;
  input.scheduler = &scheduler;
  return simulate_cluster(input);
}

// Runs the scenario's jobs at fixed placements in network mode.
ClusterSimResult run_fixed(const Scenario& scenario, std::vector<Placement> where) {
  FixedPlacementScheduler scheduler(std::move(where));
  return run_with(scenario, scheduler);
}

// A NIC whose bandwidth drops to a quarter at t = 300 s (a `network.conditions` schedule) slows the
// job whose ring crosses it (x on servers 0–1) and not the one on servers 2–3 (y), which runs exactly
// its solo time: its 600 s trace duration, every batch at slowdown 1.
TEST(ClusterRun, PreemptedLinkSlowsOnlyTheJobsCrossingIt) {
  const std::string trace = testing::write_file(
      "jobs.csv", "id,submit_s,gpus,duration_s,model,batch_size\nx,0,2,600,resnet50,64\ny,0,2,600,resnet50,64\n");
  const Scenario scenario = testing::load(
      cluster_yaml(trace, "fifo", 4, 1, "  speed: {source: analytical}\n  network: true\n  batch: \"60s\"\n") +
      "network:\n  conditions:\n    - links: \"node0/nic\"\n      schedule: [{at: \"0s\", bandwidth: \"25Gbps\"}, {at: "
      "\"300s\", bandwidth: \"6.25Gbps\"}]\n");
  const ClusterSimResult result = run_fixed(scenario, {Placement{{{0, 1}, {1, 1}}}, Placement{{{2, 1}, {3, 1}}}});
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_NEAR(result.jobs[1].contention_slowdown, 1.0, 1e-4);
  EXPECT_NEAR(result.jobs[1].end, 600.0, 0.6);
  EXPECT_GT(result.jobs[0].contention_slowdown, 1.1);
  EXPECT_GT(result.jobs[0].end, 600.0 * 1.1);
}

// A job-level run puts no flows on links, so a network section would silently change nothing; in
// network mode a failure window would cut a ring flow, which the simulation has no model for. Both
// are refused at the section or the key.
TEST(ClusterRun, NetworkSectionsItCannotHonourAreRefused) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s\nx,0,2,600\n");
  const std::string conditions = "network:\n  conditions: [{links: node0/nic, bandwidth: \"1GB/s\"}]\n";
  const std::string failures = "network:\n  failures: [{link: node0/nic, from: 1s, to: 2s}]\n";
  for (const auto& [yaml, text] :
       {std::pair{cluster_yaml(trace, "fifo", 2, 1) + conditions, std::string("set workload.network: true")},
        std::pair{cluster_yaml(trace, "fifo", 2, 1, "  network: true\n") + failures,
                  std::string("the cluster simulation has no failure model")}}) {
    const auto diagnostics = testing::diagnostics_thrown_by([&] { (void)testing::load(yaml); });
    ASSERT_EQ(diagnostics.size(), 1u) << testing::dump(diagnostics);
    EXPECT_NE(diagnostics[0].message.find(text), std::string::npos) << testing::dump(diagnostics);
  }
}

// Starts job 0 on `where` at its arrival and migrates it (checkpoint + restart) to the same GPUs at
// the first round.
class MigrateOnceScheduler final : public JobScheduler {
 public:
  MigrateOnceScheduler(Placement where, Seconds round) : where_(std::move(where)), round_(round) {}
  std::optional<Seconds> round() const override { return round_; }
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    if (event == SchedulerEvent::arrival && !state.queued.empty()) return {Decision{Decision::Kind::start, 0, where_}};
    if (event == SchedulerEvent::round && ++rounds_ == 1 && !state.running.empty())
      return {Decision{Decision::Kind::migrate, 0, where_}};
    return {};
  }

 private:
  Placement where_;
  Seconds round_;
  int rounds_ = 0;
};

// A job checkpointed while its ring flows are in flight (the round R falls in the middle of the first
// batch's all-reduce) stops cleanly — no SimGrid exception escapes the cancelled flows. The checkpoint
// keeps the R × solo rate iterations the cut batch covers, and with no restart cost and no other
// traffic the restart on the same GPUs runs the rest at the solo rate: it ends at its 600 s solo time.
TEST(ClusterRun, MigratedDuringRingFlowsRestartsCleanly) {
  const std::string trace =
      testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s,model,batch_size\nx,0,2,600,resnet50,64\n");
  const Scenario scenario = testing::load(
      cluster_yaml(trace, "fifo", 2, 1, "  speed: {source: analytical}\n  network: true\n  batch: \"60s\"\n"));
  const auto& spec = *scenario.workload_as<ClusterWorkload>();
  const Placement ring{{{0, 1}, {1, 1}}};
  const std::vector<ServerInfo> servers = cluster_servers(scenario, spec);
  const IterationCost cost = spec.speed->iteration(spec.trace.jobs[0], ring, servers);
  // One batch: n iterations' local work, then n iterations' ring bytes over the NIC (cluster_sim.cpp).
  const double m = cost.sync_bytes.value() / servers[0].nic_bandwidth.value();
  const double n = std::max(1.0, std::floor(60.0 / cost.total().value()));
  const double local = n * (cost.total().value() - m);
  const double round = local + 0.5 * n * m;
  ASSERT_GT(n * m, 1e-3);

  MigrateOnceScheduler scheduler(ring, Seconds(round));
  const ClusterSimResult result = run_with(scenario, scheduler);
  ASSERT_EQ(result.jobs.size(), 1u);
  EXPECT_EQ(result.jobs[0].status, JobOutcome::Status::finished);
  EXPECT_EQ(result.jobs[0].preemptions, 1);
  EXPECT_NEAR(result.jobs[0].end, 600.0, 0.6);
}

// Starts job 0 at its arrival on one GPU at its solo rate; from the first round on its curve runs
// at twice that (a job re-choosing its batch as it runs: JobScheduler::adapted_curve).
class RechoosingScheduler final : public JobScheduler {
 public:
  std::optional<Seconds> round() const override { return Seconds(60); }
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    if (event == SchedulerEvent::round) ++rounds_;
    if (event == SchedulerEvent::arrival && !state.queued.empty())
      return {Decision{Decision::Kind::start, 0, Placement{{{0, 1}}}}};
    return {};
  }
  std::optional<std::vector<ProgressSegment>> adapted_curve(const JobView& job) override {
    return std::vector<ProgressSegment>{{job.total_iterations, job.solo_rate * (rounds_ > 0 ? 2 : 1)}};
  }

 private:
  int rounds_ = 0;
};

// A 300 s job (duration speed, no restart cost) started at 0: 60 s of its work by the round at 60 s,
// where its curve doubles its rate, so the other 240 s of work take 120 s: it ends at 180 s, not
// restarted (the curve changes under the running attempt).
TEST(ClusterRun, ACurveReChosenAtARoundGoesOnFromTheProgressMade) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s\nx,0,1,300\n");
  const Scenario scenario = testing::load(cluster_yaml(trace, "fifo", 1, 1));
  RechoosingScheduler scheduler;
  const ClusterSimResult result = run_with(scenario, scheduler, false);
  ASSERT_EQ(result.jobs.size(), 1u);
  EXPECT_EQ(result.jobs[0].status, JobOutcome::Status::finished);
  EXPECT_EQ(result.jobs[0].preemptions, 0);
  EXPECT_NEAR(result.jobs[0].end, 180.0, 1e-6);
}

// Two identical ring jobs (ResNet-50, batch 64, 600 s) on 2 servers of 2 GPUs in network mode with
// the analytical speed, each placed on `ring`: one GPU on server 0 and one on server 1, so both rings
// cross both NICs at once. The contention tests below check its simulated slowdown against two
// models, from the same solo iteration `cost`.
struct TwoRingsAcrossNics {
  Scenario scenario;
  Placement ring;
  std::vector<ServerInfo> servers;
  IterationCost cost;  // one job's iteration alone on `ring`
};

TwoRingsAcrossNics two_rings_across_nics() {
  const std::string trace = testing::write_file(
      "jobs.csv", "id,submit_s,gpus,duration_s,model,batch_size\nx,0,2,600,resnet50,64\ny,0,2,600,resnet50,64\n");
  Scenario scenario = testing::load(
      cluster_yaml(trace, "fifo", 2, 2, "  speed: {source: analytical}\n  network: true\n  batch: \"60s\"\n"));
  const auto& spec = *scenario.workload_as<ClusterWorkload>();
  const Placement ring{{{0, 1}, {1, 1}}};
  std::vector<ServerInfo> servers = cluster_servers(scenario, spec);
  const IterationCost cost = spec.speed->iteration(spec.trace.jobs[0], ring, servers);
  return {std::move(scenario), ring, std::move(servers), cost};
}

// TwoRingsAcrossNics: each flow gets half the NIC and a batch takes c + 2m instead of c + m, where m
// is the solo communication time S_sync/B_nic per iteration and c = t_iter − m the rest. The expected
// slowdown (c + 2m)/(c + m) uses the solo cost only; the sharing itself comes from SimGrid.
TEST(ClusterRun, TwoRingsSharingNicsRunAtAnalyticSlowdown) {
  const auto [scenario, ring, servers, cost] = two_rings_across_nics();
  const double m = cost.sync_bytes.value() / servers[0].nic_bandwidth.value();
  const double c = cost.total().value() - m;
  const double expected = (c + 2 * m) / (c + m);
  ASSERT_GT(expected, 1.05);  // the case is meaningful: communication is a visible share
  const ClusterSimResult result = run_fixed(scenario, {ring});
  for (const JobOutcome& job : result.jobs) {
    EXPECT_EQ(job.status, JobOutcome::Status::finished);
    // Latency (µs per batch of ~60 s) is the only term the formula leaves out.
    EXPECT_NEAR(job.contention_slowdown, expected, 1e-3 * expected);
  }
}

// GADGET's ring model (planners/jobs/gadget.hpp) against SimGrid: the same two rings through both
// NICs. Its contended iteration divides each NIC by the n_rings = 2 rings through it; the simulated
// slowdown of each job must match the model's contended / solo iteration ratio.
TEST(ClusterRun, GadgetRingContentionMatchesTheSimulatedNics) {
  const auto [scenario, ring, servers, cost] = two_rings_across_nics();
  const double solo = ring_estimate(cost, ring, servers, {0, 0}).iteration.value();
  const double shared = ring_estimate(cost, ring, servers, {1, 1}).iteration.value();
  ASSERT_GT(shared / solo, 1.05);
  const ClusterSimResult result = run_fixed(scenario, {ring});
  for (const JobOutcome& job : result.jobs) EXPECT_NEAR(job.contention_slowdown, shared / solo, 0.01 * shared / solo);
}

// Parameter-server jobs (docs/cluster.md): one 4-GPU server with 4 cores, one PS of 2 cores per
// worker, analytical speed (a job alone on its default co-located layout runs its trace duration).
// a (2 GPUs, 2 PSs = 4 cores) runs 0–100; b (1 GPU) arrives at 10 to 2 free GPUs but no free core:
// its start is put off until a's PSs leave at 100, so it runs 100–150. As a ring all-reduce job it
// would run 10–60.
TEST(ClusterRun, ParameterServerJobWaitsForCpuCores) {
  const std::string trace = testing::write_file(
      "jobs.csv", "id,submit_s,gpus,duration_s,model,batch_size\na,0,2,100,resnet50,64\nb,10,1,50,resnet50,32\n");
  std::string yaml = cluster_yaml(trace, "fifo-backfill", 1, 4, "  speed: {source: analytical}\n");
  yaml.replace(yaml.find("fabric: pcie"), 12, "fabric: pcie, cpu_cores: 4");
  const std::string ps = "  architecture: {kind: parameter-server, ps_per_worker: 1, ps_cores: 2}\n";
  const std::string with_ps = std::string(yaml).insert(yaml.find("outputs:"), ps);
  const SimulationResult result = run_scenario(testing::load(with_ps), {});
  const auto& report = dynamic_cast<const ClusterRunReport&>(*result.workload_result);
  EXPECT_NEAR(report.sim.jobs[0].end, 100.0, 1e-6);
  EXPECT_NEAR(report.sim.jobs[1].start, 100.0, 1e-6);
  EXPECT_NEAR(report.sim.jobs[1].end, 150.0, 1e-6);
  EXPECT_EQ(report.sim.jobs[0].placement, "s0:2 ps s0:2");
  EXPECT_GE(report.sim.ps_deferred, 1u);
}

// Without cpu_cores, or with another speed source, parameter-server jobs are refused, both at once.
TEST(ClusterRun, ParameterServerJobsNeedCoresAndTheAnalyticalSpeed) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s\na,0,2,100\n");
  std::string yaml = cluster_yaml(trace, "fifo", 1, 4);
  yaml.insert(yaml.find("outputs:"), "  architecture: {kind: parameter-server, ps_per_worker: 1, ps_cores: 2}\n");
  try {
    (void)testing::load(yaml);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    ASSERT_EQ(error.diagnostics().size(), 2u);
    EXPECT_NE(error.diagnostics()[0].message.find("speed source that prices their push/pull"), std::string::npos);
    EXPECT_NE(error.diagnostics()[1].message.find("needs 'cpu_cores'"), std::string::npos);
  }
}

// A misspelt `ps_cores` is its unknown key alone, not also "kind: parameter-server needs 'ps_per_worker'
// and 'ps_cores'"; a key not given at all is still that error.
TEST(ClusterRun, AMisspeltParameterServerKeyIsOneError) {
  const std::string trace =
      testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s,model,batch_size\na,0,2,100,resnet50,64\n");
  std::string yaml = cluster_yaml(trace, "fifo", 1, 4, "  speed: {source: analytical}\n");
  yaml.replace(yaml.find("fabric: pcie"), 12, "fabric: pcie, cpu_cores: 4");
  const auto errors_with = [&](const std::string& architecture) {
    return testing::diagnostics_thrown_by(
        [&] { (void)testing::load(std::string(yaml).insert(yaml.find("outputs:"), architecture)); });
  };
  const auto misspelt = errors_with("  architecture: {kind: parameter-server, ps_per_worker: 1, ps_core: 2}\n");
  ASSERT_EQ(misspelt.size(), 1u) << testing::dump(misspelt);
  EXPECT_NE(misspelt[0].message.find("unknown key 'ps_core' in the architecture section; did you mean 'ps_cores'?"),
            std::string::npos)
      << testing::dump(misspelt);
  const auto absent = errors_with("  architecture: {kind: parameter-server, ps_per_worker: 1}\n");
  ASSERT_EQ(absent.size(), 1u) << testing::dump(absent);
  EXPECT_NE(absent[0].message.find("needs 'ps_per_worker'"), std::string::npos) << testing::dump(absent);
}

// A job without the model its speed source needs is one error at its row: not also "unknown model ''"
// when the source prices it.
TEST(ClusterRun, AJobWithoutAModelIsOneError) {
  const std::string trace = testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s\na,0,2,100\n");
  testing::expect_errors(testing::diagnostics_thrown_by([&] {
                           (void)testing::load(cluster_yaml(trace, "fifo", 1, 4, "  speed: {source: analytical}\n"));
                         }),
                         {{2, 3, "job 'a' has no model and speed source 'analytical' needs one"}});
}

// A trace filter's own mistake (a misspelt max_gpus) is one error at its key: the jobs the filter was
// meant to leave out (here c, 16 GPUs on a 4-GPU cluster) are not also "asks for 16 GPUs".
TEST(ClusterRun, ATraceFiltersMistakeIsOneError) {
  const std::string trace =
      testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s\na,0,2,100\nb,5,4,100\nc,9,16,100\n");
  std::string yaml = cluster_yaml(trace, "fifo", 1, 4);
  const std::string file_key = "file: " + trace;
  yaml.insert(yaml.find(file_key) + file_key.size(), ", filter: {max_gpu: 4}");
  // line 10 is "  trace: {format: dnnsim, file: <trace>, filter: {max_gpu: 4}}"
  const int column = static_cast<int>(("  trace: {format: dnnsim, " + file_key + ", filter: {").size()) + 1;
  testing::expect_errors(testing::diagnostics_thrown_by([&] { (void)testing::load(yaml); }),
                         {{10, column, "unknown key 'max_gpu' in the trace filter"}});
}

// Network mode: a PS job of 2 workers on 2 servers (1 GPU each) with one PS on each server. Per
// batch of n iterations the forwards run (n·F), then the backwards (n·B) beside the push — each
// server's NIC sends n·p/2 to the other's PS and receives as much, one flow per direction — and then
// the pull, the same again: n·F + max(n·B, n·p / NIC). Solo batch time is n × the recursion's
// iteration F + finish(1) ≥ F + max(B, p / NIC) (it serialises layer 1's push/pull after its
// backward), so the slowdown is that ratio, ≤ 1.
TEST(ClusterRun, ParameterServerFlowsOverlapTheBackwardPass) {
  const std::string trace =
      testing::write_file("jobs.csv", "id,submit_s,gpus,duration_s,model,batch_size\nx,0,2,600,resnet50,64\n");
  std::string yaml = cluster_yaml(trace, "fifo", 2, 1,
                                  "  speed: {source: analytical}\n  network: true\n  batch: \"60s\"\n"
                                  "  architecture: {kind: parameter-server, ps_per_worker: 1, ps_cores: 2}\n");
  yaml.replace(yaml.find("fabric: pcie"), 12, "fabric: pcie, cpu_cores: 4");
  const Scenario scenario = testing::load(yaml);
  const auto& spec = *scenario.workload_as<ClusterWorkload>();
  const Placement where{{{0, 1}, {1, 1}}, {{0, 1}, {1, 1}}};
  const std::vector<ServerInfo> servers = cluster_servers(scenario, spec);
  const IterationCost cost = spec.speed->iteration(spec.trace.jobs[0], where, servers);
  const double forward = (cost.compute - cost.backward).value(), backward = cost.backward.value();
  const double comm = cost.ps_bytes.value() / servers[0].nic_bandwidth.value();
  const double expected = (forward + std::max(backward, comm)) / cost.total().value();
  ASSERT_GT(comm, 0.1 * backward);  // communication is a visible share of the iteration
  const ClusterSimResult result = run_fixed(scenario, {where});
  ASSERT_EQ(result.jobs[0].status, JobOutcome::Status::finished);
  EXPECT_LE(expected, 1.0);
  EXPECT_NEAR(result.jobs[0].contention_slowdown, expected, 1e-3 * expected);
}

}  // namespace
}  // namespace dnnsim
