// The built-in pipeline schedules (schedule.hpp gives each one's source). All but the interleaved
// one are "1F1B over groups": a stage runs some warm-up forwards, then alternates up to k forwards
// and k backwards while forwards remain, then drains its backwards (papers-parallelism.md §1 and
// §3.2). They differ only in k and in the warm-up count:
//   kfkb        k,  warm-up min(k·(p−i−1), M)   → peak in flight min(k·(p−i), M)
//   1f1b        1,  warm-up min(p−i−1, M)       → min(p−i, M)       (kfkb with k = 1)
//   gpipe       M,  warm-up M on every stage but the last, 0 there → M (kfkb with k = M)
//   dapple      1,  warm-up K_i − 1             → K_i
//   pipedream-async  1f1b's order over a whole run's micro-batches (no flush)  → p − i once warm
// Interleaved 1F1B alternates one forward and one backward too, over Megatron's order of
// chunk-micro-batches and its own warm-up count. critical-path (critical_path.hpp) orders by time.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/common/options.hpp"
#include "planners/schedules/critical_path.hpp"
#include "planners/schedules/schedule.hpp"

namespace dnnsim {
namespace {

// `warmup` forwards, then alternately up to `group` forwards and up to `group` backwards while
// forwards remain, then the remaining backwards. Both lists are in the order they are to run.
std::vector<PipelineStep> alternate_groups(const std::vector<PipelineStep>& forwards,
                                           const std::vector<PipelineStep>& backwards, int warmup, int group) {
  std::vector<PipelineStep> order;
  order.reserve(forwards.size() + backwards.size());
  std::size_t next_forward = 0;
  std::size_t next_backward = 0;
  const auto run_forwards = [&](std::size_t count) {
    for (std::size_t end = std::min(forwards.size(), next_forward + count); next_forward < end;)
      order.push_back(forwards[next_forward++]);
  };
  const auto run_backwards = [&](std::size_t count) {
    for (std::size_t end = std::min(backwards.size(), next_backward + count); next_backward < end;)
      order.push_back(backwards[next_backward++]);
  };
  run_forwards(static_cast<std::size_t>(warmup));
  while (next_forward < forwards.size()) {
    run_forwards(static_cast<std::size_t>(group));
    run_backwards(static_cast<std::size_t>(group));
  }
  run_backwards(backwards.size());
  return order;
}

std::vector<PipelineStep> passes_in_micro_batch_order(PassKind pass, int micro_batches) {
  std::vector<PipelineStep> steps;
  for (int j = 0; j < micro_batches; ++j) steps.push_back(PipelineStep{pass, j, 0});
  return steps;
}

// kFkB with k = group(shape) and warm-up min(k·(p−i−1), M) unless a subclass says otherwise.
class GroupedSchedule : public PipelineSchedule {
 public:
  [[nodiscard]] std::vector<PipelineStep> stage_order(int stage, const PipelineShape& shape) const final {
    const int group = std::max(1, std::min(this->group(shape), shape.micro_batches));
    return alternate_groups(passes_in_micro_batch_order(PassKind::forward, shape.micro_batches),
                            passes_in_micro_batch_order(PassKind::backward, shape.micro_batches),
                            warmup(stage, shape, group), group);
  }

 protected:
  [[nodiscard]] virtual int group(const PipelineShape& shape) const = 0;
  [[nodiscard]] virtual int warmup(int stage, const PipelineShape& shape, int group) const {
    return std::min(group * (shape.stages - stage - 1), shape.micro_batches);
  }
};

class GroupOfK : public GroupedSchedule {
 public:
  explicit GroupOfK(int k) : k_(k) {
    if (k < 1) throw std::invalid_argument(fmt::format("kfkb: the group size k must be at least 1, got {}", k));
  }

