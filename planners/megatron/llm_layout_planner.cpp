#include "planners/megatron/llm_layout_planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "models/common/units.hpp"
#include "planners/megatron/llm_layout_cost.hpp"
#include "planners/parallel/plan_clock.hpp"

namespace dnnsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Scored {
  LlmLayout layout;
  Bytes memory{0};
  Seconds bound{0};
  Seconds predicted{0};
};

// Calls `progress` with the fraction done at most every `every` steps; false once it asks to stop.
class Progress {
 public:
  explicit Progress(const std::function<bool(double)>& report) : report_(report) {}
  bool operator()(std::size_t done, std::size_t total, double from, double to) {
    if (!report_ || stopped_ || total == 0 || done % 256 != 0) return !stopped_;
    stopped_ = !report_(from + (to - from) * static_cast<double>(done) / static_cast<double>(total));
    return !stopped_;
  }
  [[nodiscard]] bool stopped() const { return stopped_; }

 private:
  const std::function<bool(double)>& report_;
  bool stopped_ = false;
};

// A layout written TP×PP×VP×CP×EP×DP/micro-batch, "+fsdp" for FSDP, and "@TYPE" for a CP type other than
// the recipe's ("2x8x4x1x32x2/1", "1x1x1x4x1x16/1@a2a", "1x1x1x8x1x8/1+fsdp@a2a+p2p:2", A = 2). Without a
// type, `comm` is kept.
std::optional<LlmLayout> parse_layout(const std::string& text, ContextComm comm = ContextComm::p2p, int a2a = 1) {
  LlmLayout layout;
  const std::size_t at = text.find('@');
  const std::string head = text.substr(0, at);
  char fsdp[6] = {};
  int consumed = 0;
  const int read =
      std::sscanf(head.c_str(), "%dx%dx%dx%dx%dx%d/%d%n+%5s", &layout.tensor, &layout.pipeline, &layout.chunks,
                  &layout.context, &layout.expert, &layout.data, &layout.micro_batch, &consumed, fsdp);
  if (read < 7) return std::nullopt;
  if (read == 7 && static_cast<std::size_t>(consumed) != head.size()) return std::nullopt;
  if (read == 8) {
    if (std::string(fsdp) != "fsdp") return std::nullopt;
    layout.fsdp = true;
  }
  if (at != std::string::npos) {
    std::string type = text.substr(at + 1);
    a2a = 1;
    if (const std::size_t colon = type.find(':'); colon != std::string::npos) {
      const std::string size = type.substr(colon + 1);
      if (size.empty() || size.find_first_not_of("0123456789") != std::string::npos || size.size() > 4)
        return std::nullopt;
      a2a = std::stoi(size);
      type.resize(colon);
    }
    const auto parsed = context_comm_from_name(type);
    if (!parsed || (*parsed == ContextComm::a2a_p2p) != (a2a > 1)) return std::nullopt;
    comm = *parsed;
  }
  if (layout.context > 1) {  // without CP there is no type (p2p, as enumerated)
    layout.context_comm = comm;
    layout.context_a2a = a2a;
  }
  return layout;
}

}  // namespace

LlmLayoutLimits llm_layout_limits(const PlanRequest& request) {
  const Options& o = request.options;
  LlmLayoutLimits limits;
  limits.nvlink_domain = o.has("max_tensor_parallel") ? static_cast<int>(o.integer("max_tensor_parallel"))
                                                      : static_cast<int>(gpus_per_node(request.cluster));
  limits.even_split = o.choice("split") == "even";
  for (std::int64_t b : o.integers("micro_batch_sizes")) limits.micro_batches.push_back(static_cast<int>(b));
  if (o.choice("fsdp") != "search") limits.fsdp = {o.choice("fsdp") == "on"};
  limits.fsdp_with_pipeline = o.flag("fsdp_with_pipeline");
  limits.single_stage = request.llm.offloaded_layers > 0;
  limits.context_comm = request.llm.context_comm;
  limits.context_a2a = request.llm.context_a2a;
  limits.search_context_comm = o.choice("context_comm") == "search";
  if (o.has("max_chunks")) limits.max_chunks = static_cast<int>(o.integer("max_chunks"));
  // A schedule with a fixed number of chunks runs only that VP (`chunks: auto` lets the planner choose).
  if (!request.choose_chunks) limits.chunks = std::max(1, request.chunks_per_stage);
  return limits;
}

