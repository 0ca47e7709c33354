// Pipeline schedules: the order in which each stage runs the forward and backward passes of the
// micro-batches of one iteration. One interface, one registry (`dnnsim list schedules`); the
// lowering (pipeline_lowering.hpp) turns a plan plus a schedule into TaskGraph tasks.
//
// Schedules and their sources (closed forms in docs/schedules.md, docs/research/papers-parallelism.md §1):
//  - gpipe: all forwards, then all backwards (Huang et al., "GPipe", NeurIPS'19 §2.3), optionally
//    with re-materialization (only stage inputs are kept; each backward recomputes its forward).
//  - 1f1b: PipeDream-Flush (Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN Training",
//    ICML'21; Megatron-LM SC'21 §2.2.1): stage i runs min(p−i−1, M) warm-up forwards, then
//    alternates one forward and one backward.
//  - dapple: DAPPLE's early-backward schedule (Fan et al., PPoPP'21 §5.3): K_i micro-batches are
//    injected, then one forward and one backward alternate; policy A: K_i = min(S−i, D), policy B:
//    K_i = min(2(S−i)−1, D), D the most micro-batches that fit in memory.
//  - interleaved: Megatron's interleaved 1F1B (SC'21 §2.2.2) over v model chunks per stage; warm-up
//    of rank r is min(2(p−r−1) + (v−1)·p, M·v) chunk-steps, all M·v when M == p (Megatron's
//    schedules.py); needs M % p == 0.
//  - kfkb: 1F1B over groups of k micro-batches (Ada-Grouper, Wang et al., arXiv:2303.01675):
//    k·(p−i−1) warm-up forwards, then k forwards and k backwards alternate. k = 1 is 1f1b, k = M gpipe.
//  - ada-grouper: kfkb whose k is chosen again before every iteration from the times measured in the
//    previous one (ada_grouper.hpp).
//  - pipedream-async: PipeDream's asynchronous 1F1B with weight stashing (Narayanan et al.,
//    "PipeDream: Generalized Pipeline Parallelism for DNN Training", SOSP'19 §3.2–3.3): 1F1B's order
//    over the whole run, with no flush: a run of N iterations of M micro-batches is one stream of
//    N·M micro-batches (warm-up and drain once), each stage updates its weights after every
//    backward (a stage of r replicas after every r-th: PipeDream's sync per sample), and a forward's
//    weight version is stashed for its backward — an unreplicated stage i keeps p − i versions
//    (PipeDream's runtime: num_versions = warm-up + 1) besides its working weights.
//  - critical-path: list scheduling by the stages' predicted times, longest remaining path first,
//    under a per-stage cap of micro-batches in flight ("-like" Luo et al., INFOCOM'22; critical_path.hpp).
// gpipe, 1f1b, dapple and kfkb share one "1F1B over groups" core (schedules.cpp): warm-up forwards,
// then up to k forwards and k backwards alternate; 1f1b is k = 1, gpipe k = M, dapple k = 1 with
// K_i − 1 warm-up forwards.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/registry.hpp"