 private:
  [[nodiscard]] int group(const PipelineShape& /*shape*/) const override { return k_; }
  int k_;
};

OptionSchema kfkb_options() {
  OptionSchema schema;
  schema.integer("group", 1, "k, the micro-batches of a group (at most the workload's micro-batches)").at_least(1);
  return schema;
}

std::shared_ptr<const PipelineSchedule> make_kfkb(const Options& options, int micro_batches) {
  const std::int64_t k = options.integer("group");
  if (micro_batches > 0 && k > micro_batches)
    throw options.error("group", fmt::format("group {} is larger than the {} micro-batches", k, micro_batches));
  return std::make_shared<GroupOfK>(static_cast<int>(k));
}

// Ada-Grouper's schedule: kFkB whose k its controller re-chooses before every iteration
// (ada_grouper.hpp); the first iteration's k is set by the controller too.
class AdaGrouper final : public GroupOfK {
 public:
  explicit AdaGrouper(std::vector<int> candidates)
      : GroupOfK(candidates.empty() ? 1 : candidates.front()), candidates_(std::move(candidates)) {}
  [[nodiscard]] ScheduleAdaptation adaptation() const override {
    return ScheduleAdaptation{ScheduleAdaptation::Kind::group_size, candidates_};
  }
  [[nodiscard]] bool supports_tensor_parallel() const override { return false; }

 private:
  std::vector<int> candidates_;
};

OptionSchema ada_grouper_options() {
  OptionSchema schema;
  schema.integers("candidates", {}, "the group sizes k it may choose from (each at most the micro-batches); none: 1…M")
      .at_least(1);
  return schema;
}

std::shared_ptr<const PipelineSchedule> make_ada_grouper(const Options& options, int micro_batches) {
  std::vector<int> candidates;
  for (std::int64_t k : options.integers("candidates")) {
    if (micro_batches > 0 && k > micro_batches)
      throw options.error("candidates",
                          fmt::format("candidate group size {} is larger than the {} micro-batches", k, micro_batches));
    candidates.push_back(static_cast<int>(k));
  }
  return std::make_shared<AdaGrouper>(std::move(candidates));
}

class GPipe final : public GroupedSchedule {
 public:
  explicit GPipe(bool recompute) : recompute_(recompute) {}
  [[nodiscard]] bool recompute() const override { return recompute_; }

 private:
  [[nodiscard]] int group(const PipelineShape& shape) const override { return shape.micro_batches; }
  bool recompute_;
};

OptionSchema gpipe_options() {
  OptionSchema schema;
  schema.boolean(
      "recompute", false,
      "re-materialization: keep only each stage's input and recompute the forward in the backward (GPipe §2.3)");
  return schema;
}

// DAPPLE §5.3: inject K_i micro-batches, then alternate one backward and one forward.
class Dapple final : public GroupedSchedule {
 public:
  Dapple(char policy, std::optional<int> max_in_flight) : policy_(policy), max_in_flight_(max_in_flight) {
    if (policy != 'A' && policy != 'B')
      throw std::invalid_argument(fmt::format("dapple: policy must be 'A' or 'B', got '{}'", policy));
    if (max_in_flight && *max_in_flight < 1)
      throw std::invalid_argument(fmt::format("dapple: max_in_flight must be at least 1, got {}", *max_in_flight));
  }

 private:
  [[nodiscard]] int group(const PipelineShape& /*shape*/) const override { return 1; }
  [[nodiscard]] int warmup(int stage, const PipelineShape& shape, int /*group*/) const override {
    const int remaining = shape.stages - stage;  // S − i
    const int wanted = policy_ == 'A' ? remaining : 2 * remaining - 1;
    const int injected = std::min({wanted, max_in_flight_.value_or(shape.micro_batches), shape.micro_batches});
    return injected - 1;
  }
  char policy_;
  std::optional<int> max_in_flight_;
};

OptionSchema dapple_options() {
  OptionSchema schema;
  schema.choice("policy", "A", {"A", "B"}, "warm-up K_i: A = min(S−i, D), B = min(2(S−i)−1, D) (DAPPLE §5.3)");
  schema.integer("max_in_flight", std::nullopt, "D, the most micro-batches that fit in memory; none: M").at_least(1);
  return schema;
}

std::shared_ptr<const PipelineSchedule> make_dapple(const Options& options, int /*micro_batches*/) {
  std::optional<int> max_in_flight;
  if (options.has("max_in_flight")) max_in_flight = static_cast<int>(options.integer("max_in_flight"));
  return std::make_shared<Dapple>(options.choice("policy").front(), max_in_flight);
}

// PipeDream (SOSP'19 §3.2): 1F1B's order, asked for over the whole run's micro-batches, since the
// pipeline is never flushed; NOAM = p − i micro-batches in flight on stage i for a straight
// pipeline. PipeDream's replicas take whole minibatches round-robin (NOAM = ⌈workers / input-stage
// replicas⌉); dnnsim's replicas split each micro-batch (DAPPLE's split-concat, pipeline_plan.hpp), so a
// replicated stage is one stage here and p − i holds with replication too.
class PipeDreamAsync final : public GroupedSchedule {
 public:
  [[nodiscard]] bool asynchronous() const override { return true; }

