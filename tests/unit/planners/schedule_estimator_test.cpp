// The pipeline estimator (planners/schedules/pipeline_estimator.hpp) against closed forms
// (papers-parallelism.md §1, §9 S1–S3) and against an independent 1F1B recurrence (§2.6).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "planners/schedules/pipeline_estimator.hpp"
#include "planners/schedules/schedule.hpp"
#include "tests/support/planner_entries.hpp"

namespace dnnsim {
namespace {

using testing::kExact;

using testing::make_schedule;

using testing::kfkb;

TEST(PipelineEstimator, S1GPipeAnd1F1BTake33) {
  // §9 S1: p = 4, M = 8, t_f = 1, t_b = 2, no communication: (M + p − 1)(t_f + t_b) = 11 · 3 = 33.
  const PipelineShape shape{4, 8, 1};
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2));
  const PipelineEstimate gpipe = estimate_pipeline(*make_schedule("gpipe"), shape, timings);
  const PipelineEstimate one_f_one_b = estimate_pipeline(*make_schedule("1f1b"), shape, timings);
  EXPECT_NEAR(gpipe.iteration.value(), 33.0, kExact);
  EXPECT_NEAR(one_f_one_b.iteration.value(), 33.0, kExact);
  // In flight: GPipe 8 everywhere; 1F1B min(p − i, M): 4, 3, 2, 1.
  EXPECT_EQ(gpipe.peak_in_flight, (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(one_f_one_b.peak_in_flight, (std::vector<int>{4, 3, 2, 1}));
  // Stage 3 (last) under 1F1B starts its first forward at 3 (after three forwards of 1) and its
  // first backward right after: [3, 4] then [4, 6].
  EXPECT_NEAR(one_f_one_b.steps[3][0].start.value(), 3.0, kExact);
  EXPECT_NEAR(one_f_one_b.steps[3][1].start.value(), 4.0, kExact);
  EXPECT_NEAR(one_f_one_b.steps[3][1].end.value(), 6.0, kExact);
}

TEST(PipelineEstimator, S2InterleavedTakes28Point5) {
  // §9 S2: v = 2 chunks of t_f = 0.5, t_b = 1 each (the same model as S1):
  // M(t_f + t_b) + (p − 1)(t_f + t_b)/v = 8 · 3 + 3 · 3 / 2 = 28.5.
  const PipelineEstimate estimate =
      estimate_pipeline(*make_schedule("interleaved", {{"chunks", std::int64_t{2}}}), PipelineShape{4, 8, 2},
                        PipelineTimings::uniform(4, 2, Seconds(0.5), Seconds(1)));
  EXPECT_NEAR(estimate.iteration.value(), 28.5, kExact);
  EXPECT_EQ(estimate.peak_in_flight[0], 11);  // rank 0: 10 warm-up chunk-steps + 1
}

TEST(PipelineEstimator, S3KFKBTimelinesEqual1F1BAndGPipe) {
  // §9 S3 with heterogeneous stages and non-zero transfers: k = 1 gives 1F1B's timeline step by
  // step, k = M GPipe's (the orders are the same, so every start and end must be too).
  PipelineTimings timings;
  timings.stages = 3;
  timings.forward = {Seconds(1), Seconds(1.5), Seconds(0.7)};
  timings.backward = {Seconds(2), Seconds(2.5), Seconds(1.1)};
  timings.activation_transfer = {Seconds(0.3), Seconds(0.2)};
  timings.gradient_transfer = {Seconds(0.4), Seconds(0.1)};
  const PipelineShape shape{3, 6, 1};
  const auto compare = [&](const PipelineSchedule& a, const PipelineSchedule& b) {
    const PipelineEstimate x = estimate_pipeline(a, shape, timings);
    const PipelineEstimate y = estimate_pipeline(b, shape, timings);
    for (int s = 0; s < 3; ++s)
      for (std::size_t i = 0; i < x.steps[s].size(); ++i) {
        EXPECT_EQ(x.steps[s][i].start.value(), y.steps[s][i].start.value());
        EXPECT_EQ(x.steps[s][i].end.value(), y.steps[s][i].end.value());
      }
    EXPECT_EQ(x.iteration.value(), y.iteration.value());
  };
  compare(*kfkb(1), *make_schedule("1f1b"));
  compare(*kfkb(6), *make_schedule("gpipe"));
}

TEST(PipelineEstimator, KFKBWithoutCommunicationMatches1F1B) {
  // papers-parallelism.md §1 (correction to the kFkB row): with per-micro-batch transfers kFkB's
  // compute-only time for balanced stages is (M + p − 1)(t_f + t_b) too: 33 for p = 4, M = 8, k = 2.
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2));
  EXPECT_NEAR(estimate_pipeline(*kfkb(2), PipelineShape{4, 8, 1}, timings).iteration.value(), 33.0, kExact);
}