namespace dnnsim {

enum class PassKind { forward, backward };

struct PipelineTimings;  // pipeline_estimator.hpp

// One pass of one micro-batch through one model chunk of a stage.
struct PipelineStep {
  PassKind pass = PassKind::forward;
  int micro_batch = 0;
  int chunk = 0;
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

struct PipelineShape {
  int stages = 1;         // p
  int micro_batches = 1;  // M
  int chunks = 1;         // v, model chunks per stage
};

// How a schedule changes its order between iterations of a run (PipelineSchedule::adaptation):
// group_size re-chooses kFkB's k before every iteration from the times the last one measured
// (Ada-Grouper, ada_grouper.hpp), among `group_candidates` (empty: 1…M); measured_order re-orders for
// the measured times (critical-path with `times: measured`).
struct ScheduleAdaptation {
  enum class Kind { none, group_size, measured_order };
  Kind kind = Kind::none;
  std::vector<int> group_candidates;
};

class PipelineSchedule;

// A schedule that the planner re-made with the chunks per stage it chose (`chunks: auto`), and the
// registry name reports give it (interleaved over one chunk is 1F1B).
struct RechunkedSchedule {
  std::shared_ptr<const PipelineSchedule> schedule;
  std::string name;
};

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  // The steps of stage `stage` (0-based) in execution order: every micro-batch's forward and
  // backward for every chunk, each once, a backward after its forward.
  [[nodiscard]] virtual std::vector<PipelineStep> stage_order(int stage, const PipelineShape& shape) const = 0;
  // Model chunks per stage the schedule needs (interleaved: v; the others 1).
  [[nodiscard]] virtual int chunks() const { return 1; }
  // Whether backward passes recompute their forward (activation re-materialization).
  [[nodiscard]] virtual bool recompute() const { return false; }
  // Shapes the schedule cannot run (interleaved needs M % p == 0): the reason, or empty.
  [[nodiscard]] virtual std::string unsupported(const PipelineShape& /*shape*/) const { return {}; }
  // PipeDream's asynchronous pipeline (pipedream-async): no flush between iterations, so the run is
  // ONE order over all its micro-batches (stage_order with shape.micro_batches = iterations × M); a
  // weight update after every backward (every r-th with r replicas) and stashed weight versions
  // (pipeline_lowering.hpp, stashed_weight_versions in pipeline_estimator.hpp).
  // Synchronous schedules (every other one) order one iteration and update once per iteration.
  [[nodiscard]] virtual bool asynchronous() const { return false; }
  // Whether the order depends on the steps' durations (critical-path, critical_path.hpp): such a
  // schedule is run as for_timings(the plan's predicted times) (bind_timings); the others order by
  // shape alone and return nullptr.
  [[nodiscard]] virtual bool orders_by_time() const { return false; }
  [[nodiscard]] virtual std::shared_ptr<const PipelineSchedule> for_timings(
      const PipelineTimings& /*predicted*/) const {
    return nullptr;
  }
  // Whether and how the order changes between the iterations of a run (ScheduleAdaptation).
  [[nodiscard]] virtual ScheduleAdaptation adaptation() const { return {}; }
  // Whether the scenario left the chunks per stage to a planner that chooses them (`chunks: auto`);
  // with_chunks then makes the schedule for the planner's choice.
  [[nodiscard]] virtual bool planner_chooses_chunks() const { return false; }
  [[nodiscard]] virtual RechunkedSchedule with_chunks(int /*chunks*/) const {
    throw std::logic_error("with_chunks: this schedule's chunks are not chosen by a planner");
  }
  // Whether a host that launches kernels (a calibration's launch model) waits for each pipeline
  // send it issues and for each receive before the kernels that consume it (torch.cuda.synchronize
  // after Megatron's batched point-to-point calls); false when the sends are waited on the GPU only.
  [[nodiscard]] virtual bool host_synchronizes_sends() const { return true; }
  // Whether it runs with tensor parallelism (Megatron's keys) under its lowering; Ada-Grouper's
  // controller re-lowers without it.
  [[nodiscard]] virtual bool supports_tensor_parallel() const { return true; }
};

// Makes a schedule from its declared options (Registry::Entry::options). `micro_batches`: the
// workload's M, which some options are checked against (kfkb's group ≤ M), 0 when not known.
// @throw InputError located at the offending option (Options::error).
using ScheduleFactory =
    std::function<std::shared_ptr<const PipelineSchedule>(const Options& options, int micro_batches)>;
using ScheduleRegistry = Registry<ScheduleFactory>;

// kFkB with group k (1F1B for k = 1), as Ada-Grouper's controller and estimator run it.
[[nodiscard]] std::shared_ptr<const PipelineSchedule> make_group_schedule(int k);

// gpipe, 1f1b, dapple, interleaved, kfkb, ada-grouper, pipedream-async, critical-path, in that order.
[[nodiscard]] const ScheduleRegistry& builtin_schedules();

}  // namespace dnnsim