 private:
  [[nodiscard]] int group(const PipelineShape& /*shape*/) const override { return 1; }
};

// Megatron-LM's interleaved 1F1B (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_with_interleaving, with microbatch groups of p): chunk-micro-batch
// step k runs micro-batch (k div p·v)·p + k mod p on chunk (k mod p·v) div p for forwards and on
// chunk v−1−that for backwards; rank r warms up with min(2(p−r−1) + (v−1)·p, M·v) forward steps (all
// M·v when M == p, as Megatron does), then alternates one forward and one backward.
//
// overlap_p2p: Megatron-Core's overlap_p2p_comm, on by default for the interleaved schedule since
// `--no-overlap-p2p-communication` (megatron/training/arguments.py; argument_utils.py sets
// batch_p2p_comm = not overlap_p2p_comm): the sends are plain isend/irecv whose handles are waited on
// the GPU stream, so _communicate's torch.cuda.synchronize() (only `if batch_p2p_comm and
// batch_p2p_sync`, megatron/core/pipeline_parallel/p2p_communication.py) does not run. Off: the
// SC'21-era batched sends, each followed by the host's synchronize.
class Interleaved final : public PipelineSchedule {
 public:
  Interleaved(int chunks, bool planner_chooses, bool overlap_p2p)
      : chunks_(chunks), planner_chooses_(planner_chooses), overlap_p2p_(overlap_p2p) {
    if (chunks < 2)
      throw std::invalid_argument(fmt::format("interleaved: chunks (v) must be at least 2, got {}", chunks));
  }
  [[nodiscard]] int chunks() const override { return chunks_; }
  [[nodiscard]] bool planner_chooses_chunks() const override { return planner_chooses_; }
  // Megatron runs interleaving over one chunk as plain 1F1B (virtual pipeline size 1 is no virtual
  // pipeline), and reports call it so.
  [[nodiscard]] RechunkedSchedule with_chunks(int chunks) const override {
    if (chunks == 1) return RechunkedSchedule{make_group_schedule(1), "1f1b"};
    return RechunkedSchedule{std::make_shared<Interleaved>(chunks, false, overlap_p2p_), "interleaved"};
  }
  [[nodiscard]] bool host_synchronizes_sends() const override { return !overlap_p2p_; }

  [[nodiscard]] std::string unsupported(const PipelineShape& shape) const override {
    if (shape.stages < 2) return "interleaved 1F1B needs at least 2 stages";
    if (shape.chunks != chunks_)
      return fmt::format("interleaved 1F1B with {} chunks needs a plan of {} chunks per stage, got {}", chunks_,
                         chunks_, shape.chunks);
    if (shape.micro_batches % shape.stages != 0)
      return fmt::format("interleaved 1F1B needs the micro-batches ({}) to be a multiple of the stages ({})",
                         shape.micro_batches, shape.stages);
    return {};
  }

  [[nodiscard]] std::vector<PipelineStep> stage_order(int stage, const PipelineShape& shape) const override {
    const int p = shape.stages;
    const int v = chunks_;
    const int total = shape.micro_batches * v;
    std::vector<PipelineStep> forwards;
    std::vector<PipelineStep> backwards;
    for (int k = 0; k < total; ++k) {
      const int micro_batch = (k / (p * v)) * p + k % p;
      const int chunk = (k % (p * v)) / p;
      forwards.push_back(PipelineStep{PassKind::forward, micro_batch, chunk});
      backwards.push_back(PipelineStep{PassKind::backward, micro_batch, v - 1 - chunk});
    }
    const int warmup = shape.micro_batches == p ? total : std::min(2 * (p - stage - 1) + (v - 1) * p, total);
    return alternate_groups(forwards, backwards, warmup, 1);
  }

