// Step orders of the built-in pipeline schedules (planners/schedules/schedules.cpp), written out by
// hand for small shapes, and the in-flight counts of papers-parallelism.md §1 and §2.5.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "planners/schedules/pipeline_estimator.hpp"
#include "planners/schedules/schedule.hpp"
#include "tests/support/planner_entries.hpp"

namespace dnnsim {
namespace {

using testing::make_schedule;

using testing::kfkb;

std::shared_ptr<const PipelineSchedule> dapple(char policy, std::optional<int> max_in_flight = std::nullopt) {
  if (max_in_flight)
    return make_schedule("dapple",
                         {{"policy", std::string(1, policy)}, {"max_in_flight", std::int64_t{*max_in_flight}}});
  return make_schedule("dapple", {{"policy", std::string(1, policy)}});
}

std::shared_ptr<const PipelineSchedule> interleaved(int v) {
  return make_schedule("interleaved", {{"chunks", std::int64_t{v}}});
}

// "F0 F1 B0 …" for one-chunk orders; interleaved_text writes "F0.1" for micro-batch 0, chunk 1.
std::string text(const std::vector<PipelineStep>& order) {
  std::string out;
  for (const PipelineStep& step : order) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}{}", step.pass == PassKind::forward ? 'F' : 'B', step.micro_batch);
  }
  return out;
}

std::string interleaved_text(const std::vector<PipelineStep>& order) {
  std::string out;
  for (const PipelineStep& step : order) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}{}.{}", step.pass == PassKind::forward ? 'F' : 'B', step.micro_batch, step.chunk);
  }
  return out;
}

TEST(ScheduleOrder, RegistryListsTheEightSchedulesInOrder) {
  EXPECT_EQ(builtin_schedules().names(), (std::vector<std::string>{"gpipe", "1f1b", "dapple", "interleaved", "kfkb",
                                                                   "ada-grouper", "pipedream-async", "critical-path"}));
  for (const auto& entry : builtin_schedules().entries()) {
    EXPECT_FALSE(entry.description.empty()) << entry.name;
    EXPECT_FALSE(entry.source.empty()) << entry.name;
  }
  EXPECT_EQ(builtin_schedules().at("dapple").options->names(), (std::vector<std::string>{"policy", "max_in_flight"}));
}

