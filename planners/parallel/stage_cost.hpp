// The cost of a candidate pipeline stage and of a whole candidate plan, shared by every planner so
// that they rank plans with one set of rules (docs/planners.md, "Shared stage costs"):
//
//  - compute: forward and backward time of one micro-batch through a layer range on a device group.
//    The micro-batch is split evenly across the replicas (replica_share, DAPPLE Fig. 8a) and the
//    stage takes as long as its slowest replica; each replica's time is layer_time(), the cost model
//    the simulator runs (planners/common/layer_cost.hpp).
//  - cut: the split-concat of one micro-batch's activations (forward) or their gradients (backward)
//    between two device groups (DAPPLE §4.2, Fig. 8a; HPGO split_concat.rs, papers-parallelism.md
//    §2.6): sender replica i sends receiver replica j the samples both hold, α + bytes/β on their
//    path; a device sends, and receives, its pieces one after another, and the cut takes as long as
//    the busiest sender or receiver.
//  - all_reduce: the all-reduce of a stage's gradients over its replicas, once per iteration, as the
//    time it adds after the stage's last backward. One all-reduce is the faster of a ring over the
//    group in device order (bound by its slowest edge) and, when the group has the same number g > 1
//    of GPUs on each of n > 1 nodes, the hierarchical all-reduce with the node NIC shared by the g
//    inter-node rings unless each GPU has its own (all_reduce_paths.hpp). With PlanRequest::overlap_all_reduce (the
//    default) the gradients are all-reduced in buckets (gradient_buckets) overlapped with the last
//    micro-batch's backward, as the lowering runs them, and only the part that outlasts that backward
//    counts; without it, the whole all-reduce of the stage's gradients.
//  - memory: training_memory() of the stage's layers with the micro-batch share, the request's
//    in-flight count and ZeRO over the replicas, against the smallest GPU of the group; under an
//    asynchronous schedule (pipedream-async) its stashed weight versions (stashed_weight_versions:
//    p − i for one replica).
//  - Formula 2 of DAPPLE (Fan et al., PPoPP'21 §4.1): the pivot stage (Algorithm 1) and the
//    latency L = T_w + T_s + T_e of a synchronous pipeline, with every cut as a network stage.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "planners/common/all_reduce_paths.hpp"
#include "planners/common/layer_cost.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/schedules/pipeline_estimator.hpp"

namespace dnnsim {

// A stage of a candidate plan: contiguous layers on a group of replicas (one model chunk).
struct StageSpec {
  LayerRange layers;
  std::vector<DeviceId> devices;
  friend bool operator==(const StageSpec&, const StageSpec&) = default;
};

// Time of one micro-batch through a stage.
struct PassTimes {
  Seconds forward{0};
  Seconds backward{0};
};

class StageCostModel {
 public:
  // Keeps a reference to `request`, which must outlive the model.
  explicit StageCostModel(const PlanRequest& request);

  [[nodiscard]] const PlanRequest& request() const { return request_; }
  [[nodiscard]] std::size_t layer_count() const { return request_.model.layers.size(); }
  [[nodiscard]] std::size_t device_count() const { return request_.cluster.size(); }
  [[nodiscard]] int micro_batch_size() const { return request_.global_batch / request_.micro_batches; }

  [[nodiscard]] PassTimes compute(LayerRange layers, std::span<const DeviceId> devices) const;
  // Forward + backward of a whole micro-batch on one device (PipeDream's per-layer T_l, summed).
  [[nodiscard]] Seconds single_device_time(LayerRange layers, DeviceId device) const;
  // Gradient bytes of the layers: Σ parameter_bytes / 4 parameters × the precision's gradient bytes.
  [[nodiscard]] Bytes gradient_bytes(LayerRange layers) const;
  // Output activation of layer `last` for a whole micro-batch.
  [[nodiscard]] Bytes cut_bytes(std::size_t last) const;
  // What the stage's gradient all-reduce adds after its last backward (see above).
  [[nodiscard]] Seconds all_reduce(LayerRange layers, std::span<const DeviceId> devices) const;
  // Split-concat of the output of layer `last` from `from` to `to` (one direction, one micro-batch).
  [[nodiscard]] Seconds cut(std::size_t last, std::span<const DeviceId> from, std::span<const DeviceId> to) const;