// Independent oracle 1: the exact 1F1B recurrence of DAPPLE's planner (HPGO's
// sync_pipeline_speedup_recursive, papers-parallelism.md §2.6) for p compute stages without
// communication. With w_x = min(p−x−1, M) warm-up forwards on stage x:
//   f[i][x].start = max(f[i][x−1].end, f[i−1][x].end, b[i−w_x−1][x].end)
//   b[i][x].start = max(b[i][x+1].end, f[i+w_x][x].end, b[i−1][x].end)
// (terms whose index is out of range are dropped; b[i−1] covers the drain, where f[i+w_x] does not exist).
double hpgo_1f1b(const std::vector<double>& f_time, const std::vector<double>& b_time, int m) {
  const int p = static_cast<int>(f_time.size());
  std::vector<std::vector<double>> f(m, std::vector<double>(p)), b(m, std::vector<double>(p));
  // Evaluate every term once its inputs are known, sweeping until all are.
  std::vector<std::vector<bool>> f_done(m, std::vector<bool>(p)), b_done(m, std::vector<bool>(p));
  bool changed = true;
  while (changed) {
    changed = false;
    for (int i = 0; i < m; ++i) {
      for (int x = 0; x < p; ++x) {
        const int w = std::min(p - x - 1, m);
        if (f_done[i][x]) continue;
        const bool ready =
            (x == 0 || f_done[i][x - 1]) && (i == 0 || f_done[i - 1][x]) && (i - w - 1 < 0 || b_done[i - w - 1][x]);
        if (!ready) continue;
        double start = 0;
        if (x > 0) start = std::max(start, f[i][x - 1]);
        if (i > 0) start = std::max(start, f[i - 1][x]);
        if (i - w - 1 >= 0) start = std::max(start, b[i - w - 1][x]);
        f[i][x] = start + f_time[x];
        f_done[i][x] = changed = true;
      }
      for (int x = p - 1; x >= 0; --x) {
        const int w = std::min(p - x - 1, m);
        if (b_done[i][x]) continue;
        const int preceding_forward = std::min(i + w, m - 1);
        const bool ready =
            (x == p - 1 || b_done[i][x + 1]) && f_done[preceding_forward][x] && (i == 0 || b_done[i - 1][x]);
        if (!ready) continue;
        double start = f[preceding_forward][x];
        if (x < p - 1) start = std::max(start, b[i][x + 1]);
        if (i > 0) start = std::max(start, b[i - 1][x]);
        b[i][x] = start + b_time[x];
        b_done[i][x] = changed = true;
      }
    }
  }
  double end = 0;
  for (int x = 0; x < p; ++x) end = std::max(end, b[m - 1][x]);
  return end;
}

