// Pollux-like goodput model (planners/jobs/pollux_goodput.hpp) on the shipped artifact tables, with
// expected values computed by hand from rows of the files, and its allocation search
// (planners/jobs/pollux_search.hpp) on hand-built problems whose optimum is found by enumeration.
#include "planners/jobs/pollux.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "planners/jobs/pollux_goodput.hpp"
#include "planners/jobs/pollux_marginal.hpp"
#include "planners/jobs/pollux_search.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/pollux_tables.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

using testing::kPolluxTables;

JobRecord job(const std::string& app) {
  JobRecord record;
  record.id = "t";
  record.model = app;
  return record;
}

// cifar10/placements.csv, one GPU: rows at local batch 91 and 129; local 128 lies 37/38 of the way.
double cifar10_one_gpu(double at91, double at129) { return at91 + (128.0 - 91.0) / (129.0 - 91.0) * (at129 - at91); }
const double kStep128 = cifar10_one_gpu(0.07591350078582763, 0.10385050773620605);
const double kSync128 = cifar10_one_gpu(0.0005244320034980774, 0.0005253599941730499);

PolluxGoodput cifar10_fixed(const PolluxSpeedModel& speed, const std::string& batch) {
  PolluxGoodput goodput(speed);
  goodput.read_settings(testing::write_file("applications.csv",
                                            "application,max_local_bsz,fixed_batch_size,max_replicas\n"
                                            "cifar10,," +
                                                batch + ",\n"));
  return goodput;
}

TEST(PolluxGoodput, WorkAndEpochsFromTheValidationFiles) {
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput goodput(speed);
  // The least `progress` of the last rows (validation-256.csv: 39062.90816659533) is the work; the
  // least of the first rows (validation-256.csv: 390.71438596642224) ends epoch 0.
  EXPECT_DOUBLE_EQ(goodput.target_progress(job("cifar10")), 39062.90816659533);
  EXPECT_EQ(goodput.epoch(job("cifar10"), 390.7), 0);
  EXPECT_EQ(goodput.epoch(job("cifar10"), 390.72), 1);
  EXPECT_EQ(goodput.epoch(job("cifar10"), 1e9), 99);  // 100 rows: the last epoch
}

TEST(PolluxGoodput, InitialBatchRunsAtTheMeasuredStepWithGainOne) {
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput goodput = cifar10_fixed(speed, "128");
  // B = B₀ = 128 on one GPU: no accumulation (the largest local batch measured is 1024), gain 1, so
  // one step at B₀ per measured step time.
  const PolluxGoodput::Config c = goodput.best(job("cifar10"), Placement{{{0, 1}}}, 0);
  EXPECT_EQ(c.atomic, 128);
  EXPECT_EQ(c.accum, 0);
  EXPECT_NEAR(c.rate, 1.0 / kStep128, 1e-9);
}

TEST(PolluxGoodput, LargerBatchGainsByTheGradientNoiseScale) {
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput goodput = cifar10_fixed(speed, "256");
  // B = 256 on one GPU above B₀: one accumulation micro-step of 128 (goodput.py), so a step takes
  // T = 2 × step(128) − sync(128). validation-256.csv, epoch 0: grad_sqr 17.379458169870425,
  // grad_var 13.937760473946334; gain = (var + sqr) / (var·B₀/B + sqr).
  const double sqr = 17.379458169870425, var = 13.937760473946334;
  const double gain = (var + sqr) / (var / 2 + sqr);
  const PolluxGoodput::Config c = goodput.best(job("cifar10"), Placement{{{0, 1}}}, 0);
  EXPECT_EQ(c.atomic, 128);
  EXPECT_EQ(c.accum, 1);
  EXPECT_DOUBLE_EQ(c.batch, 256);
  EXPECT_NEAR(c.rate, gain / (2 * kStep128 - kSync128), 1e-9);
}

TEST(PolluxGoodput, NoiseGrowsSoLaterEpochsPickLargerBatches) {
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput goodput(speed);
  // validation-128.csv: var/sqr is 0.57 in epoch 0 and about 200 in epoch 89, so the efficiency of a
  // large batch rises (McCandlish et al.: the useful batch grows with the noise scale).
  const Placement four{{{0, 4}}};
  const auto early = goodput.best(job("cifar10"), four, 0);
  const auto late = goodput.best(job("cifar10"), four, 89);
  EXPECT_LT(early.batch, late.batch);
  EXPECT_GT(early.rate, 0);
  // The batch stays within the measured range: at least B₀, at most the largest validation batch.
  EXPECT_GE(early.batch, 128);
  EXPECT_LE(late.batch, 4096 * 1.0001);
}

