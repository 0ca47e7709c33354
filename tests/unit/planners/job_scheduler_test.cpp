// Built-in schedulers on hand-built ClusterStates (the five-job timelines of FIFO, SJF, SRTF and
// Tiresias are end to end in tests/component/cluster_run_test.cpp).
#include "planners/jobs/job_scheduler.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "dnnsim/source_paths.hpp"
#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/measured_speed.hpp"
#include "planners/jobs/priority_allocation.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

struct Fixture {
  std::vector<JobRecord> records;
  ClusterState state;
  DurationSpeedModel speed;
  std::unique_ptr<PlacementPolicy> placement = testing::make_placement("consolidated");

  // One server of `gpus` GPUs; jobs (user, GPUs, duration), all queued at t = 0.
  Fixture(int gpus, std::vector<std::tuple<std::string, int, double>> jobs) {
    state.servers = {ServerInfo{0, gpus, "V100", 1.0}};
    state.free_gpus = {gpus};
    records.reserve(jobs.size());
    for (const auto& [user, n, duration] : jobs) {
      JobRecord record;
      record.id = "j" + std::to_string(records.size());
      record.user = user;
      record.gpus = n;
      record.duration = Seconds(duration);
      records.push_back(record);
    }
    for (std::size_t i = 0; i < records.size(); ++i) {
      JobView view;
      view.id = i;
      view.record = &records[i];
      view.gpus = records[i].gpus;
      view.total_iterations = records[i].duration.value();
      view.solo_rate = 1.0;
      state.queued.push_back(view);
    }
  }
  std::vector<Decision> decide(const std::string& name, testing::OptionValues options = {}) {
    return testing::make_scheduler(name, speed, *placement, options)->decide(state, SchedulerEvent::arrival);
  }
};

std::vector<JobId> started(const std::vector<Decision>& decisions) {
  std::vector<JobId> ids;
  for (const Decision& d : decisions)
    if (d.kind == Decision::Kind::start) ids.push_back(d.job);
  return ids;
}

// One second per iteration; co-located slowdowns from a table (victim id, aggressor id).
class TablePackingSpeed final : public JobSpeedModel {
 public:
  explicit TablePackingSpeed(std::map<std::pair<std::string, std::string>, double> slowdowns)
      : slowdowns_(std::move(slowdowns)) {}
  IterationCost iteration(const JobRecord&, const Placement&, const std::vector<ServerInfo>&) const override {
    return IterationCost{Seconds(1), Seconds(0), Bytes(0)};
  }
  std::optional<double> packed_slowdown(const JobRecord& victim, const JobRecord& aggressor,
                                        const std::string&) const override {
    const auto it = slowdowns_.find({victim.id, aggressor.id});
    return it == slowdowns_.end() ? std::nullopt : std::optional<double>(it->second);
  }

 private:
  std::map<std::pair<std::string, std::string>, double> slowdowns_;
};

// Two GPUs, both busy with single-GPU jobs j0 and j1; j2 (1 GPU) and j3 (2 GPUs) wait. Gandiva with
// packing, on an arrival, given the co-located slowdowns `table` (victim, aggressor) and the least
// throughput of a packed pair.
std::vector<Decision> gandiva_packing(const std::map<std::pair<std::string, std::string>, double>& table,
                                      double min_throughput = 1.0) {
  Fixture f(2, {{"u", 1, 10}, {"u", 1, 10}, {"u", 1, 10}, {"u", 2, 10}});
  for (int k = 0; k < 2; ++k) {
    f.state.running.push_back(f.state.queued.front());
    f.state.queued.erase(f.state.queued.begin());
    f.state.running.back().placement = Placement{{{0, 1}}};
  }
  f.state.free_gpus = {0};
  const TablePackingSpeed speed(table);
  return testing::make_scheduler("gandiva", speed, *f.placement,
                                 {{"packing", true}, {"min_throughput", min_throughput}})
      ->decide(f.state, SchedulerEvent::arrival);
}

// The errors of making scheduler `name` (on the duration speed model) with `option` set at `where`.
std::vector<Diagnostic> construction_errors(const std::string& name, const char* option, OptionValue value,
                                            const SourceLocation& where) {
  Fixture f(4, {{"", 1, 10}});
  Options options = testing::options_of(builtin_schedulers(), name);
  options.set(option, std::move(value), where);
  return testing::diagnostics_thrown_by([&] {
    (void)builtin_schedulers().at(name).value(SchedulerContext{options, *f.placement, f.speed, 0});
  });
}