TEST(PipelineEstimator, MatchesTheHPGORecurrenceOnRandomHeterogeneousStages) {
  std::mt19937 random(20240601);  // fixed seed: the same stage times on every run
  std::uniform_real_distribution<double> time(0.1, 3.0);
  for (int trial = 0; trial < 50; ++trial) {
    const int p = 2 + trial % 5;
    const int m = 1 + trial % 9;
    PipelineTimings timings = PipelineTimings::uniform(p, 1, Seconds(0), Seconds(0));
    std::vector<double> f_time, b_time;
    for (int x = 0; x < p; ++x) {
      f_time.push_back(time(random));
      b_time.push_back(time(random));
      timings.forward[x] = Seconds(f_time.back());
      timings.backward[x] = Seconds(b_time.back());
    }
    const double expected = hpgo_1f1b(f_time, b_time, m);
    EXPECT_NEAR(estimate_pipeline(*make_schedule("1f1b"), PipelineShape{p, m, 1}, timings).iteration.value(), expected,
                1e-9)
        << "p = " << p << ", M = " << m;
  }
}

// Independent oracle 2, for any stage orders with a per-transfer delay c: the longest path of the
// dependency DAG by relaxation (Bellman–Ford style, repeated until nothing changes). A step starts
// after the previous step of its stage and, for a forward of stage x > 0 (backward of x < p − 1),
// c after the same micro-batch's forward on x − 1 (backward on x + 1). Sends never queue here
// because consecutive steps on a stage are at least min(t_f, t_b) ≥ c apart.
double longest_path(const std::vector<std::vector<PipelineStep>>& orders, double t_f, double t_b, double c) {
  const std::size_t p = orders.size();
  std::map<std::tuple<int, int, std::size_t>, double> end;  // (pass, micro-batch, stage) → end
  for (std::size_t x = 0; x < p; ++x)
    for (const PipelineStep& step : orders[x]) end[{static_cast<int>(step.pass), step.micro_batch, x}] = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::size_t x = 0; x < p; ++x) {
      double previous = 0;
      for (const PipelineStep& step : orders[x]) {
        const bool forward = step.pass == PassKind::forward;
        double start = previous;
        if (forward && x > 0) start = std::max(start, end[{static_cast<int>(step.pass), step.micro_batch, x - 1}] + c);
        if (!forward && x + 1 < p)
          start = std::max(start, end[{static_cast<int>(step.pass), step.micro_batch, x + 1}] + c);
        double& mine = end[{static_cast<int>(step.pass), step.micro_batch, x}];
        const double updated = start + (forward ? t_f : t_b);
        if (updated > mine) {
          mine = updated;
          changed = true;
        }
        previous = mine;
      }
    }
  }
  double last = 0;
  for (const auto& [key, value] : end) last = std::max(last, value);
  return last;
}

TEST(PipelineEstimator, GroupsHideCommunication) {
  // The notes' example (§1): c = 0.5 per transfer, p = 4, M = 8, t_f = 1, t_b = 2: 1F1B 41,
  // kFkB(k = 2) 36 — the notes' own dependency recurrence, and the longest path above.
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2), Seconds(0.5));
  const PipelineShape shape{4, 8, 1};
  const auto orders_of = [&](const PipelineSchedule& schedule) {
    std::vector<std::vector<PipelineStep>> orders;
    for (int s = 0; s < 4; ++s) orders.push_back(schedule.stage_order(s, shape));
    return orders;
  };
  EXPECT_NEAR(estimate_pipeline(*make_schedule("1f1b"), shape, timings).iteration.value(), 41.0, kExact);
  EXPECT_NEAR(estimate_pipeline(*kfkb(2), shape, timings).iteration.value(), 36.0, kExact);
  EXPECT_NEAR(longest_path(orders_of(*make_schedule("1f1b")), 1, 2, 0.5), 41.0, kExact);
  EXPECT_NEAR(longest_path(orders_of(*kfkb(2)), 1, 2, 0.5), 36.0, kExact);
  // And for other k and schedules, the estimator equals the longest path.
  for (int k : {3, 4, 8})
    EXPECT_NEAR(estimate_pipeline(*kfkb(k), shape, timings).iteration.value(),
                longest_path(orders_of(*kfkb(k)), 1, 2, 0.5), kExact);
  const auto policy_b = make_schedule("dapple", {{"policy", std::string("B")}});
  EXPECT_NEAR(estimate_pipeline(*policy_b, shape, timings).iteration.value(),
              longest_path(orders_of(*policy_b), 1, 2, 0.5), kExact);
}