TEST(PolluxGoodput, RankingAtTheRunningBatchFollowsItsLargerNoiseScale) {
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput smallest(speed);
  PolluxGoodput running(speed);
  running.rank_at_running_batch(true);
  // cifar10, epoch 50: the noise scale B₀·var/sqr is 4,944 at B = 128 but 10,969 at 512 and 19,095 at
  // 4096 (validation-<B>.csv row 51), so the agent ranking at the batch it runs (the artifact's) sees
  // more noise than at B₀ and settles on a batch at least as large; epoch 0 starts from B₀'s statistics.
  const Placement four{{{0, 4}}};
  EXPECT_GT(running.best(job("cifar10"), four, 50).batch, smallest.best(job("cifar10"), four, 50).batch);
  EXPECT_GE(running.best(job("cifar10"), four, 0).batch, smallest.best(job("cifar10"), four, 0).batch);
  // A fixed batch (ncf's 32768 in the artifact) is not ranked: the same configuration either way.
  const PolluxGoodput fixed = cifar10_fixed(speed, "256");
  PolluxGoodput fixed_running = cifar10_fixed(speed, "256");
  fixed_running.rank_at_running_batch(true);
  EXPECT_DOUBLE_EQ(fixed_running.best(job("cifar10"), four, 50).rate, fixed.best(job("cifar10"), four, 50).rate);
}

// The artifact's agent with a fitted model (simulator.py Job.update_local_bsz) on cifar10: B₀ = 128,
// local batches 32…1024 measured, largest B 4096. Toy models make the choice obvious.
TEST(PolluxGoodput, TheAgentRunsTheSmallestValidBatchBeforeItsFirstFit) {
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput goodput(speed);
  // No model yet: max(B₀, r·min local) = max(128, 4·32) = 128, local 32 on each of 4 replicas; at
  // B = B₀ the gain is 1, so the rate is 1 / step("4", 32) = 1 / 0.05821514129638672 (placements.csv).
  const PolluxGoodput::Config c = goodput.chosen(job("cifar10"), Placement{{{0, 4}}}, nullptr, 0, 128, 0);
  EXPECT_EQ(c.atomic, 32);
  EXPECT_EQ(c.accum, 0);
  EXPECT_DOUBLE_EQ(c.batch, 128);
  EXPECT_NEAR(c.rate, 1.0 / 0.05821514129638672, 1e-9);
}

TEST(PolluxGoodput, TheAgentsFittedModelDecidesItsBatch) {
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput goodput(speed);
  const Placement four{{{0, 4}}};
  // A micro-step of constant time (α_c = 0.1 s, β_c and the network ≈ 0): with no accumulation the
  // time is the same for every batch and the gain rises with B, so the largest candidate whose local
  // batch needs none wins: B = 4096, 1024 per replica. It runs at the tables' step("4", 1024) =
  // 0.7898811340332031 s with the gain of 4096 at epoch 0 (validation-4096.csv: sqr 14.297…, var 11.815…).
  const PolluxPerfParams constant{0.1, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1.0};
  const PolluxGoodput::Config big = goodput.chosen(job("cifar10"), four, &constant, 0, 128, 0);
  EXPECT_EQ(big.atomic, 1024);
  EXPECT_EQ(big.accum, 0);
  EXPECT_DOUBLE_EQ(big.batch, 4096);
  const double sqr = 14.297054109491588, var = 11.815138409160218;
  EXPECT_NEAR(big.rate, (var + sqr) / (var / 32 + sqr) / 0.7898811340332031, 1e-9);
  // A micro-step whose time is proportional to its batch (α_c ≈ 0): samples per second are the same
  // for every batch, so goodput follows the efficiency gain / (B / B₀), which falls with B: the
  // smallest candidate, B = 128 (32 per replica), as before the first fit.
  const PolluxPerfParams linear{1e-8, 1e-3, 1e-8, 1e-8, 1e-8, 1e-8, 1.0};
  const PolluxGoodput::Config small = goodput.chosen(job("cifar10"), four, &linear, 0, 128, 0);
  EXPECT_EQ(small.atomic, 32);
  EXPECT_DOUBLE_EQ(small.batch, 128);
  // One replica with constant micro-steps: any B above B₀ takes at least one accumulation step (two
  // steps' time), and the gain is below 1 + var/sqr = 1.57 at B₀'s epoch-0 statistics
  // (validation-128.csv: var 5.0666, sqr 8.9473) < 2: B₀ itself, at the tables' 1 / step(128).
  const PolluxGoodput::Config one = goodput.chosen(job("cifar10"), Placement{{{0, 1}}}, &constant, 0, 128, 0);
  EXPECT_EQ(one.atomic, 128);
  EXPECT_EQ(one.accum, 0);
  EXPECT_NEAR(one.rate, 1.0 / kStep128, 1e-9);
}

