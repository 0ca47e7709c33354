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

class GroupOfK final : public GroupedSchedule {
 public:
  explicit GroupOfK(int k) : k_(k) {
    if (k < 1) throw std::invalid_argument(fmt::format("kfkb: the group size k must be at least 1, got {}", k));
  }

 private:
  [[nodiscard]] int group(const PipelineShape& /*shape*/) const override { return k_; }
  int k_;
};

class GPipe final : public GroupedSchedule {
 public:
  explicit GPipe(bool recompute) : recompute_(recompute) {}
  [[nodiscard]] bool recompute() const override { return recompute_; }

 private:
  [[nodiscard]] int group(const PipelineShape& shape) const override { return shape.micro_batches; }
  bool recompute_;
};

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
class Interleaved final : public PipelineSchedule {
 public:
  explicit Interleaved(int chunks) : chunks_(chunks) {
    if (chunks < 2)
      throw std::invalid_argument(fmt::format("interleaved: chunks (v) must be at least 2, got {}", chunks));
  }
  [[nodiscard]] int chunks() const override { return chunks_; }

  [[nodiscard]] std::string unsupported(const PipelineShape& shape) const override {
    if (shape.stages < 2) return "interleaved 1F1B needs at least 2 stages";
    if (shape.chunks != chunks_)
      return fmt::format("interleaved 1F1B with {} chunks needs a plan of {} chunks per stage, got {}", chunks_, chunks_,
                         shape.chunks);
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
    const int warmup =
        shape.micro_batches == p ? total : std::min(2 * (p - stage - 1) + (v - 1) * p, total);
    return alternate_groups(forwards, backwards, warmup, 1);
  }

 private:
  int chunks_;
};

ScheduleRegistry make_builtin_schedules() {
  ScheduleRegistry registry("schedule");
  registry.add("gpipe", "all forwards then all backwards (fill-drain); iteration (M+p−1)(t_f+t_b), M micro-batches in flight; "
               "optional re-materialization",
               "Huang et al., GPipe, NeurIPS'19 §2.3",
               ScheduleInfo{{"recompute"}, [](const ScheduleOptions& o) -> std::shared_ptr<const PipelineSchedule> {
                              return std::make_shared<GPipe>(o.recompute);
                            }});
  registry.add("1f1b", "one-forward-one-backward with a flush (PipeDream-Flush); bubble (p−1)/M, min(p−i, M) in flight",
               "Narayanan et al., ICML'21; Megatron-LM SC'21 §2.2.1",
               ScheduleInfo{{}, [](const ScheduleOptions&) -> std::shared_ptr<const PipelineSchedule> {
                              return std::make_shared<GroupOfK>(1);
                            }});
  registry.add("dapple", "early backward: K_i micro-batches injected, then 1F1B; policy A K_i = min(S−i, D), "
               "B K_i = min(2(S−i)−1, D)",
               "Fan et al., DAPPLE, PPoPP'21 §5.3",
               ScheduleInfo{{"policy", "max_in_flight"}, [](const ScheduleOptions& o) -> std::shared_ptr<const PipelineSchedule> {
                              return std::make_shared<Dapple>(o.policy, o.max_in_flight);
                            }});
  registry.add("interleaved", "interleaved 1F1B over v model chunks per stage; bubble (p−1)/(v·M), needs M % p == 0",
               "Narayanan et al., Megatron-LM SC'21 §2.2.2; Megatron schedules.py",
               ScheduleInfo{{"chunks"}, [](const ScheduleOptions& o) -> std::shared_ptr<const PipelineSchedule> {
                              return std::make_shared<Interleaved>(o.chunks);
                            }});
  registry.add("kfkb", "1F1B over groups of k micro-batches: k forwards then k backwards; min(k(p−i), M) in flight",
               "Wang et al., Ada-Grouper, arXiv:2303.01675 (kFkB)",
               ScheduleInfo{{"group"}, [](const ScheduleOptions& o) -> std::shared_ptr<const PipelineSchedule> {
                              return std::make_shared<GroupOfK>(o.group);
                            }});
  registry.add("ada-grouper", "kfkb whose k is re-chosen every iteration from measured stage and transfer times, "
               "under the memory limit (-like: paper text unavailable)",
               "Wang et al., Ada-Grouper, arXiv:2303.01675 (abstract); papers-parallelism.md §3.2",
               ScheduleInfo{{"candidates"}, [](const ScheduleOptions& o) -> std::shared_ptr<const PipelineSchedule> {
                              for (int k : o.candidates)
                                if (k < 1)
                                  throw std::invalid_argument(
                                      fmt::format("ada-grouper: every candidate k must be at least 1, got {}", k));
                              return std::make_shared<GroupOfK>(o.candidates.empty() ? 1 : o.candidates.front());
                            }});
  registry.add("pipedream-async",
               "asynchronous 1F1B with weight stashing: no flush, one stream of N·M micro-batches, "
               "a weight update per backward (per r with r replicas); p−i in flight, p−i stashed weight versions",
               "Narayanan et al., PipeDream, SOSP'19 §3.2–3.3",
               ScheduleInfo{{}, [](const ScheduleOptions&) -> std::shared_ptr<const PipelineSchedule> {
                              return std::make_shared<PipeDreamAsync>();
                            }});
  registry.add("critical-path",
               "list scheduling by the plan's predicted stage and transfer times: the longest remaining path "
               "first, so a free stage never waits while a step it may run has arrived; min(D or p−i, M) in flight "
               "(-like: paper text unavailable)",
               "Luo et al., Efficient Pipeline Planning, INFOCOM'22 (abstract); papers-parallelism.md §4.2",
               ScheduleInfo{{"max_in_flight", "times"}, [](const ScheduleOptions& o) -> std::shared_ptr<const PipelineSchedule> {
                              return make_critical_path_schedule(o.max_in_flight);
                            }});
  return registry;
}

}  // namespace

const ScheduleRegistry& builtin_schedules() {
  static const ScheduleRegistry registry = make_builtin_schedules();
  return registry;
}

}  // namespace dnnsim