TEST(PipelineEstimator, SendsQueueOnTheirStream) {
  // p = 2, M = 2, GPipe, t_f = 1, t_b = 1, activation transfer 3 (longer than a forward): stage 0's
  // forwards end at 1 and 2; the first send runs [1, 4], the second waits for it: [4, 7]. Stage 1:
  // F0 [4, 5], F1 [7, 8], B0 [8, 9], B1 [9, 10]; the gradients (0 s) reach stage 0 at 9 and 10:
  // B0 [9, 10], B1 [10, 11]. Iteration 11, plus the tails (0.5 on stage 0, 2 on stage 1): max(11.5, 12) = 12.
  PipelineTimings timings = PipelineTimings::uniform(2, 1, Seconds(1), Seconds(1));
  timings.activation_transfer = {Seconds(3)};
  timings.tail = {Seconds(0.5), Seconds(2)};
  const PipelineEstimate estimate = estimate_pipeline(*make_schedule("gpipe"), PipelineShape{2, 2, 1}, timings);
  EXPECT_NEAR(estimate.steps[1][1].start.value(), 7.0, kExact);
  EXPECT_NEAR(estimate.steps[0][3].end.value(), 11.0, kExact);
  EXPECT_NEAR(estimate.iteration.value(), 12.0, kExact);
}

TEST(PipelineEstimator, RejectsMismatchedInputsAndDeadlocks) {
  const auto timings = PipelineTimings::uniform(2, 1, Seconds(1), Seconds(1));
  EXPECT_THROW((void)estimate_pipeline(*make_schedule("1f1b"), PipelineShape{3, 2, 1}, timings), std::invalid_argument);
  PipelineTimings one_update = timings;
  one_update.update = {Seconds(1)};  // one per stage, and there are two
  EXPECT_THROW((void)estimate_pipeline(*make_schedule("pipedream-async"), PipelineShape{2, 2, 1}, one_update),
               std::invalid_argument);
  // Stage 0 wants micro-batch 0's backward before its forward: it waits for stage 1, which waits for stage 0.
  const std::vector<std::vector<PipelineStep>> deadlocked = {{{PassKind::backward, 0, 0}, {PassKind::forward, 0, 0}},
                                                             {{PassKind::forward, 0, 0}, {PassKind::backward, 0, 0}}};
  EXPECT_THROW((void)estimate_pipeline(deadlocked, timings), std::logic_error);
}

// When iteration n of an asynchronous run ends: the last backward (+ its update) of any micro-batch
// of iteration n, the micro-batches nM … (n+1)M − 1 of the stream.
std::vector<double> iteration_ends(const PipelineSchedule& schedule, const PipelineShape& run, int per_iteration,
                                   const PipelineTimings& timings, const PipelineEstimate& estimate) {
  std::vector<double> ends(static_cast<std::size_t>(run.micro_batches / per_iteration), 0.0);
  for (int s = 0; s < run.stages; ++s) {
    const auto order = schedule.stage_order(s, run);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i].pass != PassKind::backward) continue;
      const double update = timings.update.empty() ? 0.0 : timings.update[static_cast<std::size_t>(s)].value();
      double& end = ends[static_cast<std::size_t>(order[i].micro_batch / per_iteration)];
      end = std::max(end, estimate.steps[static_cast<std::size_t>(s)][i].end.value() + update);
    }
  }
  return ends;
}