TEST(PolluxSpeedup, AJobNeverRunHasTheArtifactsFairShareSpeedup) {
  // pollux.py Problem.__init__: a job without a fitted model gets speedup r / fair_replicas. Fair share
  // 3 replicas (e.g. ⌈64 GPUs / 22 jobs⌉): 1 replica → 1/3, 2 → 2/3, whatever its goodput. A job that
  // has run is measured against its goodput on one node at its base replicas: there, exactly 1.
  const PolluxSpeedModel speed(kPolluxTables);
  const PolluxGoodput goodput(speed);
  const JobRecord cifar = job("cifar10");
  const auto speedup = pollux_speedup_function({goodput.rates(cifar, 0), goodput.rates(cifar, 0)}, {3, 3}, {1, 0}, 3);
  EXPECT_DOUBLE_EQ(speedup(0, 1, 1), 1.0 / 3);
  EXPECT_DOUBLE_EQ(speedup(0, 1, 2), 2.0 / 3);
  EXPECT_DOUBLE_EQ(speedup(1, 1, 3), 1.0);
  EXPECT_GT(speedup(1, 1, 1), 1.0 / 3);  // sub-linear scaling: one GPU does more than a third of three
}

TEST(PolluxGoodput, ASettingsFileWithoutItsColumnsIsALocatedError) {
  const PolluxSpeedModel speed(kPolluxTables);
  PolluxGoodput goodput(speed);
  const std::string file = testing::write_file("applications.csv", "application,max_local_bsz\ncifar10,64\n");
  const auto diagnostics = testing::diagnostics_thrown_by([&] { goodput.read_settings(file); });
  // Both missing columns, at once, at the header.
  ASSERT_EQ(diagnostics.size(), 2u) << testing::dump(diagnostics);
  EXPECT_EQ(diagnostics[0].location.file, file);
  testing::expect_error(diagnostics[0], 1, 1, "missing column 'fixed_batch_size'");
  testing::expect_error(diagnostics[1], 1, 1, "missing column 'max_replicas'");
}

// A misspelt column name is located at its header cell, as the column it stands for
// ("application,max_local_bsz,fixed_batch_size,max_replica": the fourth cell starts at column 44).
TEST(PolluxGoodput, AMisspeltColumnIsLocatedAtItsHeaderCell) {
  const PolluxSpeedModel speed(kPolluxTables);
  PolluxGoodput goodput(speed);
  const std::string file = testing::write_file(
      "applications.csv", "application,max_local_bsz,fixed_batch_size,max_replica\ncifar10,64,128,4\n");
  testing::expect_errors(testing::diagnostics_thrown_by([&] { goodput.read_settings(file); }),
                         {{1, 44, "missing column 'max_replicas'; did you mean 'max_replica'?"}});
}

// A row naming an application without tables (a misspelt 'yolov3') would leave the one meant without
// its settings: an error at the row's application field, with the nearest name. A replica count is a
// whole number: 1.5 is refused, not truncated.
TEST(PolluxGoodput, ASettingsRowsMistakesAreLocated) {
  const PolluxSpeedModel speed(kPolluxTables);
  PolluxGoodput goodput(speed);
  const std::string file = testing::write_file(
      "applications.csv", "application,max_local_bsz,fixed_batch_size,max_replicas\nncf,,32768,1.5\nyolo3,8,,\n");
  const auto diagnostics = testing::diagnostics_thrown_by([&] { goodput.read_settings(file); });
  testing::expect_errors(diagnostics,
                         {{2, 12, "max_replicas: expected an integer, found '1.5'"},
                          {3, 1, "no Pollux throughput table for application 'yolo3'; did you mean 'yolov3'?"}});
}