OptionSchema LlmLayoutPlanner::options() {
  OptionSchema schema;
  schema.integer("candidate", 1, "the layout to plan, by rank in its estimate (1: the best)").at_least(1);
  schema.integer("keep", 10, "k: the best layouts kept, re-ranked by the schedule's timeline and listed").at_least(1);
  schema.choice("split", "balanced", {"balanced", "even"},
                "blocks per virtual stage: balanced (a pipeline layout, ⌊L/(PP·VP)⌋ or ⌈L/(PP·VP)⌉ each) or even "
                "(Megatron's default: PP·VP divides the blocks)");
  schema.integers("micro_batch_sizes", {}, "the micro-batch sizes to try; none: every power of two").at_least(1);
  schema.choice("fsdp", "search", {"search", "off", "on"}, "FSDP (Megatron-FSDP): tried both ways, never or always");
  schema.boolean("fsdp_with_pipeline", false,
                 "FSDP with PP > 1 (every published Megatron-Bridge FSDP recipe runs PP 1)");
  schema.choice("context_comm", "scenario", {"scenario", "search"},
                "CP's communication type (cp_comm_type): the scenario's context_parallel_comm, or every type "
                "(p2p, all_gather, a2a, and a2a+p2p at each a2a size between 1 and CP) tried with each CP > 1");
  schema.integer("max_tensor_parallel", std::nullopt, "the largest TP (an NVLink domain); none: the GPUs of a node")
      .at_least(1);
  schema.integer("max_chunks", std::nullopt, "the largest VP; none: as many as whole blocks allow").at_least(1);
  schema
      .text("reference", std::nullopt,
            "a layout to rank among the candidates (a published recipe's), TP×PP×VP×CP×EP×DP/micro-batch with "
            "+fsdp for FSDP and @TYPE for a CP type other than the scenario's (@a2a+p2p:A with a2a groups of A), "
            "e.g. 2x8x4x1x32x2/1")
      .check([](const std::string& text) {
        return parse_layout(text)
                   ? std::string()
                   : "a layout is TP×PP×VP×CP×EP×DP/micro-batch[+fsdp][@p2p|@all_gather|@a2a|@a2a+p2p:A], "
                     "e.g. 2x8x4x1x32x2/1, 1x1x1x1x1x64/2+fsdp or 1x1x1x4x1x16/1@a2a";
      });
  return schema;
}

std::string LlmLayoutPlanner::model_problem(const LayerModel& model) const {
  return model.transformer && transformer_shape(model)
             ? std::string()
             : "needs an LLM: one of the zoo (llama3-8b, deepseek-v3, …) or `model: {llm: {…}}`";
}

namespace {

// Where the option `reference`'s layout ranks by the analytic estimate among the layouts that fit: every
// layout whose bound is below its price is priced (the others cannot beat it); and its schedule-timeline
// estimate against the chosen layout's `chosen`.
std::string rank_reference(LlmLayoutCost& cost, const PlanRequest& request, const LlmLayoutLimits& limits,
                           const std::vector<Scored>& fitting, std::vector<std::optional<Seconds>>& priced,
                           Seconds chosen) {
  const std::string& text = request.options.text("reference");
  const LlmLayout reference = *parse_layout(text, limits.context_comm, limits.context_a2a);
  const std::vector<std::string> problems = llm_layout_problems(
      cost.layout_model(), static_cast<int>(request.cluster.size()), request.global_batch, limits, reference);
  if (!problems.empty()) return fmt::format("reference {} is not a candidate: {}", text, problems.front());
  const Bytes memory = cost.memory(reference);
  const Bytes capacity = request.cluster.devices.front().gpu.memory;
  if (memory > capacity)
    return fmt::format("reference {} does not fit: {:.1f} GiB > {:.1f} GiB", text, memory.value() / kGiB,
                       capacity.value() / kGiB);
  const Seconds price = cost.analytic(reference);
  std::size_t better = 0;
  Seconds best = price;
  for (std::size_t i = 0; i < fitting.size() && fitting[i].bound < price; ++i) {
    if (!priced[i]) priced[i] = cost.analytic(fitting[i].layout);
    if (*priced[i] < price && !(fitting[i].layout == reference)) ++better;
    best = std::min(best, *priced[i]);
  }
  const Seconds timeline = cost.estimate(reference).value_or(price);
  return fmt::format(
      "reference {}: rank {} of {} layouts that fit by the analytic estimate ({} against the best's {}, {:+.1f}%); "
      "by the schedule's timeline {} against the chosen layout's {} ({:+.1f}%)",
      reference.describe(), better + 1, fitting.size(), format_seconds(price), format_seconds(best),
      100.0 * (price.value() - best.value()) / best.value(), format_seconds(timeline), format_seconds(chosen),
      100.0 * (timeline.value() - chosen.value()) / chosen.value());
}

}  // namespace