TEST(PipelineEstimator, PipeDreamAsyncWarmsUpOnceThenTakesMPeriodsAnIteration) {
  // Three iterations of M = 8 on p = 4 uniform stages (t_f = 1, t_b = 2, no communication) as one
  // asynchronous stream of 24 micro-batches. Stage 0 finishes micro-batch j's backward at
  // (j + p)(t_f + t_b): the first reaches it at p(t_f + t_b) = 12 (four forwards of 1, then the
  // backward flows down in 2 per stage from 4 to 12), and once warm stage 0 runs one F and one B per
  // micro-batch. Iteration n ends with micro-batch 8n + 7: at 33, 57, 81. The first iteration pays
  // the fill, 33 = (M + p − 1)(t_f + t_b) as 1F1B; the others M(t_f + t_b) = 24 — 1F1B with a flush
  // would take 33 each (3 × 33 = 99 against 81).
  const auto async = make_schedule("pipedream-async");
  const PipelineShape run{4, 24, 1};
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2));
  const PipelineEstimate estimate = estimate_pipeline(*async, run, timings);
  EXPECT_NEAR(estimate.iteration.value(), 81.0, kExact);
  const std::vector<double> ends = iteration_ends(*async, run, 8, timings, estimate);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_NEAR(ends[0], 33.0, kExact);
  EXPECT_NEAR(ends[1] - ends[0], 24.0, kExact);
  EXPECT_NEAR(ends[2] - ends[1], 24.0, kExact);
  EXPECT_EQ(estimate.peak_in_flight, (std::vector<int>{4, 3, 2, 1}));  // NOAM = p − i
}

TEST(PipelineEstimator, PipeDreamAsyncSteadyStateIsTheSlowestStagesPeriod) {
  // Stage 2 is the slowest: t_f = 2, t_b = 4, the others 1 and 2; every stage updates its weights
  // for u = 0.5 after each backward; every transfer takes 0.25. Once warm stage 2 never waits: between
  // its F(j) and B(j) it runs B(j − 1), its update and F(j + 1) (4 + 0.5 + 2 = 6.5), longer than the
  // round trip of micro-batch j to the last stage and back (0.25 + 1 + 2 + 0.25 = 3.5; the last
  // stage's update follows its B and delays only its own next step); and stage 1, which runs F(j + 1)
  // after its B(j − 2) (1F1B keeps it p − i = 3 ahead), delivers it 0.25 + 2 + 0.5 + 1 + 0.25 = 4
  // after stage 2's B(j − 2) ends, before stage 2 wants it (6.5 + 0.5 = 7 after). The other stages need
  // 1 + 2 + 0.5 = 3.5 per micro-batch, so they wait for stage 2 and every stage runs at its period,
  // 6.5: an iteration of M = 8 takes 8 × 6.5 = 52 once warm (PipeDream §3.1's objective, the
  // slowest stage's time per micro-batch, × M). The run's last iteration holds the drain, which is
  // shorter: stage 2 (warm-up p − i − 1 = 1) runs its last backward B31 right after B30's update,
  // with no forward between them, so the run ends t_f = 2 early: 50.
  PipelineTimings timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2), Seconds(0.25));
  timings.forward[2] = Seconds(2);
  timings.backward[2] = Seconds(4);
  timings.update.assign(4, Seconds(0.5));
  const auto async = make_schedule("pipedream-async");
  const PipelineShape run{4, 32, 1};
  const PipelineEstimate estimate = estimate_pipeline(*async, run, timings);
  const std::vector<double> ends = iteration_ends(*async, run, 8, timings, estimate);
  ASSERT_EQ(ends.size(), 4u);
  EXPECT_GT(ends[0], 52.0);  // the fill
  EXPECT_NEAR(ends[1] - ends[0], 52.0, 1e-9);
  EXPECT_NEAR(ends[2] - ends[1], 52.0, 1e-9);
  EXPECT_NEAR(ends[3] - ends[2], 50.0, 1e-9);
  EXPECT_NEAR(estimate.iteration.value(), ends.back(), kExact);
}

}  // namespace
}  // namespace dnnsim