// Beside j0, j2 and j0 each run 1.5× slower: 1/1.5 + 1/1.5 = 1.33 jobs' worth of throughput; beside
// j1, 1.2× and 1.8×: 1/1.2 + 1/1.8 = 1.39. j2 goes on j1's GPU; j3 (2 GPUs) is never packed.
TEST(JobSchedulers, GandivaPacksOntoTheBestPartner) {
  const auto decisions =
      gandiva_packing({{{"j2", "j0"}, 1.5}, {{"j0", "j2"}, 1.5}, {{"j2", "j1"}, 1.2}, {{"j1", "j2"}, 1.8}});
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].kind, Decision::Kind::pack);
  EXPECT_EQ(decisions[0].job, 2u);
  EXPECT_EQ(decisions[0].partner, 1u);
}

// Every pair 2× slower: 1/2 + 1/2 = 1 job's worth, no gain: nothing is packed.
TEST(JobSchedulers, GandivaDoesNotPackAPairThatDoesNotPay) {
  EXPECT_TRUE(gandiva_packing({{{"j2", "j0"}, 2}, {{"j0", "j2"}, 2}, {{"j2", "j1"}, 2}, {{"j1", "j2"}, 2}}).empty());
}

// The table of GandivaPacksOntoTheBestPartner with a higher bar: beside j1 the pair gives 1.39 (above
// 1.35, below 1.4), beside j0 1.33 (below both).
TEST(JobSchedulers, GandivaPacksOnlyPairsAboveItsThroughputBar) {
  const std::map<std::pair<std::string, std::string>, double> table = {
      {{"j2", "j0"}, 1.5}, {{"j0", "j2"}, 1.5}, {{"j2", "j1"}, 1.2}, {{"j1", "j2"}, 1.8}};
  const auto packed = gandiva_packing(table, 1.35);
  ASSERT_EQ(packed.size(), 1u);
  EXPECT_EQ(packed[0].partner, 1u);
  EXPECT_TRUE(gandiva_packing(table, 1.4).empty());
}

// A packed pair holds one GPU: in a preemptive allocation both keep running for one GPU of budget,
// and when a waiting job outranks them both lose and the GPU is freed once, for it.
TEST(JobSchedulers, PackedPairCountsOneGpu) {
  Fixture f(1, {{"u", 1, 10}, {"u", 1, 10}, {"u", 1, 10}});
  for (int k = 0; k < 2; ++k) {
    f.state.running.push_back(f.state.queued.front());
    f.state.queued.erase(f.state.queued.begin());
    f.state.running.back().placement = Placement{{{0, 1}}};
  }
  f.state.running[0].packed_with = 1;
  f.state.running[1].packed_with = 0;
  f.state.free_gpus = {0};
  EXPECT_TRUE(allocate_in_order(f.state, {0, 1, 2}, *f.placement, AllocationMode::preemptive).empty());
  const auto decisions = allocate_in_order(f.state, {2, 0, 1}, *f.placement, AllocationMode::preemptive);
  ASSERT_EQ(decisions.size(), 3u);
  EXPECT_EQ(decisions[0].kind, Decision::Kind::preempt);
  EXPECT_EQ(decisions[1].kind, Decision::Kind::preempt);
  EXPECT_EQ(decisions[2].kind, Decision::Kind::start);
  EXPECT_EQ(decisions[2].job, 2u);
}

// DRF over users: alice's two jobs and bob's one, 1 GPU each, 2 GPUs: alice's first job, then bob's
// (alice already holds 1 GPU, bob 0), not alice's second.
TEST(JobSchedulers, DrfAlternatesUsers) {
  Fixture f(2, {{"alice", 1, 10}, {"alice", 1, 10}, {"bob", 1, 10}});
  EXPECT_EQ(started(f.decide("drf")), (std::vector<JobId>{0, 2}));
}

// Tetris with srtf_weight 0 is pure packing: the largest job that fits first (alignment ∝ demand).
TEST(JobSchedulers, TetrisPacksLargestFirstWithoutSrtfTerm) {
  Fixture f(4, {{"", 1, 10}, {"", 3, 100}, {"", 2, 5}});
  EXPECT_EQ(started(f.decide("tetris", {{"srtf_weight", 0.0}})), (std::vector<JobId>{1, 0}));
}

// Optimus with placement-independent speed (duration model: 1 it/s whatever the GPUs) gains nothing
// from a second GPU, so every job gets exactly one.
TEST(JobSchedulers, OptimusGivesNoGpuWithoutGain) {
  Fixture f(4, {{"", 2, 10}, {"", 2, 20}});
  const auto decisions = f.decide("optimus");
  ASSERT_EQ(decisions.size(), 2u);
  for (const Decision& d : decisions) EXPECT_EQ(d.placement.gpus(), 1);
}