TEST(ScheduleOrder, OneFOneBWarmsUpWithPMinusIMinusOneForwards) {
  // p = 4, M = 8: stage i runs min(p−i−1, M) forwards, then F/B pairs, then drains its backwards.
  const PipelineShape shape{4, 8, 1};
  const auto schedule = make_schedule("1f1b");
  EXPECT_EQ(text(schedule->stage_order(0, shape)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(text(schedule->stage_order(2, shape)), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(text(schedule->stage_order(3, shape)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(ScheduleOrder, GPipeRunsAllForwardsThenAllBackwards) {
  const PipelineShape shape{3, 4, 1};
  const auto schedule = make_schedule("gpipe", {{"recompute", true}});
  EXPECT_TRUE(schedule->recompute());
  EXPECT_FALSE(make_schedule("gpipe")->recompute());
  for (int s = 0; s < 3; ++s) EXPECT_EQ(text(schedule->stage_order(s, shape)), "F0 F1 F2 F3 B0 B1 B2 B3");
}

TEST(ScheduleOrder, KFKBAlternatesGroupsOfK) {
  // p = 2, M = 6, k = 2: stage 0 warms up with k(p−1) = 2 forwards, then {2 F, 2 B} while forwards
  // remain, then the last 2 backwards; stage 1 starts with a group directly.
  const PipelineShape shape{2, 6, 1};
  EXPECT_EQ(text(kfkb(2)->stage_order(0, shape)), "F0 F1 F2 F3 B0 B1 F4 F5 B2 B3 B4 B5");
  EXPECT_EQ(text(kfkb(2)->stage_order(1, shape)), "F0 F1 B0 B1 F2 F3 B2 B3 F4 F5 B4 B5");
  // M = 5 is not a multiple of k = 2: the last group is shorter.
  EXPECT_EQ(text(kfkb(2)->stage_order(1, PipelineShape{2, 5, 1})), "F0 F1 B0 B1 F2 F3 B2 B3 F4 B4");
}

TEST(ScheduleOrder, KFKBWithOneIs1F1BAndWithMIsGPipe) {
  for (const PipelineShape shape : {PipelineShape{4, 8, 1}, PipelineShape{3, 2, 1}, PipelineShape{5, 7, 1}})
    for (int s = 0; s < shape.stages; ++s) {
      EXPECT_EQ(kfkb(1)->stage_order(s, shape), make_schedule("1f1b")->stage_order(s, shape));
      EXPECT_EQ(kfkb(shape.micro_batches)->stage_order(s, shape), make_schedule("gpipe")->stage_order(s, shape));
    }
}

TEST(ScheduleOrder, DappleInjectsKiMicroBatchesThenAlternates) {
  // p = 4, M = 8. Policy A: K_0 = min(4, 8) = 4, the same order as 1F1B. Policy B: K_0 = min(7, 8)
  // = 7 forwards, then B/F; K_3 = 1. With D = 3, K_0 = min(7, 3) = 3.
  const PipelineShape shape{4, 8, 1};
  for (int s = 0; s < 4; ++s)
    EXPECT_EQ(dapple('A')->stage_order(s, shape), make_schedule("1f1b")->stage_order(s, shape));
  EXPECT_EQ(text(dapple('B')->stage_order(0, shape)), "F0 F1 F2 F3 F4 F5 F6 B0 F7 B1 B2 B3 B4 B5 B6 B7");
  EXPECT_EQ(text(dapple('B')->stage_order(3, shape)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  EXPECT_EQ(text(dapple('B', 3)->stage_order(0, shape)), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
}

TEST(ScheduleOrder, InterleavedFollowsMegatron) {
  // p = 2, v = 2, M = 4 (Megatron's schedules.py, microbatch groups of p): forward step k runs
  // micro-batch (k div 4)·2 + k mod 2 on chunk (k mod 4) div 2: F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F2.1
  // F3.1; backward step k the same micro-batch on chunk 1 − that. Rank 0 warms up with
  // min(2(p−0−1) + (v−1)p, M·v) = min(2 + 2, 8) = 4 steps, rank 1 with min(0 + 2, 8) = 2.
  const PipelineShape shape{2, 4, 2};
  const auto schedule = interleaved(2);
  EXPECT_EQ(schedule->chunks(), 2);
  EXPECT_EQ(interleaved_text(schedule->stage_order(0, shape)),
            "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(interleaved_text(schedule->stage_order(1, shape)),
            "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0");
}

TEST(ScheduleOrder, InterleavedWarmUpOfRankZeroIsTenChunkSteps) {
  // §9 S2: p = 4, v = 2, M = 8, rank 0: min(2·3 + 1·4, 16) = 10 forwards before the first backward,
  // so 11 chunk-micro-batches in flight (the 11th forward precedes the first backward).
  const auto order = interleaved(2)->stage_order(0, PipelineShape{4, 8, 2});
  const auto first_backward = std::find_if(order.begin(), order.end(),
                                           [](const PipelineStep& step) { return step.pass == PassKind::backward; });
  EXPECT_EQ(first_backward - order.begin(), 11);  // 10 warm-up + the steady phase's first forward
  EXPECT_EQ(peak_in_flight(order), 11);
}

TEST(ScheduleOrder, InterleavedNeedsMultipleOfStagesAndItsChunks) {
  const auto schedule = interleaved(2);
  EXPECT_EQ(schedule->unsupported(PipelineShape{4, 8, 2}), "");
  EXPECT_NE(schedule->unsupported(PipelineShape{4, 6, 2}).find("multiple of the stages"), std::string::npos);
  EXPECT_NE(schedule->unsupported(PipelineShape{4, 8, 1}).find("2 chunks per stage"), std::string::npos);
  EXPECT_NE(schedule->unsupported(PipelineShape{1, 8, 2}).find("at least 2 stages"), std::string::npos);
}

TEST(ScheduleOrder, EveryStepOnceAndEachBackwardAfterItsForward) {
  std::vector<std::pair<std::shared_ptr<const PipelineSchedule>, PipelineShape>> cases;
  for (const PipelineShape shape : {PipelineShape{1, 3, 1}, PipelineShape{4, 8, 1}, PipelineShape{3, 5, 1}}) {
    cases.emplace_back(make_schedule("gpipe"), shape);
    cases.emplace_back(make_schedule("1f1b"), shape);
    cases.emplace_back(dapple('B'), shape);
    cases.emplace_back(kfkb(3), shape);
    cases.emplace_back(make_schedule("pipedream-async"), shape);
    cases.emplace_back(make_schedule("critical-path"), shape);
  }
  cases.emplace_back(interleaved(3), PipelineShape{2, 4, 3});
  cases.emplace_back(interleaved(2), PipelineShape{4, 4, 2});
  for (const auto& [schedule, shape] : cases)
    for (int s = 0; s < shape.stages; ++s) {
      std::set<std::pair<int, int>> forwarded;
      std::set<std::pair<int, int>> backwarded;
      for (const PipelineStep& step : schedule->stage_order(s, shape)) {
        const std::pair<int, int> key{step.micro_batch, step.chunk};
        if (step.pass == PassKind::forward)
          EXPECT_TRUE(forwarded.insert(key).second);
        else {
          EXPECT_TRUE(forwarded.contains(key));
          EXPECT_TRUE(backwarded.insert(key).second);
        }
      }
      EXPECT_EQ(forwarded.size(), static_cast<std::size_t>(shape.micro_batches * shape.chunks));
      EXPECT_EQ(backwarded.size(), forwarded.size());
    }
}

TEST(ScheduleOrder, PeakInFlightPerStage) {
  // papers-parallelism.md §1: 1F1B min(p−i, M); GPipe M; kFkB min(k(p−i), M); DAPPLE PA
  // K_i = min(S−i, D), PB min(2(S−i)−1, D). p = 4, M = 8 and M = 2 (the cap binds).
  for (const int m : {8, 2}) {
    const PipelineShape shape{4, m, 1};
    for (int i = 0; i < 4; ++i) {
      const int left = 4 - i;
      EXPECT_EQ(peak_in_flight(make_schedule("1f1b")->stage_order(i, shape)), std::min(left, m));
      EXPECT_EQ(peak_in_flight(make_schedule("gpipe")->stage_order(i, shape)), m);
      EXPECT_EQ(peak_in_flight(kfkb(2)->stage_order(i, shape)), std::min(2 * left, m));
      EXPECT_EQ(peak_in_flight(kfkb(3)->stage_order(i, shape)), std::min(3 * left, m));
      EXPECT_EQ(peak_in_flight(dapple('A')->stage_order(i, shape)), std::min(left, m));
      EXPECT_EQ(peak_in_flight(dapple('B')->stage_order(i, shape)), std::min(2 * left - 1, m));
      EXPECT_EQ(peak_in_flight(dapple('B', 3)->stage_order(i, shape)), std::min({2 * left - 1, 3, m}));
    }
  }
}

// Values outside an option's declared range are refused by the schema itself (a scenario's are
// located input errors, from the option reader); the sizes a schedule checks against the workload's
// micro-batches are input errors at the option.
TEST(ScheduleOrder, MakeRejectsNonsense) {
  EXPECT_THROW((void)kfkb(0), std::logic_error);
  EXPECT_THROW((void)interleaved(1), std::logic_error);
  EXPECT_THROW((void)dapple('C'), std::logic_error);
  EXPECT_THROW((void)dapple('A', 0), std::logic_error);
  EXPECT_THROW((void)make_schedule("ada-grouper", {{"candidates", std::vector<std::int64_t>{2, 0}}}), std::logic_error);
  EXPECT_THROW((void)make_schedule("kfkb", {{"group", std::int64_t{9}}}, 8), InputError);
  EXPECT_THROW((void)make_schedule("ada-grouper", {{"candidates", std::vector<std::int64_t>{2, 9}}}, 8), InputError);
  EXPECT_NO_THROW((void)make_schedule("kfkb", {{"group", std::int64_t{8}}}, 8));
}

TEST(ScheduleOrder, AdaGrouperStartsWithItsFirstCandidate) {
  const PipelineShape shape{3, 6, 1};
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(make_schedule("ada-grouper", {{"candidates", std::vector<std::int64_t>{2, 4}}})->stage_order(s, shape),
              kfkb(2)->stage_order(s, shape));
    EXPECT_EQ(make_schedule("ada-grouper")->stage_order(s, shape), kfkb(1)->stage_order(s, shape));
  }
}

TEST(ScheduleOrder, PipeDreamAsyncIsOneFOneBOverTheWholeRun) {
  // PipeDream (SOSP'19 §3.2) never flushes: two iterations of M = 2 on p = 3 stages are ONE 1F1B
  // stream of 4 micro-batches, so stage 0 warms up once with p − 1 = 2 forwards and holds p = 3 in
  // flight although an iteration has only 2 (1F1B with a flush: min(p, M) = 2, warm-up and drain
  // every iteration). Only pipedream-async is asynchronous.
  const auto async = make_schedule("pipedream-async");
  EXPECT_TRUE(async->asynchronous());
  for (const auto& name : builtin_schedules().names())
    EXPECT_EQ(make_schedule(name)->asynchronous(), name == "pipedream-async") << name;
  const PipelineShape run{3, 4, 1};
  EXPECT_EQ(text(async->stage_order(0, run)), "F0 F1 F2 B0 F3 B1 B2 B3");
  EXPECT_EQ(text(async->stage_order(2, run)), "F0 B0 F1 B1 F2 B2 F3 B3");
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(async->stage_order(s, run), make_schedule("1f1b")->stage_order(s, run)) << "stage " << s;
    EXPECT_EQ(peak_in_flight(async->stage_order(s, run)), 3 - s) << "stage " << s;
  }
  EXPECT_EQ(peak_in_flight(make_schedule("1f1b")->stage_order(0, PipelineShape{3, 2, 1})), 2);
}

TEST(ScheduleOrder, StashedWeightVersionsAreTheDistinctVersionsInFlight) {
  // The closed form against the order itself: walk pipedream-async's order of stage i of p over a
  // long run, give each forward the number of updates so far (one every r backwards), and count the
  // distinct versions among the micro-batches in flight at each point.
  const auto async = make_schedule("pipedream-async");
  for (int p = 1; p <= 6; ++p)
    for (int stage = 0; stage < p; ++stage)
      for (int r = 1; r <= 5; ++r) {
        std::map<int, int> version_of;  // in flight: micro-batch → version
        int updates = 0;
        int backwards = 0;
        std::size_t most = 0;
        for (const PipelineStep& step : async->stage_order(stage, PipelineShape{p, 60, 1})) {
          if (step.pass == PassKind::forward) {
            version_of[step.micro_batch] = updates;
            std::set<int> versions;
            for (const auto& [micro_batch, version] : version_of) versions.insert(version);
            most = std::max(most, versions.size());
          } else {
            version_of.erase(step.micro_batch);
            if (++backwards % r == 0) ++updates;
          }
        }
        EXPECT_EQ(static_cast<int>(most), stashed_weight_versions(p - stage, r)) << p << " " << stage << " " << r;
      }
  EXPECT_EQ(stashed_weight_versions(4, 1), 4);   // one replica: p − i
  EXPECT_EQ(stashed_weight_versions(2, 15), 2);  // PipeDream's 15-1, first stage
  EXPECT_EQ(stashed_weight_versions(1, 3), 1);   // the last stage
}

}  // namespace
}  // namespace dnnsim
