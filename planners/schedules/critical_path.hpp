// The critical-path schedule: a micro-batch ordering computed from the stages' predicted times by
// list scheduling, "-like" Luo et al., "Efficient Pipeline Planning for Expedited Distributed DNN
// Training", INFOCOM'22 (arXiv:2204.10562). Only the abstract could be found (papers-parallelism.md
// §4: "a pipeline scheduler that decides processing order of microbatches over the partitions");
// this implements §4.2's proposal, HLFET list scheduling (Adam, Chandy, Dickson, CACM 1974: highest
// level — longest remaining path — first, with estimated times) of every micro-batch's forward and
// backward on the stages, subject to a memory cap, in the timing model of the pipeline estimator.
//
// Whenever a stage is free it runs, of the steps whose input has arrived, the one with the longest
// path to the iteration's end. A forward's path runs through every later stage and back through
// every backward, so it is longer than any backward on the same stage, and micro-batches are alike:
// the rule is "the next forward if it has arrived and the stage holds fewer than its cap of
// micro-batches, otherwise the earliest backward that has arrived, otherwise wait for whichever
// comes first". Unlike the fixed orders (1F1B alternates strictly once warm), a stage never idles
// while a step it may run is waiting: a slow transfer or a slow neighbour shifts the order to what
// has arrived. The cap is stage i's micro-batches in flight: p − i (1F1B's peak, so the same memory)
// or `max_in_flight` D on every stage (D ≥ p − i keeps more micro-batches moving while a slow link
// drains; D = M is a work-conserving GPipe).
//
// What differs from the paper, as far as the abstract tells: its scheduler is "near-optimal with
// theoretical analysis" and decides the order jointly with partition and device mapping; this one is
// a greedy list schedule run after the partition is chosen (the planners re-rank with it when it is
// the scenario's schedule), with no optimality bound.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "models/common/options.hpp"
#include "planners/schedules/pipeline_estimator.hpp"

namespace dnnsim {

// The step order of every stage for `shape` (one model chunk per stage) under `timings`, and the
// stages' caps: min(max_in_flight or p − i, M). Deterministic: ties go to the lower stage, then to
// the forward, then to the lower micro-batch.
// @throw std::invalid_argument when timings do not match the shape (programming error).
[[nodiscard]] std::vector<std::vector<PipelineStep>> critical_path_orders(const PipelineShape& shape,
                                                                          const PipelineTimings& timings,
                                                                          std::optional<int> max_in_flight);

// The schedule "critical-path" and its options: `max_in_flight` (D; none: p − i) and `times`
// (predicted: ordered once for the plan's predicted times; measured: re-ordered before every iteration
// for the times the last one measured). Until bind_timings gives it predicted times it orders by unit
// times (t_f = 1, t_b = 2, no transfer), which reach every stage's cap, so the memory its orders
// promise is the bound's: min(cap_i, M) micro-batches in flight on stage i.
[[nodiscard]] OptionSchema critical_path_options();
[[nodiscard]] std::shared_ptr<const PipelineSchedule> make_critical_path_schedule(const Options& options,
                                                                                  int micro_batches);

// `schedule` ordered for `predicted` when it orders by time (PipelineSchedule::orders_by_time), else
// `schedule` itself.
[[nodiscard]] std::shared_ptr<const PipelineSchedule> bind_timings(std::shared_ptr<const PipelineSchedule> schedule,
                                                                   const PipelineTimings& predicted);

}  // namespace dnnsim