 private:
  int chunks_;
  bool planner_chooses_;
  bool overlap_p2p_;
};

OptionSchema interleaved_options() {
  OptionSchema schema;
  schema.integer("chunks", 2, "v, model chunks per stage; auto: the planner chooses v (1 runs plain 1F1B)")
      .range(2, 1024)
      .keywords({"auto"});
  schema.boolean("overlap_p2p", false,
                 "Megatron-Core's overlap_p2p_comm: the pipeline sends are waited on the GPU, no host synchronize "
                 "after them (false: SC'21-era batched sends with torch.cuda.synchronize)");
  return schema;
}

std::shared_ptr<const PipelineSchedule> make_interleaved(const Options& options, int /*micro_batches*/) {
  return std::make_shared<Interleaved>(static_cast<int>(options.integer("chunks")),
                                       options.keyword("chunks").has_value(), options.flag("overlap_p2p"));
}

std::shared_ptr<const PipelineSchedule> make_pipedream_async(const Options& /*options*/, int /*micro_batches*/) {
  return std::make_shared<PipeDreamAsync>();
}

std::shared_ptr<const PipelineSchedule> make_1f1b(const Options& /*options*/, int /*micro_batches*/) {
  return make_group_schedule(1);
}

std::shared_ptr<const PipelineSchedule> make_gpipe(const Options& options, int /*micro_batches*/) {
  return std::make_shared<GPipe>(options.flag("recompute"));
}

ScheduleRegistry make_builtin_schedules() {
  ScheduleRegistry registry("schedule");
  registry.add("gpipe",
               "all forwards then all backwards (fill-drain); iteration (M+p−1)(t_f+t_b), M micro-batches in flight; "
               "optional re-materialization",
               "Huang et al., GPipe, NeurIPS'19 §2.3", make_gpipe, gpipe_options());
  registry.add("1f1b", "one-forward-one-backward with a flush (PipeDream-Flush); bubble (p−1)/M, min(p−i, M) in flight",
               "Narayanan et al., ICML'21; Megatron-LM SC'21 §2.2.1", make_1f1b);
  registry.add("dapple",
               "early backward: K_i micro-batches injected, then 1F1B; policy A K_i = min(S−i, D), "
               "B K_i = min(2(S−i)−1, D)",
               "Fan et al., DAPPLE, PPoPP'21 §5.3", make_dapple, dapple_options());
  registry.add("interleaved", "interleaved 1F1B over v model chunks per stage; bubble (p−1)/(v·M), needs M % p == 0",
               "Narayanan et al., Megatron-LM SC'21 §2.2.2; Megatron schedules.py", make_interleaved,
               interleaved_options());
  registry.add("kfkb", "1F1B over groups of k micro-batches: k forwards then k backwards; min(k(p−i), M) in flight",
               "Wang et al., Ada-Grouper, arXiv:2303.01675 (kFkB)", make_kfkb, kfkb_options());
  registry.add("ada-grouper",
               "kfkb whose k is re-chosen every iteration from measured stage and transfer times, "
               "under the memory limit (-like: paper text unavailable)",
               "Wang et al., Ada-Grouper, arXiv:2303.01675 (abstract); papers-parallelism.md §3.2", make_ada_grouper,
               ada_grouper_options());
  registry.add("pipedream-async",
               "asynchronous 1F1B with weight stashing: no flush, one stream of N·M micro-batches, "
               "a weight update per backward (per r with r replicas); p−i in flight, p−i stashed weight versions",
               "Narayanan et al., PipeDream, SOSP'19 §3.2–3.3", make_pipedream_async);
  registry.add("critical-path",
               "list scheduling by the plan's predicted stage and transfer times: the longest remaining path "
               "first, so a free stage never waits while a step it may run has arrived; min(D or p−i, M) in flight "
               "(-like: paper text unavailable)",
               "Luo et al., Efficient Pipeline Planning, INFOCOM'22 (abstract); papers-parallelism.md §4.2",
               make_critical_path_schedule, critical_path_options());
  return registry;
}

}  // namespace

std::shared_ptr<const PipelineSchedule> make_group_schedule(int k) { return std::make_shared<GroupOfK>(k); }

const ScheduleRegistry& builtin_schedules() {
  static const ScheduleRegistry registry = make_builtin_schedules();
  return registry;
}

}  // namespace dnnsim