// Optimus+Oracle+TunedJobs as Pollux's artifact: two cifar10 jobs asking 1 GPU each at batch 64, one
// 4-GPU server, Pollux's tables. Requested: each stays at its 1 GPU. max_gpus batch: each may grow to
// ⌊64 / 32⌋ = 2 replicas (32: cifar10's smallest measured local batch), and does, since
// placements.csv gives 0.0598 s at (1 GPU, local 64) and 0.0490 s at (2 GPUs, local 32): a positive
// gain, and the third GPU is over the cap. An application the settings file caps (max_replicas 1, as
// the artifact's ncf) stays at 1.
TEST(JobSchedulers, OptimusGrowsToTheBatchLimitAsPolluxArtifact) {
  const PolluxSpeedModel tables(DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21/throughput");
  const std::string settings = testing::write_file("applications.csv",
                                                   "application,max_local_bsz,fixed_batch_size,max_replicas\n"
                                                   "cifar10,,,1\n");
  for (const std::string mode : {"requested", "batch", "capped"}) {
    Fixture f(4, {{"", 1, 1000}, {"", 1, 1000}});
    for (JobRecord& record : f.records) {
      record.model = "cifar10";
      record.batch_size = 64;
    }
    auto scheduler = mode == "capped"
                         ? testing::make_scheduler("optimus", tables, *f.placement,
                                                   {{"max_gpus", std::string("batch")}, {"applications", settings}})
                         : testing::make_scheduler("optimus", tables, *f.placement, {{"max_gpus", mode}});
    const auto decisions = scheduler->decide(f.state, SchedulerEvent::round);
    ASSERT_EQ(decisions.size(), 2u) << mode;
    for (const Decision& d : decisions) EXPECT_EQ(d.placement.gpus(), mode == "batch" ? 2 : 1) << mode;
  }
}

// place_order (the artifact's optimus.py places new allocations sorted by num_replicas): two servers
// with 2 and 1 free GPUs, least-loaded placement, Pollux's tables; cifar10 job 0 at batch 64 may grow to
// ⌊64 / 32⌋ = 2 replicas and gains from the second (0.0598 → 0.0490 s, test above), job 1 at batch 32
// stays at 1: counts 2 and 1 use the 3 GPUs. Arrival order: job 0 takes server 0's 2 GPUs, job 1
// server 1. Fewest GPUs first: job 1 takes the emptier server 0 (2 free), leaving 1 + 1, so job 0 is
// split over both servers.
TEST(JobSchedulers, OptimusPlacesFewestGpusFirstAsPolluxArtifact) {
  const PolluxSpeedModel tables(DNNSIM_SOURCE_DIR "/data/traces/pollux-osdi21/throughput");
  const auto placement = testing::make_placement("least-loaded");
  for (const std::string order : {"arrival", "fewest-gpus"}) {
    Fixture f(3, {{"", 1, 1000}, {"", 1, 1000}});
    f.state.servers = {ServerInfo{0, 2, "V100", 1.0}, ServerInfo{1, 1, "V100", 1.0}};
    f.state.free_gpus = {2, 1};
    for (JobRecord& record : f.records) record.model = "cifar10";
    f.records[0].batch_size = 64;
    f.records[1].batch_size = 32;
    auto scheduler = testing::make_scheduler("optimus", tables, *placement,
                                             {{"max_gpus", std::string("batch")}, {"place_order", order}});
    std::map<JobId, Placement> where;
    for (const Decision& d : scheduler->decide(f.state, SchedulerEvent::round)) where[d.job] = d.placement;
    ASSERT_EQ(where.size(), 2u) << order;
    using Slices = std::vector<std::pair<int, int>>;
    EXPECT_EQ(where[0].slices, (order == "arrival" ? Slices{{0, 2}} : Slices{{0, 1}, {1, 1}})) << order;
    EXPECT_EQ(where[1].slices, (order == "arrival" ? Slices{{1, 1}} : Slices{{0, 1}})) << order;
  }
}

// max_gpus batch without Pollux's tables: a located error at the option.
TEST(JobSchedulers, OptimusBatchLimitNeedsPolluxTables) {
  testing::expect_errors(
      construction_errors("optimus", "max_gpus", std::string("batch"), SourceLocation{"s.yaml", 3, 9}),
      {{3, 9, "max_gpus: batch needs workload.speed"}});
}

// rounds_only (Pollux's artifact calls its policies only every 60 s): an arrival starts nothing, the
// next round starts the job.
TEST(JobSchedulers, RoundsOnlyDecidesAtRounds) {
  for (const std::string name : {"tiresias-las", "optimus"}) {
    Fixture f(4, {{"", 2, 10}});
    auto scheduler = testing::make_scheduler(name, f.speed, *f.placement, {{"rounds_only", true}});
    EXPECT_TRUE(scheduler->decide(f.state, SchedulerEvent::arrival).empty()) << name;
    EXPECT_TRUE(scheduler->decide(f.state, SchedulerEvent::completion).empty()) << name;
    EXPECT_EQ(started(scheduler->decide(f.state, SchedulerEvent::round)), std::vector<JobId>{0}) << name;
  }
}

// Pollux's artifact Tiresias (tiresias.py): two queues split at 16 GPU-hours = 57,600 GPU·s, a job
// demoted once executed time × GPUs ≥ the threshold. One 4-GPU server; job 0 runs on all 4 GPUs, job
// 1 (4 GPUs, no service) waits. At 57,596 GPU·s (14,399 s × 4) job 0 is still in Q0 and first by
// arrival: nothing changes. At 57,600 (14,400 s × 4) it is in Q1: job 1 (Q0) preempts it.
TEST(JobSchedulers, TiresiasDemotesAtTheArtifactsThreshold) {
  for (const double service : {57596.0, 57600.0}) {
    Fixture f(4, {{"", 4, 1e5}, {"", 4, 1e5}});
    JobView running = f.state.queued[0];
    running.placement = Placement{{{0, 4}}};
    running.attained = Seconds(service / 4);
    running.attained_gpu_seconds = service;
    f.state.queued.erase(f.state.queued.begin());
    f.state.running = {running};
    f.state.free_gpus = {0};
    const auto decisions = f.decide("tiresias-las", {{"thresholds", std::vector<double>{57600.0}}});
    if (service < 57600.0) {
      EXPECT_TRUE(decisions.empty());
    } else {
      ASSERT_EQ(decisions.size(), 2u);
      EXPECT_EQ(decisions[0].kind, Decision::Kind::preempt);
      EXPECT_EQ(decisions[0].job, 0u);
      EXPECT_EQ(started(decisions), std::vector<JobId>{1});
    }
  }
}

// Tiresias' thresholds must increase: a located error at the option (the reader gives its place).
TEST(JobSchedulers, TiresiasThresholdsMustIncrease) {
  testing::expect_errors(construction_errors("tiresias-las", "thresholds", std::vector<double>{200.0, 100.0},
                                             SourceLocation{"s.yaml", 7, 15}),
                         {{7, 15, "scheduler 'tiresias-las': Tiresias thresholds must increase"}});
}

// One GPU; job 0 (1,000 s, waiting, 0 GPU·s attained) and job 1 (10 s, running, 5 GPU·s attained), both
// in queue 0 (< 3,250 GPU·s). LAS serves queue 0 by arrival: job 0, preempting job 1. 2D-Gittins over
// the sizes {10, 1000} with Δ up to 3,250: G(job 1) = (2/2)/((5 + 995)/2) = 0.002 >
// G(job 0) = (2/2)/((10 + 1000)/2) = 0.00198, so job 1 keeps the GPU.
TEST(JobSchedulers, GittinsKeepsTheLikelyShortJobWhereLasPreemptsIt) {
  for (const std::string name : {"tiresias-las", "tiresias-gittins"}) {
    Fixture f(1, {{"", 1, 1000}, {"", 1, 10}});
    JobView running = f.state.queued[1];
    running.placement = Placement{{{0, 1}}};
    running.attained = Seconds(5);
    running.attained_gpu_seconds = 5;
    running.done_iterations = 5;
    f.state.queued.pop_back();
    f.state.running = {running};
    f.state.free_gpus = {0};
    const auto decisions = f.decide(name);
    if (name == "tiresias-las") {
      ASSERT_EQ(decisions.size(), 2u);
      EXPECT_EQ(decisions[0].kind, Decision::Kind::preempt);
      EXPECT_EQ(decisions[1].job, 0u);
    } else {
      EXPECT_TRUE(decisions.empty());
    }
  }
}

TEST(JobSchedulers, RegistryListsEveryBuiltin) {
  EXPECT_EQ(builtin_schedulers().names(),
            (std::vector<std::string>{"fifo", "fifo-backfill", "sjf", "srtf", "tiresias-las", "tiresias-gittins",
                                      "gandiva", "optimus", "drf", "tetris", "qssf", "gadget", "gadget-energy",
                                      "gadget-fair", "smd", "online-ps", "pollux", "marl"}));
}

}  // namespace
}  // namespace dnnsim
