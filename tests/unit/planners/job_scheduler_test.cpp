// Built-in schedulers on hand-built ClusterStates (the five-job timelines of FIFO, SJF, SRTF and
// Tiresias are end to end in tests/component/cluster_run_test.cpp).
#include <gtest/gtest.h>

#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/job_speed.hpp"

namespace dnnsim {
namespace {

struct Fixture {
  std::vector<JobRecord> records;
  ClusterState state;
  SchedulerParams params;
  DurationSpeedModel speed;
  std::unique_ptr<PlacementPolicy> placement = builtin_placements().at("consolidated").value(0);

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
  std::vector<Decision> decide(const std::string& name) {
    auto scheduler = builtin_schedulers().at(name).value(SchedulerContext{params, *placement, speed, 0});
    return scheduler->decide(state, SchedulerEvent::arrival);
  }
};

std::vector<JobId> started(const std::vector<Decision>& decisions) {
  std::vector<JobId> ids;
  for (const Decision& d : decisions)
    if (d.kind == Decision::Kind::start) ids.push_back(d.job);
  return ids;
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
  f.params.set("srtf_weight", {0.0});
  EXPECT_EQ(started(f.decide("tetris")), (std::vector<JobId>{1, 0}));
}

// Optimus with placement-independent speed (duration model: 1 it/s whatever the GPUs) gains nothing
// from a second GPU, so every job gets exactly one.
TEST(JobSchedulers, OptimusGivesNoGpuWithoutGain) {
  Fixture f(4, {{"", 2, 10}, {"", 2, 20}});
  const auto decisions = f.decide("optimus");
  ASSERT_EQ(decisions.size(), 2u);
  for (const Decision& d : decisions) EXPECT_EQ(d.placement.gpus(), 1);
}

// An unknown option is left unread, for the scenario reader to report.
TEST(JobSchedulers, UnknownOptionIsUnused) {
  Fixture f(4, {{"", 1, 10}});
  f.params.set("thresholds", {100.0});
  f.params.set("treshold", {1.0});
  (void)f.decide("tiresias-las");
  EXPECT_EQ(f.params.unused(), (std::vector<std::string>{"treshold"}));
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
            (std::vector<std::string>{"fifo", "fifo-backfill", "sjf", "srtf", "tiresias-las", "tiresias-gittins", "gandiva",
                                      "optimus", "drf", "tetris", "qssf", "gadget", "gadget-energy", "gadget-fair"}));
}

}  // namespace
}  // namespace dnnsim
