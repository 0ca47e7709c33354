// The multi-agent scheduler's parts without an engine: the policy file, the actor-critic machinery on
// a two-armed bandit, the reward accounting, and the scheduler's action masks on hand-built states.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/marl/marl_scheduler.hpp"
#include "planners/jobs/marl/policy.hpp"
#include "planners/jobs/marl/teacher.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

// One server of two free GPUs in one rack, one candidate job; actions: place it on the server (0),
// pack it (1, masked), stop (2).
MarlObservation bandit_observation() {
  MarlObservation o;
  o.servers = 1;
  o.racks = 1;
  o.candidates = 1;
  o.gpu.assign(2 * MarlObservation::kGpuFeatures, 0.0f);
  o.gpu_server = {0, 0};
  o.server.assign(MarlObservation::kServerFeatures, 1.0f);
  o.server_rack = {0};
  o.job.assign(MarlObservation::kJobFeatures, 0.5f);
  o.place_action.assign(MarlObservation::kActionFeatures, 1.0f);
  o.pack_action.assign(MarlObservation::kActionFeatures, 0.0f);
  o.queue.assign(MarlObservation::kQueueFeatures, 0.5f);
  o.mask = {1, 0, 1};
  return o;
}

TEST(MarlPolicy, SavedAndLoadedPoliciesAgree) {
  const MarlPolicy policy(7);
  const auto path = (testing::test_dir() / "p.pt").string();
  policy.save(path, "2 servers: 0:2×V100 1:2×V100", "when_no_local_fit");
  const MarlPolicy loaded = MarlPolicy::load(path);
  EXPECT_EQ(loaded.parameter_count(), policy.parameter_count());
  EXPECT_EQ(loaded.cluster(), "2 servers: 0:2×V100 1:2×V100");
  EXPECT_EQ(loaded.remote(), "when_no_local_fit");
  // A file written before the `remote` option (no third line) was trained with its first value.
  std::ifstream in(path, std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  const std::string line = "remote: when_no_local_fit\n";
  bytes.erase(bytes.find(line), line.size());
  const MarlPolicy older = MarlPolicy::load(testing::write_file("older.pt", bytes));
  EXPECT_EQ(older.remote(), "when_partition_full");
  EXPECT_TRUE(older.trained_with_remote("when_partition_full"));
  EXPECT_FALSE(older.trained_with_remote("when_no_local_fit"));
  auto o = bandit_observation();
  EXPECT_EQ(loaded.greedy(o), policy.greedy(o));
  o.mask = {0, 0, 1};  // only stop is feasible
  EXPECT_EQ(loaded.greedy(o), 2);
  EXPECT_THROW((void)MarlPolicy::load(testing::write_file("bad.pt", "not a policy")), std::runtime_error);
  // A policy of the first version (one job per move, its first line without the format's number) has
  // other weights: refused by its header, before libtorch reads it.
  EXPECT_THROW((void)MarlPolicy::load(testing::write_file("v1.pt", "dnnsim marl policy\ncluster: \n")),
               std::runtime_error);
}

// Reward = −load·Δt/3600 to the latest step: the interval before the first step is dropped, the one
// after the last is closed by finish(). Here: dropped −0.5·1 h, then −1.0·2 h, then −0.25·4 h.
TEST(MarlPolicy, RewardIsMinusTheLoadOverTimeOfTheLatestStep) {
  const MarlPolicy policy(1);
  LearningEpisode episode(policy, 3);
  episode.advance(0, 0.5);
  episode.advance(3600, 1.0);
  (void)episode.sample(bandit_observation(), 0.0);
  episode.advance(3 * 3600, 0.25);
  (void)episode.sample(bandit_observation(), 0.0);
  const auto result = episode.finish(7 * 3600);
  EXPECT_EQ(result.steps, 2u);
  EXPECT_NEAR(result.episode_return, -(1.0 * 2 + 0.25 * 4), 1e-12);
  EXPECT_EQ(result.gradient.size(), policy.parameter_count());
}

// Potential-based shaping (Ng et al. 1999) telescopes: with F_k = γ^Δt·Φ_{k+1} − Φ_k and Φ = 0 after
// the last step, G_k(shaped) = G_k(unshaped) − Φ_k for every k, whatever Φ of the later steps. Two
// episodes with the same seed and observations (hence the same actions and rewards), one with Φ = 0,
// one with Φ = (−3, −5, −2) at steps 1, 2 and 4 hours apart: their returns differ by 3, 5 and 2.
TEST(MarlPolicy, PotentialShapingShiftsEachReturnByMinusItsPotential) {
  const MarlPolicy policy(1);
  const auto run = [&](const std::vector<double>& potential) {
    LearningEpisode episode(policy, 3);
    double t = 0;
    for (const double phi : potential) {
      episode.advance(t, 0.5);
      (void)episode.sample(bandit_observation(), phi);
      t += 2 * 3600;
    }
    return episode.finish(t);
  };
  const auto plain = run({0, 0, 0});
  const auto shaped = run({-3, -5, -2});
  ASSERT_EQ(plain.returns.size(), 3u);
  ASSERT_EQ(shaped.returns.size(), 3u);
  EXPECT_NEAR(shaped.returns[0] - plain.returns[0], 3.0, 1e-9);
  EXPECT_NEAR(shaped.returns[1] - plain.returns[1], 5.0, 1e-9);
  EXPECT_NEAR(shaped.returns[2] - plain.returns[2], 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(shaped.episode_return, plain.episode_return);  // the reported return is unshaped
}

// A two-armed bandit through the whole training path (sampling, returns, advantages, flattened
// gradients, Adam): stopping puts load 1 on the next hour (reward −1), placing load 0 (reward 0), so
// the policy gradient must move the greedy action to "place". 8 steps per episode, 60 updates.
TEST(MarlPolicy, ActorCriticLearnsTheBetterArm) {
  MarlPolicy policy(11);
  MarlTrainingOptions options;
  options.learning_rate = 1e-2;
  MarlOptimizer optimizer(policy, options.learning_rate);
  const auto o = bandit_observation();
  double first_return = 0, last_return = 0;
  for (int update = 0; update < 60; ++update) {
    LearningEpisode episode(policy, 100 + update, options);
    double t = 0;
    for (int k = 0; k < 8; ++k) {
      const int action = episode.sample(o, 0.0);
      episode.advance(t, action == 0 ? 0.0 : 1.0);
      t += 3600;
      episode.advance(t, 0.0);
    }
    const auto result = episode.finish(t);
    if (update == 0) first_return = result.episode_return;
    last_return = result.episode_return;
    optimizer.apply(result.gradient);
  }
  EXPECT_EQ(policy.greedy(o), 0);
  EXPECT_GT(last_return, first_return);
}

struct MarlFixture {
  std::vector<JobRecord> records;
  ClusterState state;
  std::string policy;
  DurationSpeedModel speed;
  std::unique_ptr<PlacementPolicy> placement = testing::make_placement("consolidated");

  // Two servers of two GPUs on racks 0 and 1; `queued` one-GPU jobs waiting; two agents.
  explicit MarlFixture(int queued) {
    state.servers = {ServerInfo{0, 2, "V100", 1.0}, ServerInfo{1, 2, "V100", 1.0}};
    state.free_gpus = {2, 2};
    records.resize(static_cast<std::size_t>(queued));
    for (int i = 0; i < queued; ++i) {
      records[static_cast<std::size_t>(i)].id = "j" + std::to_string(i);
      JobView view;
      view.id = static_cast<JobId>(i);
      view.record = &records[static_cast<std::size_t>(i)];
      view.total_iterations = 100;
      view.solo_rate = 1;
      state.queued.push_back(view);
    }
    policy = (testing::test_dir() / "policy.pt").string();
    MarlPolicy(5).save(policy, "", "");
  }
  // Two agents on the untrained policy, arriving jobs dispatched by `dispatch`.
  std::unique_ptr<JobScheduler> scheduler(const std::string& dispatch = "job_id") {
    return testing::make_scheduler("marl", speed, *placement,
                                   {{"policy", policy}, {"agents", std::int64_t{2}}, {"dispatch", dispatch}});
  }
  std::vector<Decision> decide() { return scheduler()->decide(state, SchedulerEvent::arrival); }
  // The decisions of the `consolidate` teacher (a training episode that imitates it) under `remote`:
  // what the mask offers, decided by a rule instead of random weights.
  std::vector<Decision> teach(const std::string& remote) {
    MarlTrainingOptions imitation;
    imitation.teacher = *marl_teacher("consolidate");
    const MarlPolicy weights(5);  // unused: the teacher acts
    LearningEpisode episode(weights, 1, imitation);
    const Options options = testing::options_of(builtin_schedulers(), "marl",
                                                {{"policy", policy}, {"agents", std::int64_t{2}}, {"remote", remote}});
    return builtin_schedulers()
        .at("marl")
        .value(SchedulerContext{options, *placement, speed, 0, &episode})
        ->decide(state, SchedulerEvent::arrival);
  }
  // Job `id` runs on `gpus` GPUs of `server`.
  void run(std::size_t id, int server, int gpus) {
    JobView job = state.queued[id];
    job.placement = Placement{{{server, gpus}}};
    job.gpus = gpus;
    state.running.push_back(job);
    state.free_gpus[static_cast<std::size_t>(server)] -= gpus;
  }
};

// A policy records the cluster it was trained on (rack:GPUs×type per server): another cluster's is a
// located error at the `policy` option, an untrained one (no cluster) fits any.
TEST(MarlPolicy, APolicyOfAnotherClusterIsRefusedAtItsOption) {
  MarlFixture f(1);
  EXPECT_EQ(marl_cluster_key(f.state.servers), "2 servers: 0:2×V100 1:2×V100");
  MarlPolicy(5).save(f.policy, "1 servers: 0:4×P100", "when_partition_full");
  const Options options = testing::options_of(builtin_schedulers(), "marl", {{"policy", f.policy}});
  const auto diagnostics = testing::diagnostics_thrown_by([&] {
    (void)builtin_schedulers().at("marl").value(
        SchedulerContext{options, *f.placement, f.speed, 0, nullptr, &f.state.servers});
  });
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].message.find("trained on another cluster (1 servers: 0:4×P100)"), std::string::npos)
      << testing::dump(diagnostics);
  MarlPolicy(5).save(f.policy, "", "");
  EXPECT_NO_THROW((void)builtin_schedulers().at("marl").value(
      SchedulerContext{options, *f.placement, f.speed, 0, nullptr, &f.state.servers}));
}