// A problem on `capacity` nodes with speedup(job, nodes, replicas) = f, every row new (factor 1).
PolluxProblem problem(std::vector<int> capacity, int jobs, std::function<double(int, int, int)> f, double p) {
  PolluxProblem pb;
  pb.jobs = jobs;
  pb.capacity = std::move(capacity);
  for (const int c : pb.capacity) pb.total_gpus += c;
  pb.current.rows.assign(static_cast<std::size_t>(jobs), {});
  pb.max_replicas.assign(static_cast<std::size_t>(jobs), pb.total_gpus);
  pb.factor.assign(static_cast<std::size_t>(jobs), 1.0);
  pb.speedup = std::move(f);
  pb.fairness = p;
  return pb;
}

TEST(PolluxSearch, PowerMeanFavoursEqualSplitsBelowOne) {
  // One node of 4 GPUs, speedup = replicas, scaled by nodes / GPUs = 1/4: (2, 2) → 0.5 each, (3, 1)
  // → 0.75 and 0.25. p = 1 (the sum): both 0.501. p = −1: 2 / (1/0.751 + 1/0.251) = 0.37612… < 0.501.
  const auto linear = [](int, int, int r) { return static_cast<double>(r); };
  const PolluxAllocation even{{{{0, 2}}, {{0, 2}}}}, skewed{{{{0, 3}}, {{0, 1}}}};
  const PolluxProblem sum = problem({4}, 2, linear, 1.0);
  EXPECT_NEAR(sum.fitness(even), 0.501, 1e-12);
  EXPECT_NEAR(sum.fitness(skewed), 0.501, 1e-12);
  const PolluxProblem fair = problem({4}, 2, linear, -1.0);
  EXPECT_NEAR(fair.fitness(even), 0.501, 1e-12);
  EXPECT_NEAR(fair.fitness(skewed), 2.0 / (1 / 0.751 + 1 / 0.251), 1e-12);
}

TEST(PolluxSearch, UtilityIsSpeedupPerGpuOfTheNodesInUse) {
  // pollux.py get_cluster_utilities with speedup = replicas: jobs on 2 GPUs and 1 GPU of node 0 use
  // only node 0's 4 GPUs: (2 + 1) / 4; the second job moved to node 1 makes both nodes count: 3 / 8.
  // An empty allocation uses nothing: 0.
  const PolluxProblem pb = problem(
      {4, 4}, 2, [](int, int, int r) { return static_cast<double>(r); }, -1.0);
  EXPECT_DOUBLE_EQ(pb.utility(PolluxAllocation{{{{0, 2}}, {{0, 1}}}}), 3.0 / 4);
  EXPECT_DOUBLE_EQ(pb.utility(PolluxAllocation{{{{0, 2}}, {{1, 1}}}}), 3.0 / 8);
  EXPECT_DOUBLE_EQ(pb.utility(PolluxAllocation{{{}, {}}}), 0.0);
}

