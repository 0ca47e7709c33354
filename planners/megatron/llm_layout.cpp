#include "planners/megatron/llm_layout.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/common/units.hpp"

namespace dnnsim {

std::vector<int> divisors(int n) {
  std::vector<int> result;
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) result.push_back(k);
  return result;
}

std::size_t gpus_per_node(const ClusterView& cluster) {
  std::size_t count = 0;
  while (count < cluster.size() && cluster.devices[count].node == cluster.devices.front().node) ++count;
  return count;
}

namespace {

// "4 (a2a)", "8 (a2a+p2p [2, 4])"; "1" without CP.
std::string describe_context(const LlmLayout& c) {
  if (c.context == 1) return "1";
  if (c.context_comm == ContextComm::a2a_p2p)
    return fmt::format("{} (a2a+p2p [{}, {}])", c.context, c.context_a2a, c.context / std::max(1, c.context_a2a));
  return fmt::format("{} ({})", c.context, context_comm_name(c.context_comm));
}

// The rules of llm_layout.hpp, numbered as there. With `why`, each broken rule's reason is appended;
// without, the first broken rule ends the check (the enumeration's millions of tuples format nothing).
bool accepted(const LlmLayoutModel& model, int gpus, int global_batch, const LlmLayoutLimits& limits,
              const LlmLayout& c, std::vector<std::string>* why) {
  bool ok = true;
  const auto fail = [&](std::string_view format, const auto&... args) {
    ok = false;
    if (why != nullptr) why->push_back(fmt::vformat(format, fmt::make_format_args(args...)));
    return why == nullptr;  // stop at the first when nothing is reported
  };
  const TransformerDims& dims = model.dims;
  if (c.tensor < 1 || c.pipeline < 1 || c.chunks < 1 || c.context < 1 || c.expert < 1 || c.data < 1 ||
      c.micro_batch < 1) {
    fail("every degree and the micro-batch must be at least 1");
    return false;
  }
  if (c.gpus() != gpus && fail("TP {} × PP {} × CP {} × DP {} = {} is not the {} GPUs (rule 1)", c.tensor, c.pipeline,
                               c.context, c.data, c.gpus(), gpus))
    return false;
  if (c.tensor > limits.nvlink_domain &&
      fail("TP {} is larger than the NVLink domain of {} GPUs (rule 2)", c.tensor, limits.nvlink_domain))
    return false;
  if (model.splits_over && !model.splits_over(c.tensor) &&
      fail("TP {} does not split the {} attention heads, the hidden size {} or the {} key/value heads (rule 2)",
           c.tensor, dims.heads, dims.hidden, dims.kv_heads))
    return false;
  if (dims.experts == 0 && c.expert > 1 && fail("EP {} on a dense model (rule 3)", c.expert)) return false;
  if (dims.experts > 0 && dims.experts % c.expert != 0 &&
      fail("EP {} does not divide the {} routed experts (rule 3)", c.expert, dims.experts))
    return false;
  if ((c.tensor * c.context * c.data) % c.expert != 0 &&
      fail("EP {} does not divide the {} GPUs of a stage, TP·CP·DP (rule 3)", c.expert, c.tensor * c.context * c.data))
    return false;
  if (c.context > 1 && dims.seq % (2 * c.context) != 0 &&
      fail("CP {} does not cut the sequence of {} tokens into 2·CP = {} equal chunks (rule 4)", c.context, dims.seq,
           2 * c.context))
    return false;
  if (c.chunks > 1 && c.pipeline < 2 && fail("VP {} needs PP > 1 (rule 5)", c.chunks)) return false;
  if (limits.max_chunks > 0 && c.chunks > limits.max_chunks &&
      fail("VP {} is above the limit of {} (rule 5)", c.chunks, limits.max_chunks))
    return false;
  if (limits.chunks > 0 && c.chunks != limits.chunks &&
      fail("VP {}: the schedule runs {} per stage", c.chunks,
           counted(static_cast<std::size_t>(limits.chunks), "model chunk")))
    return false;
  const int virtual_stages = c.pipeline * c.chunks;
  if (limits.even_split && model.blocks % virtual_stages != 0 &&
      fail("PP {} × VP {} does not divide the {} blocks (rule 5, even split)", c.pipeline, c.chunks, model.blocks))
    return false;
  if (virtual_stages > model.blocks && fail("PP {} × VP {} = {} virtual stages for {} blocks (rule 5)", c.pipeline,
                                            c.chunks, virtual_stages, model.blocks))
    return false;
  if (global_batch % (c.micro_batch * c.data) != 0 &&
      fail("the global batch {} is not divisible by micro-batch {} × DP {} (rule 6)", global_batch, c.micro_batch,
           c.data))
    return false;
  if (c.chunks > 1 && global_batch % (c.micro_batch * c.data) == 0 && c.micro_batches(global_batch) % c.pipeline != 0 &&
      fail("interleaving needs the {} micro-batches to be a multiple of PP {} (rule 5)", c.micro_batches(global_batch),
           c.pipeline))
    return false;
  if (c.fsdp && c.data * c.context < 2 && fail("FSDP with DP·CP = 1 shards nothing (rule 7)")) return false;
  if (c.fsdp && c.pipeline > 1 && !limits.fsdp_with_pipeline &&
      fail("FSDP with PP {} is outside the limits (rule 7, fsdp_with_pipeline)", c.pipeline))
    return false;
  if (limits.single_stage && c.pipeline > 1 &&
      fail("PP {} with activations offloaded to the host (rule 8: Megatron-Core offloads without a pipeline only)",
           c.pipeline))
    return false;
  if (c.context > 1 && !limits.search_context_comm &&
      (c.context_comm != limits.context_comm ||
       (c.context_comm == ContextComm::a2a_p2p && c.context_a2a != limits.context_a2a)) &&
      fail("CP {}: the recipe's cp_comm_type is {} (rule 9; the option context_comm: search tries every type)",
           describe_context(c),
           describe_context(LlmLayout{
               .context = c.context, .context_comm = limits.context_comm, .context_a2a = limits.context_a2a})))
    return false;
  if (c.context > 1)
    if (const std::string problem = context_comm_problem(dims, c.context_comm, c.tensor, c.context, c.context_a2a);
        !problem.empty() && fail("{} (rule 9)", problem))
      return false;
  return ok;
}

}  // namespace