// A policy records the `remote` option it was trained with (its agents' masks): under the other one
// it is a located error at the `policy` option.
TEST(MarlPolicy, APolicyTrainedWithAnotherMaskIsRefusedAtItsOption) {
  MarlFixture f(1);
  MarlPolicy(5).save(f.policy, marl_cluster_key(f.state.servers), "when_no_local_fit");
  Options options = testing::options_of(builtin_schedulers(), "marl");
  options.set("policy", f.policy, SourceLocation{"s.yaml", 7, 13});
  const auto errors = testing::diagnostics_thrown_by([&] {
    (void)builtin_schedulers().at("marl").value(
        SchedulerContext{options, *f.placement, f.speed, 0, nullptr, &f.state.servers});
  });
  testing::expect_errors(errors,
                         {{7, 13,
                           "scheduler 'marl': the policy '" + f.policy +
                               "' was trained with `remote: when_no_local_fit`, not with this scenario's `remote: "
                               "when_partition_full`"}});
  options.set("remote", std::string("when_no_local_fit"));
  EXPECT_NO_THROW((void)builtin_schedulers().at("marl").value(
      SchedulerContext{options, *f.placement, f.speed, 0, nullptr, &f.state.servers}));
}

// Job 1 belongs to agent 1 (1 mod 2), which owns server 1 (servers by rack, cut in two). Nothing
// runs, so stop is masked: placing on server 1 is the only feasible action, whatever the weights.
TEST(MarlScheduler, AnAgentPlacesOnItsOwnPartitionAndNeverStrandsAJob) {
  MarlFixture f(2);
  f.state.queued.erase(f.state.queued.begin());
  const auto decisions = f.decide();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].kind, Decision::Kind::start);
  EXPECT_EQ(decisions[0].job, 1u);
  EXPECT_EQ(decisions[0].placement.to_string(), "s1:1");
}