PlanResult LlmLayoutPlanner::plan(const PlanRequest& request) const {
  const PlanClock timer;
  PlanResult result;
  result.cost_model =
      "LLM layout estimate: (M + (p−1)/v)·(t_f + t_b + 2v·t_send) + (M−1)·t_acc + t_tail (under FSDP t_acc = 0, "
      "the shard's add in t_b), re-ranked by the schedule's timeline";
  const auto finish = [&] {
    result.statistics.wall_seconds = timer.elapsed();
    return result;
  };
  if (const std::string problem = model_problem(request.model); !problem.empty() || request.cluster.size() == 0) {
    result.reason = problem.empty() ? "no GPUs" : "the LLM layout planner " + problem;
    return finish();
  }
  LlmLayoutCost cost(request);
  const LlmLayoutLimits limits = llm_layout_limits(request);
  const int gpus = static_cast<int>(request.cluster.size());
  const std::vector<LlmLayout> layouts = enumerate_llm_layouts(cost.layout_model(), gpus, request.global_batch, limits);
  result.statistics.enumerated = layouts.size();
  if (limits.even_split) result.search_limits.push_back("even split");
  if (limits.fsdp.size() == 1) result.search_limits.push_back(limits.fsdp.front() ? "FSDP" : "no FSDP");
  if (limits.fsdp_with_pipeline) result.search_limits.push_back("FSDP with PP");
  if (layouts.empty()) {
    result.reason = fmt::format("no layout of {} GPUs satisfies Megatron-Core's rules and the planner's limits", gpus);
    return finish();
  }
  // Memory first: the layouts that fit, each with its bound.
  Progress progress(request.progress);
  const Bytes capacity = request.cluster.devices.front().gpu.memory;
  std::vector<Scored> fitting;
  std::optional<Scored> closest;  // the least memory among those that do not fit
  for (std::size_t i = 0; i < layouts.size() && progress(i, layouts.size(), 0.0, 0.5); ++i) {
    Scored s{layouts[i], cost.memory(layouts[i])};
    if (s.memory > capacity) {
      ++result.statistics.out_of_memory;
      if (!closest || s.memory < closest->memory) closest = s;
      continue;
    }
    s.bound = cost.compute_bound(s.layout);
    fitting.push_back(s);
  }
  if (fitting.empty() && !progress.stopped()) {
    result.reason =
        fmt::format("out of memory in all {} layouts (the least: {}, {:.1f} GiB > {:.1f} GiB)", layouts.size(),
                    closest->layout.describe(), closest->memory.value() / kGiB, capacity.value() / kGiB);
    return finish();
  }
  // Best bound first; stop when no layout left can enter the k best.
  std::stable_sort(fitting.begin(), fitting.end(), [](const Scored& a, const Scored& b) { return a.bound < b.bound; });
  const auto candidate = static_cast<std::size_t>(request.options.integer("candidate"));
  const auto keep = std::max(static_cast<std::size_t>(request.options.integer("keep")), candidate);
  std::vector<Scored> best;  // ascending by predicted, at most `keep`
  std::vector<std::optional<Seconds>> priced(fitting.size());
  for (std::size_t i = 0; i < fitting.size(); ++i) {
    if (!progress(i, fitting.size(), 0.5, 1.0)) break;
    Scored& s = fitting[i];
    if (best.size() == keep && s.bound >= best.back().predicted) {
      result.statistics.bounded = fitting.size() - i;
      break;
    }
    s.predicted = cost.analytic(s.layout);
    priced[i] = s.predicted;
    ++result.statistics.candidates;
    const auto at = std::upper_bound(best.begin(), best.end(), s.predicted,
                                     [](Seconds t, const Scored& x) { return t < x.predicted; });
    best.insert(at, s);
    if (best.size() > keep) best.pop_back();
  }
  result.stopped_early = progress.stopped();
  if (best.empty()) {
    result.reason = "the search was stopped before any layout was priced";
    return finish();
  }
  // The schedule's own timeline for the kept ones (the analytic estimate where it cannot run them).
  for (Scored& s : best)
    if (const auto estimate = cost.estimate(s.layout)) s.predicted = *estimate;
  std::stable_sort(best.begin(), best.end(),
                   [](const Scored& a, const Scored& b) { return a.predicted < b.predicted; });
  for (const Scored& s : best)
    result.ranking.push_back(
        fmt::format("{}: {}, {:.1f} GiB", s.layout.describe(), format_seconds(s.predicted), s.memory.value() / kGiB));
  if (request.options.has("reference"))
    result.reference = rank_reference(cost, request, limits, fitting, priced, best.front().predicted);
  if (candidate > best.size()) {
    result.reason = fmt::format("candidate {} asked, but only {} kept", candidate, counted(best.size(), "layout"));
    return finish();
  }
  const LlmLayout& chosen = best[candidate - 1].layout;
  const std::vector<LayerRange>& ranges = cost.virtual_stages(chosen);
  result.plan.global_batch = request.global_batch;
  result.plan.micro_batches = chosen.micro_batches(request.global_batch);
  for (int s = 0; s < chosen.pipeline; ++s) {
    PipelineStage stage;
    for (int q = 0; q < chosen.data; ++q) stage.devices.push_back(static_cast<DeviceId>(s * chosen.data + q));
    for (int c = 0; c < chosen.chunks; ++c)
      stage.chunks.push_back(ranges[static_cast<std::size_t>(c * chosen.pipeline + s)]);
    result.plan.stages.push_back(std::move(stage));
  }
  result.tensor_parallel =
      TensorParallelOptions{chosen.tensor, chosen.tensor > 1, Recompute::none, request.memory.zero != ZeroStage::none};
  result.llm_layout = PlanResult::LlmChoice{chosen.context,      chosen.expert,      chosen.fsdp,
                                            chosen.context_comm, chosen.context_a2a, chosen.describe()};
  result.predicted_iteration_time = best[candidate - 1].predicted;
  result.feasible = true;
  return finish();
}

}  // namespace dnnsim
