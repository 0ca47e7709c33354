// Megatron-Core's pipeline layout (TransformerConfig.pipeline_model_parallel_layout, Megatron-LM
// megatron/core/transformer/pipeline_parallel_layer_layout.py): the layers of every virtual pipeline
// stage, in virtual-stage order (chunk c of stage s is virtual stage c·p + s), as a string:
//   E  the embedding          t  one transformer block       m  one multi-token-prediction layer
//   L  the final norm, LM head and loss                        |  the end of a virtual stage
//   x*n  x repeated n times, x a letter or a parenthesised group: "Et*3|(t*4|)*14ttL"
// Spaces are ignored. It is how Megatron-Bridge's recipes split models whose blocks do not divide
// evenly (DeepSeek-V3's 61 blocks, Qwen3-235B's 94); the uniform planner takes one as its `layout`.
#pragma once

#include <string>
#include <vector>

#include "models/dnn/layer_model.hpp"
#include "planners/common/pipeline_plan.hpp"

namespace dnnsim {

struct LayoutSplit {
  std::vector<LayerRange> virtual_stages;  // empty when `problem` is set
  std::string problem;                     // why the layout does not fit the model or the stage count
};

// The virtual stages of `layout` over `model`'s layers (blocks: model_blocks, in order; the
// embedding: the layers before the first block; L: the layers after the last main block up to the
// first MTP layer's, m: each MTP layer's block with the layers around it), `stages` virtual stages in
// all. Every block must be placed once, in order, and every virtual stage's layers must be contiguous.
// Why `layout` is not a layout string (its syntax alone, as the scenario reader checks it); empty if it is.
[[nodiscard]] std::string layout_syntax_problem(const std::string& layout);

[[nodiscard]] LayoutSplit split_by_layout(const std::string& layout, const LayerModel& model, std::size_t stages);

}  // namespace dnnsim