// Agent 1's server is full (job 3 runs on both its GPUs): job 1 goes to agent 0's server (remote), the
// only place with free GPUs; stopping is masked because it fits (work-conserving), and packing is
// impossible (job 3 holds two GPUs).
TEST(MarlScheduler, AFullPartitionPlacesRemotely) {
  MarlFixture f(4);
  f.run(3, 1, 2);
  f.state.queued = {f.state.queued[1]};
  const auto decisions = f.decide();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].kind, Decision::Kind::start);
  EXPECT_EQ(decisions[0].placement.to_string(), "s0:1");
}

// `remote` (docs/cluster.md): agent 1 (job 1's, 1 mod 2) owns server 1, agent 0 server 0; both have
// two GPUs. The consolidate teacher places a candidate on the offered server where it fits alone with
// the fewest GPUs left, else anchored (that server's free GPUs, then its rack's, then any server's).
// Job 3 holds one GPU of server 1; job 1 asks for 2 GPUs, which fit alone on none of agent 1's servers
// (1 free). Default: agent 1 still has a free GPU, so only server 1 is offered, and the anchored
// placement spans its free GPU and one of server 0 (no other server in rack 1): s0:1+s1:1. With
// `when_no_local_fit` server 0 is offered as well, where the job fits alone: s0:2.
TEST(MarlScheduler, AJobThatFitsNowhereLocallyGetsRemoteCandidates) {
  for (const auto& [remote, expected] :
       {std::pair{"when_partition_full", "s0:1+s1:1"}, std::pair{"when_no_local_fit", "s0:2"}}) {
    MarlFixture f(4);
    f.run(3, 1, 1);
    f.state.queued = {f.state.queued[1]};
    f.state.queued[0].gpus = 2;
    const auto decisions = f.teach(remote);
    ASSERT_EQ(decisions.size(), 1u) << remote;
    EXPECT_EQ(decisions[0].kind, Decision::Kind::start) << remote;
    EXPECT_EQ(decisions[0].placement.to_string(), expected) << remote;
  }
}