std::string LlmLayout::describe() const {
  return fmt::format("TP {} × PP {} × VP {} × CP {} × EP {} × DP {}{}, micro-batch {}", tensor, pipeline, chunks,
                     describe_context(*this), expert, data, fsdp ? " (FSDP)" : "", micro_batch);
}

std::vector<std::string> llm_layout_problems(const LlmLayoutModel& model, int gpus, int global_batch,
                                             const LlmLayoutLimits& limits, const LlmLayout& layout) {
  std::vector<std::string> why;
  accepted(model, gpus, global_batch, limits, layout, &why);
  return why;
}

std::vector<LlmLayout> enumerate_llm_layouts(const LlmLayoutModel& model, int gpus, int global_batch,
                                             const LlmLayoutLimits& limits) {
  std::vector<LlmLayout> result;
  std::vector<int> sizes = limits.micro_batches;
  if (sizes.empty())
    for (int b = 1; b <= global_batch; b *= 2) sizes.push_back(b);
  const std::vector<int> experts = model.dims.experts > 0 ? divisors(model.dims.experts) : std::vector<int>{1};
  for (int t : divisors(gpus))
    for (int cp : divisors(gpus / t)) {
      // The CP communication types to try: none (p2p, no ring) without CP; the recipe's; or with the search
      // every type, a2a+p2p at each a2a group size strictly between 1 (p2p) and CP (a2a).
      std::vector<std::pair<ContextComm, int>> comms{{ContextComm::p2p, 1}};
      if (cp > 1) comms = {{limits.context_comm, limits.context_a2a}};
      if (cp > 1 && limits.search_context_comm) {
        comms = {{ContextComm::p2p, 1}, {ContextComm::all_gather, 1}, {ContextComm::a2a, 1}};
        for (int a : divisors(cp))
          if (a > 1 && a < cp) comms.emplace_back(ContextComm::a2a_p2p, a);
      }
      for (int p : divisors(gpus / (t * cp))) {
        const int d = gpus / (t * cp * p);
        for (int v = 1; v <= std::max(1, model.blocks / p); ++v)
          for (int ep : experts)
            for (int b : sizes)
              for (bool fsdp : limits.fsdp)
                for (const auto& [comm, a2a] : comms) {
                  const LlmLayout layout{t, p, v, cp, ep, d, b, fsdp, comm, a2a};
                  if (accepted(model, gpus, global_batch, limits, layout, nullptr)) result.push_back(layout);
                }
      }
    }
  return result;
}

}  // namespace dnnsim
