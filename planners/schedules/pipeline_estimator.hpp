// A pure evaluation of one pipeline iteration: the timeline the executor (sim/exec) produces for a
// lowered schedule (pipeline_lowering.hpp) when links are not shared, computed in microseconds of
// CPU instead of a SimGrid run. Ada-Grouper uses it to predict the iteration time of each group size
// k from measured times (ada_grouper.hpp); the tests check it against closed forms
// (papers-parallelism.md §1: (M+p−1)(t_f+t_b) for GPipe and 1F1B, M(t_f+t_b) + (p−1)(t_f+t_b)/v
// interleaved), against the 1F1B recurrence of DAPPLE's planner (HPGO, §2.6) and against the simulator.
//
// The model, as the lowering builds the TaskGraph (one stage = one device; replicas are folded into
// one, with the slowest replica's times):
//  - a stage runs its steps one after the other in the schedule's order (its "compute" stream); a
//    forward of virtual stage u > 0 also waits for the activation transfer from u − 1, a backward of
//    u < last for the gradient transfer from u + 1;
//  - each stage has two send streams, "send-next" (activations) and "send-prev" (gradients); each is
//    a FIFO server: a send starts when the compute that produced it has ended and the previous send
//    on that stream has ended, and lasts the boundary's transfer time (no contention between streams);
//  - the iteration ends when every stage has finished its last step plus its tail (gradient
//    all-reduce and optimizer step);
//  - an asynchronous schedule (pipedream-async) is estimated over the whole run: `orders` hold every
//    micro-batch of every iteration, and each backward is followed on its stage by the weight update
//    `update` (the gradient all-reduce over the replicas and the optimizer step), which delays the
//    stage's next step but not the gradient it sends.
#pragma once

#include <vector>

#include "models/common/units.hpp"
#include "planners/schedules/schedule.hpp"

namespace dnnsim {

// Durations of one iteration's work. Virtual stage u = chunk·p + stage; boundary u joins virtual
// stages u and u + 1.
struct PipelineTimings {
  int stages = 1;                            // p
  std::vector<Seconds> forward;              // per virtual stage (p·v), one micro-batch
  std::vector<Seconds> backward;             // per virtual stage, one micro-batch (incl. any recomputation)
  std::vector<Seconds> activation_transfer;  // per boundary u → u + 1 (p·v − 1 of them), one micro-batch
  std::vector<Seconds> gradient_transfer;    // per boundary u + 1 → u, one micro-batch
  std::vector<Seconds> tail;                 // per stage: all-reduce + optimizer after its last step; empty = none
  std::vector<Seconds> update;               // per stage: after each backward (asynchronous schedules); empty = none

  // Uniform stages (p·v virtual stages each taking t_f / t_b, every transfer `transfer`), no tail.
  // @throw std::invalid_argument unless stages ≥ 1 and chunks ≥ 1.
  [[nodiscard]] static PipelineTimings uniform(int stages, int chunks, Seconds forward, Seconds backward,
                                               Seconds transfer = Seconds(0));
};

struct StepTime {
  Seconds start{0};
  Seconds end{0};
};

struct PipelineEstimate {
  std::vector<std::vector<StepTime>> steps;  // [stage][i]: the i-th step of that stage's order
  Seconds iteration{0};                      // max over stages of (last step end + update + tail)
  std::vector<int> peak_in_flight;           // per stage, see peak_in_flight()
};

// The timeline of one iteration that starts at time 0 with `orders[s]` the step order of stage s.
// @throw std::invalid_argument for sizes that do not match `timings` (or a step of a chunk the
// timings do not have), std::logic_error for orders that deadlock (a step waiting for one that can
// only come after it) — both are programming errors of the caller, not user input.
[[nodiscard]] PipelineEstimate estimate_pipeline(const std::vector<std::vector<PipelineStep>>& orders,
                                                 const PipelineTimings& timings);
// The same for `schedule` on `shape` (shape.stages must equal timings.stages).
[[nodiscard]] PipelineEstimate estimate_pipeline(const PipelineSchedule& schedule, const PipelineShape& shape,
                                                 const PipelineTimings& timings);

// The most (micro-batch, chunk) activations a stage holds at once under `order`: +1 at a forward,
// −1 at a backward. For one chunk per stage this is the micro-batches in flight (1F1B min(p−i, M),
// GPipe M, kFkB min(k(p−i), M), DAPPLE K_i); interleaved counts chunk-micro-batches, each A/v.
[[nodiscard]] int peak_in_flight(const std::vector<PipelineStep>& order);

// pipedream-async: the weight versions a stage stashes with `in_flight` micro-batches in flight
// (p − i) and `replicas` replicas, which update their weights once every `replicas` backwards (see
// pipeline_lowering.hpp). Once warm the in-flight micro-batches are L = in_flight consecutive ones,
// forwarded under the versions ⌊(k − L + 1)/r⌋ (the updates before F(k)); L consecutive integers
// divided by r take at most ⌈(L − 1)/r⌉ + 1 values. One replica: L, one version per micro-batch
// (PipeDream's num_versions = warm-up + 1); 15-1's first stage: 2, as each of PipeDream's 15
// round-robin replicas keeps (NOAM = ⌈16/15⌉ = 2).
[[nodiscard]] int stashed_weight_versions(int in_flight, int replicas);

}  // namespace dnnsim