// Job 3 holds one GPU of server 0 (agent 0's); job 1 (agent 1) asks for 1 GPU, which fits on its own
// server 1 (2 free). Offered server 0 as well, the teacher would take it (1 free: the fewer left);
// under either option only server 1 is offered: s1:1.
TEST(MarlScheduler, AJobThatFitsLocallyGetsNoRemoteCandidates) {
  for (const char* remote : {"when_partition_full", "when_no_local_fit"}) {
    MarlFixture f(4);
    f.run(3, 0, 1);
    f.state.queued = {f.state.queued[1]};
    const auto decisions = f.teach(remote);
    ASSERT_EQ(decisions.size(), 1u) << remote;
    EXPECT_EQ(decisions[0].placement.to_string(), "s1:1") << remote;
  }
}

// Each agent chooses among the first `window` jobs of its sub-queue and serves until nothing fits:
// four one-GPU jobs (agent 0: jobs 0 and 2; agent 1: jobs 1 and 3) on two servers of two free GPUs
// are all started, whatever the weights, each exactly once (a served job leaves the window).
TEST(MarlScheduler, AgentsServeEveryJobThatFitsOnceEach) {
  MarlFixture f(4);
  const auto decisions = f.decide();
  ASSERT_EQ(decisions.size(), 4u);
  std::vector<JobId> started;
  for (const Decision& d : decisions) {
    EXPECT_EQ(d.kind, Decision::Kind::start);
    started.push_back(d.job);
  }
  std::sort(started.begin(), started.end());
  EXPECT_EQ(started, (std::vector<JobId>{0, 1, 2, 3}));
}