  struct Prefix {
    std::vector<double> forward, backward;  // Σ over layers [0, l) of the GPU time for the share
    Seconds host_overhead{0};               // the GPU's launch model's h (issued_time), 0 without
  };
  // The exposed all-reduce of every layer range already priced for one (links, distinct timings):
  // [begin][end − begin], NaN where not yet priced. Dense, not hashed: a search asks for it twice per
  // candidate scored (millions of times), and stages begin only at block boundaries, so the rows
  // allocated stay few.
  struct ExposedTable {
    std::vector<std::vector<double>> rows;  // [begin][end − begin]
    // [begin] for the ranges that end at the last layer, the searches' last stages: one contiguous
    // row, read at every cut.
    std::vector<double> to_last;
  };
  // What compute and all_reduce need of a device group apart from the layers, looked up once per
  // group (memoized by the devices, in order) so that a search pricing many layer ranges on the same
  // groups does not repeat it; the overloads taking it give the same numbers, to the bit, as those
  // taking the devices.
  struct GroupCosts {
    int replicas = 0;
    std::vector<const Prefix*> timings;     // each distinct replica timing (GPU class, samples) once, in replica order
    const AllReducePaths* links = nullptr;  // null for one replica
    // Shared by the groups with the same links and distinct (GPU class, samples) timings in replica
    // order when there are at most kMemoTimings of them; null otherwise (priced every time).
    static constexpr std::size_t kMemoTimings = 4;
    ExposedTable* exposed = nullptr;
  };
  [[nodiscard]] const GroupCosts& group_costs(std::span<const DeviceId> devices) const;
  // Inline: the searches call it twice per candidate, tens of millions of times. A stage's pass is
  // one task of one kernel per layer, issued by the host under a launch model (issued_time).
  [[nodiscard]] PassTimes compute(LayerRange layers, const GroupCosts& group) const {
    PassTimes slowest_replica;
    for (const Prefix* p : group.timings) {
      slowest_replica.forward = std::max(
          slowest_replica.forward,
          issued_time(Seconds(p->forward[layers.end] - p->forward[layers.begin]), layers.size(), p->host_overhead));
      slowest_replica.backward = std::max(
          slowest_replica.backward,
          issued_time(Seconds(p->backward[layers.end] - p->backward[layers.begin]), layers.size(), p->host_overhead));
    }
    return slowest_replica;
  }
  [[nodiscard]] Seconds all_reduce(LayerRange layers, const GroupCosts& group) const;
  // The transfers of a cut from one group to another (sender, receiver, samples, path), in the order
  // cut() sums them; only the bytes per sample depend on the layer cut after.
  struct CutPattern {
    struct Transfer {
      int sender = 0, receiver = 0, samples = 0;
      PathCost path;
    };
    int senders = 0, receivers = 0;
    std::vector<Transfer> transfers;
  };
  [[nodiscard]] CutPattern cut_pattern(std::span<const DeviceId> from, std::span<const DeviceId> to) const;
  // The same into `pattern`, reusing its storage (a search builds one per candidate group).
  void cut_pattern(std::span<const DeviceId> from, std::span<const DeviceId> to, CutPattern& pattern) const;
  [[nodiscard]] Seconds cut(std::size_t last, const CutPattern& pattern) const;

  // Peak in-flight micro-batches of stage `stage` of `stages` (the request's rule, else 1F1B's);
  // memoized (the request's rule runs the schedule's order).
  [[nodiscard]] int in_flight(int stage, int stages) const;
  // Whether the request's schedule stashes weight versions (PipelineSchedule::asynchronous).
  [[nodiscard]] bool stashes_weights() const { return request_.schedule && request_.schedule->asynchronous(); }
  // An end that no stage starting at `begin` on `replicas` GPUs with at least `micro_batches_in_flight`
  // in flight can exceed, whatever its GPUs (the largest GPU of the cluster), so that a search can
  // bound the GPUs a suffix of the layers needs.
  [[nodiscard]] std::size_t max_stage_end(std::size_t begin, int replicas, int micro_batches_in_flight) const;
  [[nodiscard]] bool fits(LayerRange layers, std::span<const DeviceId> devices, int stage, int stages) const;
  // The largest end of a stage from `begin` on `devices` that fits (fits() is end <= it).
  [[nodiscard]] std::size_t max_fitting_end(std::size_t begin, std::span<const DeviceId> devices, int stage,
                                            int stages) const;
  // "out of memory on node0/gpu3: needs …" when the stage does not fit, else empty.
  [[nodiscard]] std::string memory_problem(LayerRange layers, std::span<const DeviceId> devices, int stage,
                                           int stages) const;