TEST(PolluxSearch, RepairKeepsOneDistributedJobPerNodeAndCapacityInJobOrder) {
  PolluxProblem pb = problem(
      {4, 4}, 3, [](int, int, int r) { return static_cast<double>(r); }, -1.0);
  SplitMix64 rng(1);
  PolluxSearch search(pb, rng, PolluxOperators{true, false});
  // Jobs 0 and 1 both span nodes 0 and 1: job 1 (later in order) loses both; job 2 asks 4 on node 0
  // where job 0 holds 3: it keeps 1 (the artifact's repair would empty node 0 for it: the next test).
  PolluxAllocation a{{{{0, 3}, {1, 1}}, {{0, 1}, {1, 1}}, {{0, 4}}}};
  search.repair(a);
  EXPECT_EQ(a.rows[0], (std::vector<std::pair<int, int>>{{0, 3}, {1, 1}}));
  EXPECT_TRUE(a.rows[1].empty());
  EXPECT_EQ(a.rows[2], (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(PolluxSearch, RepairAfterSecondDistributedJobEmptiesTheNodeForEveryLaterJob) {
  // pollux.py _repair (1) as numpy runs it on jobs A {0:1, 1:1}, B {0:2}, C {0:1, 1:1}, D {0:1} (checked
  // with numpy 1.24): `mask.cumsum(axis=1) > 1` over the jobs is false up to C, the second distributed job
  // on nodes 0 and 1, and true from C on, so C loses both nodes and D, not distributed, loses node 0;
  // A and B keep theirs (3 of node 0's 4 GPUs). Without the option only C loses its nodes.
  const auto linear = [](int, int, int r) { return static_cast<double>(r); };
  const PolluxAllocation before{{{{0, 1}, {1, 1}}, {{0, 2}}, {{0, 1}, {1, 1}}, {{0, 1}}}};
  for (const bool artifact : {true, false}) {
    const PolluxProblem pb = problem({4, 4}, 4, linear, -1.0);
    SplitMix64 rng(1);
    PolluxSearch search(pb, rng, PolluxOperators{false, artifact});
    PolluxAllocation a = before;
    search.repair(a);
    EXPECT_EQ(a.rows[0], (PolluxRow{{0, 1}, {1, 1}}));
    EXPECT_EQ(a.rows[1], (PolluxRow{{0, 2}}));
    EXPECT_TRUE(a.rows[2].empty());
    EXPECT_EQ(a.rows[3], (artifact ? PolluxRow{} : PolluxRow{{0, 1}})) << "artifact: " << artifact;
  }
}

TEST(PolluxSearch, MutationRaisesPerNodeWithOddsOverTheJobs) {
  // pollux.py _mutation (3) on 4 jobs, 2 nodes of 4 GPUs, jobs 0 and 1 holding 1 GPU each on node 0 (the
  // individual is the current allocation, so the reset of step (1) changes nothing). Node 1 is empty:
  // each job is raised there with prob1 = 1 / 4 (the 4 jobs fit), to a count uniform in 0…4, so it gains
  // a replica there with 1/4 · 4/5 = 0.2. On node 0 (2 GPUs free) job 0 is raised with prob1 + prob2 −
  // prob1·prob2 = 1/4 + 1/2 − 1/8 = 5/8 (prob2 = 1 / the 2 jobs on it), to 1…4 uniformly, so it rises
  // above 1 with 5/8 · 3/4 = 15/32 (step (2) zeroes the entry with 0.1 · 0.1 = 0.01: at most 0.01 off).
  // dnnsim's per-job odds give 1/2 · 4/5 = 0.4 and 3/4 instead.
  PolluxProblem pb = problem(
      {4, 4}, 4, [](int, int, int r) { return static_cast<double>(r); }, -1.0);
  pb.current.rows[0] = {{0, 1}};
  pb.current.rows[1] = {{0, 1}};
  SplitMix64 rng(3);
  PolluxSearch search(pb, rng, PolluxOperators{true, false});
  constexpr int kTrials = 20000;
  int on_node1 = 0, job0_raised = 0;
  for (int t = 0; t < kTrials; ++t) {
    PolluxAllocation a = pb.current;
    search.mutate(a);
    for (const PolluxRow& row : a.rows)
      on_node1 += std::count_if(row.begin(), row.end(), [](const auto& e) { return e.first == 1; });
    job0_raised += !a.rows[0].empty() && a.rows[0].front().first == 0 && a.rows[0].front().second > 1;
  }
  EXPECT_NEAR(static_cast<double>(on_node1) / (4.0 * kTrials), 0.2, 0.01);
  EXPECT_NEAR(static_cast<double>(job0_raised) / kTrials, 15.0 / 32, 0.02);
}

TEST(PolluxSearch, UncontendedJobsEachTakeTheirBestReplicas) {
  // Speedups rise to 3 replicas then fall: on 2 × 8 GPUs both jobs fit at 3, each on one node (best fit).
  const auto peaked = [](int, int nodes, int r) { return nodes > 1 ? 0.0 : 3.0 - std::abs(r - 3); };
  const PolluxProblem pb = problem({8, 8}, 2, peaked, -1.0);
  const auto chosen = pollux_uncontended(pb);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->rows[0], (std::vector<std::pair<int, int>>{{0, 3}}));
  EXPECT_EQ(chosen->rows[1], (std::vector<std::pair<int, int>>{{0, 3}}));
  // Three such jobs on one node of 8 do not fit at 3 each: the search has to decide.
  EXPECT_FALSE(pollux_uncontended(problem({8}, 3, peaked, -1.0)));
}

// Every allocation of `jobs` single-node rows on `capacity` (each job on at most one node here, as the
// speedups make spanning worthless), the best fitness.
double enumerate(const PolluxProblem& pb) {
  double best = 0.0;
  PolluxAllocation a;
  a.rows.assign(static_cast<std::size_t>(pb.jobs), {});
  std::vector<int> room = pb.capacity;
  std::function<void(int)> go = [&](int j) {
    if (j == pb.jobs) {
      best = std::max(best, pb.fitness(a));
      return;
    }
    a.rows[static_cast<std::size_t>(j)].clear();
    go(j + 1);
    for (int n = 0; n < pb.nodes(); ++n)
      for (int r = 1; r <= room[static_cast<std::size_t>(n)]; ++r) {
        a.rows[static_cast<std::size_t>(j)] = {{n, r}};
        room[static_cast<std::size_t>(n)] -= r;
        go(j + 1);
        room[static_cast<std::size_t>(n)] += r;
      }
    a.rows[static_cast<std::size_t>(j)].clear();
  };
  go(0);
  return best;
}

// Four jobs on 2 × 4 GPUs with concave speedups of different scales; spanning nodes is worthless.
double concave(int j, int nodes, int r) { return nodes > 1 ? 0.0 : (1.0 + j) * std::sqrt(static_cast<double>(r)); }

TEST(PolluxSearch, GeneticSearchReachesTheEnumeratedOptimum) {
  const PolluxProblem pb = problem({4, 4}, 4, concave, -1.0);
  const double optimum = enumerate(pb);
  SplitMix64 rng(7);
  PolluxSearch search(pb, rng);
  const auto population = search.run({pb.current}, PolluxSearchOptions{100, 100, 20});
  EXPECT_NEAR(pb.fitness(population.front()), optimum, 1e-9 * optimum);
}

TEST(PolluxSearch, NsgaTwoReturnsANonDominatedFrontHeadedByTheEnumeratedOptimum) {
  // The artifact's NSGA-II on (power mean, utility): the best power mean is never dominated, so it
  // survives in the first front and heads the result; no returned allocation dominates another.
  const PolluxProblem pb = problem({4, 4}, 4, concave, -1.0);
  SplitMix64 rng(7);
  PolluxSearch search(pb, rng);
  PolluxSearchOptions options{100, 100, 100};
  options.nsga2 = true;
  const auto front = search.run({pb.current}, options);
  ASSERT_FALSE(front.empty());
  const double optimum = enumerate(pb);
  EXPECT_NEAR(pb.fitness(front.front()), optimum, 1e-9 * optimum);
  for (const auto& a : front)
    for (const auto& b : front) {
      const bool dominates = pb.fitness(a) >= pb.fitness(b) && pb.utility(a) >= pb.utility(b) &&
                             (pb.fitness(a) > pb.fitness(b) || pb.utility(a) > pb.utility(b));
      EXPECT_FALSE(dominates);
    }
}

TEST(PolluxSearch, MarginalAllocationReachesTheEnumeratedOptimumOnConcaveSpeedups) {
  // Each job's summand −1/(c·√r + 10⁻³) is concave in r, so handing out GPUs by marginal gain is exact
  // (Ibaraki & Katoh ch. 4) — and here the counts pack on the two nodes.
  const PolluxProblem pb = problem({4, 4}, 4, concave, -1.0);
  EXPECT_NEAR(pb.fitness(pollux_marginal(pb)), enumerate(pb), 1e-12);
}

TEST(PolluxSearch, MarginalAllocationKeepsARowWhoseMoveDoesNotPay) {
  // Job 0 runs on 1 GPU of 4; a move multiplies its speedup by 0.1 (a young job). Speedup = replicas,
  // scaled by 1/4: kept, its 1 GPU gives 0.25; moved, even 3 GPUs give 0.075. Job 1 (new) takes the
  // other 3 GPUs (0.75): changing job 0 cannot pay, so its row stays and job 1 is placed beside it.
  PolluxProblem pb = problem(
      {4}, 2, [](int, int, int r) { return static_cast<double>(r); }, -1.0);
  pb.current.rows[0] = {{0, 1}};
  pb.factor[0] = 0.1;
  const PolluxAllocation chosen = pollux_marginal(pb);
  EXPECT_EQ(chosen.rows[0], (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(chosen.rows[1], (std::vector<std::pair<int, int>>{{0, 3}}));
}

}  // namespace
}  // namespace dnnsim