// Where each started job went, "job:placement" in job order.
std::vector<std::string> placements(std::vector<Decision> decisions) {
  std::sort(decisions.begin(), decisions.end(), [](const Decision& a, const Decision& b) { return a.job < b.job; });
  std::vector<std::string> out;
  for (const Decision& d : decisions) out.push_back(std::to_string(d.job) + ":" + d.placement.to_string());
  return out;
}

// `dispatch: best_fit`. Job 3 holds one GPU of server 1 (agent 1's); jobs 0 and 1 (one GPU each)
// arrive together. Job 0: server 1 leaves 1 − 0 − 1 = 0 GPUs, server 0 2 − 0 − 1 = 1: agent 1, whose
// sub-queue now waits for 1 GPU. Job 1: server 1 leaves 1 − 1 − 1 < 0, server 0 1: agent 0. Each agent
// may place only on its own server (it has room): job 0 on s1, job 1 on s0, whatever the weights. By
// job id (0 → agent 0, 1 → agent 1) the other way round.
TEST(MarlScheduler, BestFitDispatchSendsAJobToTheAgentWhereItFitsTightest) {
  for (const auto& [dispatch, expected] : {std::pair{"best_fit", std::vector<std::string>{"0:s1:1", "1:s0:1"}},
                                           std::pair{"job_id", std::vector<std::string>{"0:s0:1", "1:s1:1"}}}) {
    MarlFixture f(4);
    f.run(3, 1, 1);
    f.state.queued = {f.state.queued[0], f.state.queued[1]};
    EXPECT_EQ(placements(f.scheduler(dispatch)->decide(f.state, SchedulerEvent::arrival)), expected) << dispatch;
  }
}

// `dispatch: best_fit` when a job fits nowhere, and the sub-queues kept. First event: jobs 4 and 5 hold
// both servers (two GPUs each); jobs 0 and 2 (one GPU each) arrive and fit on no server: job 0 joins
// the shortest sub-queue, agent 0's (both empty: the lowest agent), job 2 then agent 1's (waiting for
// 0 GPUs against 1). Nothing can start (no free GPU; no one-GPU job to pack beside). Second event: both
// servers empty. Each agent places its job on its own server, which has room: job 0 on s0, job 2 on
// s1. (Dispatched anew, job 2 would fit tightest on server 0 beside job 0's GPU — agent 0 — and by job
// id both are agent 0's: both on s0.)
TEST(MarlScheduler, BestFitDispatchJoinsTheShortestQueueAndAJobKeepsItsAgent) {
  for (const auto& [dispatch, expected] : {std::pair{"best_fit", std::vector<std::string>{"0:s0:1", "2:s1:1"}},
                                           std::pair{"job_id", std::vector<std::string>{"0:s0:1", "2:s0:1"}}}) {
    MarlFixture f(6);
    f.run(4, 0, 2);
    f.run(5, 1, 2);
    f.state.queued = {f.state.queued[0], f.state.queued[2]};
    const auto scheduler = f.scheduler(dispatch);
    EXPECT_TRUE(scheduler->decide(f.state, SchedulerEvent::arrival).empty()) << dispatch;
    f.state.running.clear();
    f.state.free_gpus = {2, 2};
    EXPECT_EQ(placements(scheduler->decide(f.state, SchedulerEvent::completion)), expected) << dispatch;
  }
}

TEST(MarlScheduler, AnUnreadablePolicyIsAnInputError) {
  // A missing policy is the option reader's error (it is declared required: OptionsTest covers that).
  MarlFixture f(1);
  Options bad = testing::options_of(builtin_schedulers(), "marl");
  bad.set("policy", testing::write_file("bad.pt", "garbage"), SourceLocation{"s.yaml", 5, 13});
  const auto errors = testing::diagnostics_thrown_by([&] {
    (void)builtin_schedulers().at("marl").value(SchedulerContext{bad, *f.placement, f.speed, 0});
  });
  testing::expect_errors(errors, {{5, 13, "scheduler 'marl': cannot read the policy"}});
}

}  // namespace
}  // namespace dnnsim