 private:
  // What a stage's memory depends on besides its layers (TrainingMemoryConfig's varying fields) and
  // the smallest memory of its GPUs: the key of fitting_end's memo.
  struct FitKey {
    std::size_t begin = 0;
    int micro_batch = 0;
    int in_flight = 0;
    int stashed_weight_versions = 0;
    int data_parallel = 0;
    double capacity = 0;
    bool operator==(const FitKey&) const = default;
  };
  struct FitKeyHash {
    std::size_t operator()(const FitKey& key) const;
  };
  FitKey fit_key(std::size_t begin, int replicas, int micro_batches_in_flight, double capacity) const;
  TrainingMemoryConfig memory_config(const FitKey& key) const;
  TrainingMemoryConfig memory_config(std::span<const DeviceId> devices, int stage, int stages) const;
  const Prefix& prefix(std::size_t device_class, int samples) const;
  // The largest end such that layers [key.begin, end) need at most key.capacity bytes.
  std::size_t fitting_end(const FitKey& key) const;

  // The path between two devices: from the table below, else asked of the cluster view.
  [[nodiscard]] PathCost path(DeviceId from, DeviceId to) const {
    return paths_.empty() ? request_.cluster.path(from, to) : paths_[from * request_.cluster.size() + to];
  }

  const PlanRequest& request_;
  // Every pair's path, [from · n + to], for views of up to kTabledPathDevices devices (else empty):
  // the searches price cuts between the same few GPUs millions of times, and a view's path function
  // (a call through std::function and a row check each) cost pipeline-mapping ~7% on GPT-2 XL.
  static constexpr std::size_t kTabledPathDevices = 512;
  std::vector<PathCost> paths_;
  // request_.memory without its per-layer input sizes (sliced per range where needed), copied for
  // every stage priced: without the vector the copy allocates nothing.
  TrainingMemoryConfig memory_base_;
  std::vector<std::size_t> device_class_;  // devices with one GPU model and efficiency share timings
  std::vector<double> parameter_prefix_;   // Σ parameter_bytes of layers [0, l)
  // With overlap_all_reduce: [top] the first layer of the gradient bucket that closes walking down
  // from layer top − 1 (gradient_buckets over [0, top)), kNoFloor when the layers below never fill one.
  static constexpr std::size_t kNoFloor = static_cast<std::size_t>(-1);
  std::vector<std::size_t> bucket_floor_;
  // The paths an all-reduce over a group runs on, which depend on the group only (memoized: the
  // searches ask for the same groups with many layer ranges).
  const AllReducePaths& all_reduce_links(std::span<const DeviceId> devices) const;

