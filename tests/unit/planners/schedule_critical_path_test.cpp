// The critical-path schedule (planners/schedules/critical_path.hpp): list scheduling by predicted
// times, checked against hand-derived timelines and the closed forms of papers-parallelism.md §1.
#include <gtest/gtest.h>

#include "planners/schedules/critical_path.hpp"
#include "planners/schedules/pipeline_estimator.hpp"
#include "planners/schedules/schedule.hpp"
#include "tests/support/planner_entries.hpp"

namespace dnnsim {
namespace {

using testing::kExact;

using testing::make_schedule;

std::shared_ptr<const PipelineSchedule> critical_path(std::optional<int> max_in_flight = std::nullopt) {
  if (!max_in_flight) return make_schedule("critical-path");
  return make_schedule("critical-path", {{"max_in_flight", std::int64_t{*max_in_flight}}});
}

std::string describe(const std::vector<PipelineStep>& order) {
  std::string out;
  for (const PipelineStep& step : order)
    out += (out.empty() ? "" : " ") + std::string(step.pass == PassKind::forward ? "F" : "B") +
           std::to_string(step.micro_batch);
  return out;
}

// Two stages, t_f = t_b = 1, a slow activation link (3 per micro-batch, FIFO) and free gradients, M = 4.
PipelineTimings slow_link() {
  PipelineTimings timings = PipelineTimings::uniform(2, 1, Seconds(1), Seconds(1));
  timings.activation_transfer = {Seconds(3)};
  return timings;
}

TEST(CriticalPathSchedule, UniformStagesGive1F1BsOrderUnderItsCapAndGPipesWithout) {
  // Uniform stages, no transfers: stage i receives a forward every t_f while its first gradient comes
  // back only after the round trip of the stages below it, so under the cap p − i it runs forwards
  // until the cap, then a backward whenever it is full: 1F1B's order and its (M + p − 1)(t_f + t_b)
  // = 11 · 3 = 33 (§9 S1). With the cap at M, every forward arrives before any gradient (the last
  // stage's first backward starts after its M-th forward could), so all forwards come first: GPipe.
  const PipelineShape shape{4, 8, 1};
  const PipelineTimings timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2));
  const auto bound = bind_timings(critical_path(), timings);
  const auto unbounded = bind_timings(critical_path(8), timings);
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(describe(bound->stage_order(s, shape)), describe(make_schedule("1f1b")->stage_order(s, shape)))
        << "stage " << s;
    EXPECT_EQ(describe(unbounded->stage_order(s, shape)), describe(make_schedule("gpipe")->stage_order(s, shape)))
        << "stage " << s;
  }
  EXPECT_NEAR(estimate_pipeline(*bound, shape, timings).iteration.value(), 33.0, kExact);
  EXPECT_NEAR(estimate_pipeline(*unbounded, shape, timings).iteration.value(), 33.0, kExact);
}

TEST(CriticalPathSchedule, SlowLinkTimelinesDerivedByHand) {
  // slow_link(), M = 4. The activation sends of stage 0 queue on one link: a send starts when its
  // forward has ended and the previous send has.
  //  1F1B (stage 0: F0 F1 B0 F2 B1 F3 B2 B3; stage 1: F0 B0 F1 B1 …): sends [1,4] [4,7]; stage 1
  //    F0 [4,5] B0 [5,6]; stage 0 B0 [6,7], F2 [7,8] (send [8,11]); stage 1 F1 [7,8] B1 [8,9]; stage 0
  //    B1 [9,10], F3 [10,11] (send [11,14]); stage 1 F2 [11,12] B2 [12,13]; stage 0 B2 [13,14]; stage 1
  //    F3 [14,15] B3 [15,16]; stage 0 B3 [16,17]: 17.
  //  critical-path, cap p − i = 2, 1: stage 0 is full after F0 F1 and must wait for B0, as 1F1B does:
  //    the same order and 17.
  //  critical-path, max_in_flight 4: stage 0 runs F0–F3 in [0,4], so the link is never idle: sends
  //    end at 4, 7, 10, 13. Stage 1 runs F_j when it arrives and B_j right after, at [5,6], [8,9],
  //    [11,12], [14,15]; stage 0 runs B_j when its gradient arrives: B3 [15,16]: 16.
  //  GPipe (stage 1: F0–F3 then B0–B3): F3 [13,14], B0–B3 [14,18], stage 0 B3 [18,19]: 19 — the
  //    critical path does not wait on a fixed order where GPipe's last stage idles with B0 ready.
  const PipelineShape shape{2, 4, 1};
  const PipelineTimings timings = slow_link();
  const auto capped = bind_timings(critical_path(), timings);
  const auto free = bind_timings(critical_path(4), timings);
  EXPECT_NEAR(estimate_pipeline(*make_schedule("1f1b"), shape, timings).iteration.value(), 17.0, kExact);
  EXPECT_NEAR(estimate_pipeline(*capped, shape, timings).iteration.value(), 17.0, kExact);
  EXPECT_NEAR(estimate_pipeline(*free, shape, timings).iteration.value(), 16.0, kExact);
  EXPECT_NEAR(estimate_pipeline(*make_schedule("gpipe"), shape, timings).iteration.value(), 19.0, kExact);
  EXPECT_EQ(describe(capped->stage_order(0, shape)), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(describe(free->stage_order(0, shape)), "F0 F1 F2 F3 B0 B1 B2 B3");
  EXPECT_EQ(describe(free->stage_order(1, shape)), "F0 B0 F1 B1 F2 B2 F3 B3");
}

TEST(CriticalPathSchedule, PeakInFlightIsTheCap) {
  // The memory the schedule promises before it knows the times (unit times t_f = 1, t_b = 2, what
  // the planners' memory checks read): min(D or p − i, M) on stage i; once bound, at most that.
  for (const int m : {8, 2}) {
    const PipelineShape shape{4, m, 1};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(peak_in_flight(critical_path()->stage_order(i, shape)), std::min(4 - i, m));
      EXPECT_EQ(peak_in_flight(critical_path(3)->stage_order(i, shape)), std::min(3, m));
    }
  }
  const auto bound = bind_timings(critical_path(3), slow_link());
  for (int i = 0; i < 2; ++i) EXPECT_LE(peak_in_flight(bound->stage_order(i, PipelineShape{2, 4, 1})), 3);
}

TEST(CriticalPathSchedule, OnlyTimedSchedulesAreBound) {
  const auto one_f_one_b = make_schedule("1f1b");
  EXPECT_FALSE(one_f_one_b->orders_by_time());
  EXPECT_EQ(bind_timings(one_f_one_b, slow_link()), one_f_one_b);
  EXPECT_TRUE(critical_path()->orders_by_time());
  EXPECT_EQ(builtin_schedules().at("critical-path").options->names(),
            (std::vector<std::string>{"max_in_flight", "times"}));
  EXPECT_FALSE(critical_path()->unsupported(PipelineShape{2, 4, 2}).empty());
  EXPECT_FALSE(bind_timings(critical_path(), slow_link())->unsupported(PipelineShape{3, 4, 1}).empty());
  EXPECT_THROW((void)critical_path(0), std::logic_error);  // below the declared range
}

}  // namespace
}  // namespace dnnsim
