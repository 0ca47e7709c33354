#include "sim/workloads/pipeline/llm_keys.hpp"

#include <fmt/format.h>

#include <set>

namespace dnnsim {

bool read_llm_parallelism(YamlReader& reader, MapReader& map, PipelineWorkloadSpec& spec, const Cluster& cluster) {
  LlmParallelism& llm = spec.llm;
  bool given = false;
  const auto note = [&](std::string_view key) {
    const bool has = map.has(key);
    given = given || has;
    return has;
  };
  const std::optional<TransformerDims> dims = spec.model.transformer;
  if (note("expert_parallel")) {
    llm.expert = static_cast<int>(map.integer("expert_parallel", 1, 1 << 16).value_or(1));
    const YAML::Node where = map.get("expert_parallel");
    if (dims && dims->experts == 0 && llm.expert > 1)
      reader.error(where, fmt::format("expert_parallel {} needs a mixture-of-experts model; '{}' is dense", llm.expert,
                                      spec.model.name));
    else if (dims && llm.expert > 1 && dims->experts % llm.expert != 0)
      reader.error(where, fmt::format("expert_parallel {} does not divide the {} experts of '{}'", llm.expert,
                                      dims->experts, spec.model.name));
  }
  if (note("context_parallel")) {
    llm.context = static_cast<int>(map.integer("context_parallel", 1, 1 << 12).value_or(1));
    if (dims && llm.context > 1 && dims->seq % (2 * llm.context) != 0)
      reader.error(map.get("context_parallel"),
                   fmt::format("context_parallel {} does not divide the sequence of {} tokens into 2 × {} equal chunks "
                               "(ring attention balances causal work over 2·CP chunks)",
                               llm.context, dims->seq, llm.context));
  }
  bool comm_read = true;  // false: context_parallel_comm given but not a known type (its error is reported)
  if (note("context_parallel_comm")) {
    const auto name = map.choice("context_parallel_comm", "context-parallel communication", context_comm_names());
    comm_read = name.has_value();
    if (name) {
      llm.context_comm = *context_comm_from_name(*name);
      if (llm.context_comm == ContextComm::a2a_p2p && !map.has("hierarchical_context_parallel_sizes"))
        reader.error(map.get("context_parallel_comm"),
                     "context_parallel_comm a2a+p2p needs hierarchical_context_parallel_sizes: [A, P], the a2a "
                     "groups' and the p2p rings' sizes (A·P = context_parallel)");
    }
  }
  // Megatron-Core's hierarchical_context_parallel_sizes, as a2a+p2p reads it: [a2a size, p2p size]. Under
  // a planner that chooses CP (no context_parallel key) the a2a groups' size is kept and the rings take
  // the rest, CP / A.
  if (note("hierarchical_context_parallel_sizes")) {
    const YAML::Node where = map.get("hierarchical_context_parallel_sizes");
    std::vector<std::int64_t> sizes;
    for (const YAML::Node& item : reader.list(where, "hierarchical context-parallel sizes"))
      if (const auto size = reader.integer(item, 1, 1 << 12)) sizes.push_back(*size);
    if (llm.context_comm != ContextComm::a2a_p2p) {
      if (comm_read)
        reader.error(where, "hierarchical_context_parallel_sizes is read by context_parallel_comm a2a+p2p only");
    } else if (where.IsSequence() && where.size() != 2)
      reader.error(where, fmt::format("hierarchical_context_parallel_sizes has {} entries; a2a+p2p takes 2: [A, P], "
                                      "the a2a groups' and the p2p rings' sizes",
                                      where.size()));
    else if (sizes.size() == 2 && map.has("context_parallel") && sizes[0] * sizes[1] != llm.context)
      reader.error(where, fmt::format("hierarchical_context_parallel_sizes [{}, {}] multiply to {}, not "
                                      "context_parallel {}",
                                      sizes[0], sizes[1], sizes[0] * sizes[1], llm.context));
    else if (sizes.size() == 2)
      llm.context_a2a = static_cast<int>(sizes[0]);
  }
  // With a planner choosing TP or CP, the plan is checked instead (llm_parallel_problems, and the 5D
  // planner's rule 9).
  if (dims && llm.context > 1 && map.has("context_parallel_comm"))
    if (std::string why =
            context_comm_problem(*dims, llm.context_comm, spec.tensor_parallel.degree, llm.context, llm.context_a2a);
        !why.empty())
      reader.error(map.get(llm.context_comm == ContextComm::a2a_p2p && map.has("hierarchical_context_parallel_sizes")
                               ? "hierarchical_context_parallel_sizes"
                               : "context_parallel_comm"),
                   why);
  if (note("fsdp")) llm.fsdp = map.boolean("fsdp").value_or(false);
  if (note("precision_recipe")) {
    if (auto name = map.choice("precision_recipe", "precision recipe", low_precision_names())) {
      llm.precision.low = *low_precision_from_name(*name);
      std::set<std::string> reported;
      for (const NodeType& type : cluster.node_types)
        // A node type whose GPU model is unknown has been reported already; its empty spec has no FP8 to test.
        if (std::string why = type.gpu.name.empty() ? std::string() : llm.precision.unsupported_on(type.gpu);
            !why.empty() && reported.insert(why).second)
          reader.error(map.get("precision_recipe"), fmt::format("node type '{}': {}", type.name, why));
    }
  }
  if (note("precision_aware_optimizer"))
    llm.precision.precision_aware_optimizer = map.boolean("precision_aware_optimizer").value_or(false);
  if (note("tensor_parallel_overlap")) llm.tensor_overlap = map.boolean("tensor_parallel_overlap").value_or(false);
  if (note("recompute_modules")) {
    for (const YAML::Node& item : reader.list(map.get("recompute_modules"), "recomputation modules"))
      if (auto name = reader.choice(item, "recomputation module", recompute_module_names()))
        spec.recompute_modules |= static_cast<std::uint8_t>(*recompute_module_from_name(*name));
  }
  if (note("activation_offload_layers")) {
    llm.offloaded_layers = static_cast<int>(map.integer("activation_offload_layers", 0, 1 << 16).value_or(0));
    // Transformer Engine never offloads the last block (cpu_offload.py: num_layers <= model_layers - 1).
    const int blocks = spec.model.transformer ? spec.model.transformer->layers : 0;
    if (dims && llm.offloaded_layers >= blocks)
      reader.error(map.get("activation_offload_layers"),
                   fmt::format("activation_offload_layers {} must be below the {} transformer blocks of '{}' (the last "
                               "block's activations are never offloaded)",
                               llm.offloaded_layers, blocks, spec.model.name));
  }
  if (note("moe")) {
    MapReader moe(reader, map.get("moe"), "moe");
    if (moe.valid()) {
      llm.routing.imbalance = moe.number("imbalance", 1.0, 1e6).value_or(1.0);
      if (auto factor = moe.number("capacity_factor", 1e-3, 1e6)) llm.routing.capacity_factor = *factor;
      llm.expert_overlap = moe.boolean("overlap").value_or(false);
      moe.finish();
    }
  }
  // An unknown zoo model or a model without layers is reported where it is written; its empty layers
  // have no dimensions to ask for.
  if (given && !dims && !spec.model.layers.empty())
    reader.error(map.node(), fmt::format("expert_parallel, context_parallel, fsdp, precision_recipe and the other LLM "
                                         "keys need an LLM: one of the zoo (llama3-8b, deepseek-v3, …: `dnnsim "
                                         "list models`) or `model: {{llm: {{…}}}}`; '{}' has no transformer dimensions",
                                         spec.model.name));
  return given;
}

}  // namespace dnnsim