  // [device class][samples], built on first use (a search asks for them once per candidate group).
  mutable std::vector<std::vector<std::unique_ptr<Prefix>>> prefixes_;
  mutable std::vector<std::vector<int>> in_flight_;  // [stages][stage] → in_flight, 0 until asked
  // Groups → their links, one object per distinct set of link costs (many groups share them, so the
  // memo below, keyed by the object, stays small).
  // Transparent, so that a group is found by the span a search holds without copying it.
  struct GroupHash {
    using is_transparent = void;
    std::size_t operator()(std::span<const DeviceId> group) const;
  };
  struct GroupEqual {
    using is_transparent = void;
    bool operator()(std::span<const DeviceId> a, std::span<const DeviceId> b) const { return std::ranges::equal(a, b); }
  };
  // Hashed, not ordered: asked once per candidate group and never iterated.
  mutable std::unordered_map<std::vector<DeviceId>, const AllReducePaths*, GroupHash> all_reduce_links_;
  mutable std::vector<std::unique_ptr<AllReducePaths>> distinct_links_;
  // Group (devices in order) → its costs; node-based, so the references handed out stay valid.
  mutable std::unordered_map<std::vector<DeviceId>, GroupCosts, GroupHash, GroupEqual> group_costs_;
  // (the group's links, its replicas' distinct timings) → the exposed overlapped all-reduce table
  struct ExposedKey {
    const AllReducePaths* links = nullptr;
    std::array<std::pair<std::size_t, int>, GroupCosts::kMemoTimings> timings{};  // (GPU class, samples)
    friend auto operator<=>(const ExposedKey&, const ExposedKey&) = default;
  };
  mutable std::map<ExposedKey, ExposedTable> exposed_all_reduce_;
  // Hashed: the searches ask once per candidate group.
  mutable std::unordered_map<FitKey, std::size_t, FitKeyHash> fitting_end_;
};

// One entry of DAPPLE's Formula 2: a computation stage, or a network stage (a cut, all_reduce = 0).
struct Formula2Stage {
  Seconds forward{0};
  Seconds backward{0};
  Seconds all_reduce{0};
};

// Formula 2 for a given pivot Q: L(Q) = Σ_{s≤Q} F_s + (M−1)(F_Q+B_Q) + max_s (AR_s + {Σ_{a=s..Q} B_a
// if s ≤ Q; −Σ_{a=Q..s} B_a if s > Q}), the sign of the s > Q branch as the paper prints it. Each
// L(Q) is a critical path of the iteration: the first micro-batch reaching Q, Q's M − 1 further
// forward/backward pairs, then its last backward flowing down to the stage whose all-reduce ends last.
//
// The pivot: the Q with the largest L(Q) (ties: the later stage), computed for every Q in O(S).
// DAPPLE's Algorithm 1 scans from the last stage and moves the pivot to s when
// (M−1)(F_s+B_s) > (M−1)(F_Q+B_Q) + Σ_{s<a<Q}(F_a+B_a); L(s) > L(Q) needs Σ_{s<a≤Q} instead (Q's own
// forward and backward are on s's critical path too). On near-equal stages Algorithm 1 then picks an
// early pivot and Formula 2 drops every later stage's F + B: the DP exploited that (BERT-48 on 2×8,
// predicted 0.825 s, simulated 1.04 s; docs/planners.md). The largest L(Q) is Algorithm 1's intent
// without that slip, and it makes the search's prefix dominance exact (formula2_search.hpp).
[[nodiscard]] std::size_t pivot_stage(const std::vector<Formula2Stage>& stages, int micro_batches);
// L = max_Q L(Q), Formula 2 at the pivot.
[[nodiscard]] Seconds formula2_latency(const std::vector<Formula2Stage>& stages, int micro_batches);

// The Formula 2 entries of consecutive stages: stage, cut, stage, cut, …, stage.
void append_formula2_stage(const StageCostModel& cost, std::vector<Formula2Stage>& entries, const StageSpec* previous,
                           const StageSpec& stage);
[[nodiscard]] std::vector<Formula2Stage> formula2_stages(const StageCostModel& cost,
                                                         const std::vector<StageSpec>& stages);

struct PlanEvaluation {
  Seconds latency{0};   // Formula 2
  std::string problem;  // the first stage that does not fit in memory; empty when all fit
};
[[nodiscard]] PlanEvaluation evaluate_synchronous(const StageCostModel& cost, const std::vector<StageSpec>& stages);
// A whole plan as the chain of its virtual stages (chunk c of stage s is virtual stage c·p + s, on
// stage s's GPUs): exact Formula 2 for one chunk per stage, a bound for interleaved plans.
[[nodiscard]] PlanEvaluation evaluate_plan(const StageCostModel& cost, const PipelinePlan& plan);

// The per-micro-batch times of single-chunk stages under the planners' costs: each stage's forward,
// backward and exposed all-reduce (its tail), each cut's transfer both ways. What the estimator
// below times and what a schedule that orders by time (critical-path) is ordered for.
[[nodiscard]] PipelineTimings predicted_timings(const StageCostModel& cost, const std::vector<StageSpec>& stages);

// The iteration time of single-chunk stages by the pipeline estimator (pipeline_estimator.hpp) under
// the request's schedule (1f1b when it has none): the same forward, backward, cut and all-reduce costs
// as Formula 2 (each cut both ways, the exposed all-reduce as the stage's tail), but the schedule's
// exact timeline, so the pivot's bubbles that Formula 2 leaves out count. The re-ranking of dapple and
// pipeline-mapping (formula2_search.hpp). Under an asynchronous schedule (pipedream-async): the
// steady-state iteration of a run that is never flushed, a stage of r replicas paying 1/r of its
// exposed all-reduce after every backward (it all-reduces once every r). A schedule that orders by
// time is ordered for these stages' predicted_timings first.
[[nodiscard]] Seconds estimate_synchronous(const StageCostModel& cost, const std::vector<StageSpec>& stages);

// The PipelinePlan of single-chunk stages, with the request's batch and micro-batch count.
[[nodiscard]] PipelinePlan make_plan(const std::vector<StageSpec>& stages, const PlanRequest& request);

// Why a request cannot be planned at all (no layer, no device, bad batch split, chunks > 1 for a
// planner without interleaving), or empty. Planners start with it so that they never throw.
[[nodiscard]] std::string request_problem(const PlanRequest& request, bool supports_chunks);

// A result with feasible = false.
[[nodiscard]] PlanResult infeasible(std::string reason, std::string cost_model, std::size_t candidates,
                                    double wall_seconds);

}  // namespace dnnsim
