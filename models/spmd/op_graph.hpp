// Operator graphs for SPMD (intra-operator) sharding: the single-device training graph that HAP
// (Zhang et al., EuroSys'24, §5.3), OneFlow's SBP (Yuan et al., arXiv 2110.15032, §6.1), Rhino
// (Zhang et al., arXiv 2302.08141) and SMSG (Wang et al., IJPP 51, 2023) shard operator by operator.
// Every tensor is 2-D, [rows × columns]: batch and sequence dimensions are folded into the rows (so
// splitting rows is data parallelism), features are the columns (splitting them is tensor/model
// parallelism). Each operator produces one tensor; TensorId = OpId. The graph is a DAG (branches,
// skip connections, two towers), numbered in a topological order.
//
// Graphs come from the model zoo (build_op_graph: every layer of a LayerModel becomes the operators
// its matmul shapes describe, docs/spmd.md), from the graph zoo (graph_zoo.hpp: HAP's models at its
// settings, mixtures of experts, branching networks) or from hand-written YAML files (load_op_graph).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

enum class OpKind {
  input,        // a mini-batch tensor (rows = samples × rows per sample); no FLOPs
  parameter,    // a weight [k × n]; its gradient must be reduced across replicas
  matmul,       // C[m×n] = A[m×k] · B[k×n]: 2mnk FLOPs forward, 4mnk backward
  elementwise,  // same shape out as in; a second input of the same shape adds to it (residual add)
  rowwise,      // an operation along each row (LayerNorm, softmax): rows may be split, columns not
  attention,    // per-head attention core (scores, softmax, context) on its input's columns: rows
                // (samples) or heads; reading a fused [Q K V] input (stride 3) it outputs a third of them
  reshape,      // same elements per sample in another [rows × columns] layout: only rows stay split
  loss,         // the scalar training loss, summed over the batch
  embedding,    // table lookup: [ids (rows × 1), table (vocabulary × columns)] → rows × columns
  transpose,    // [r × c] → [c × r]: a tied weight read as the output head's B operand
  concat,       // inputs with the same rows side by side (Inception's branches, U-Net's skips)
  experts,      // a mixture-of-experts FFN (GShard): [x (rows × h), W1 (E·h × f), W2 (E·f × h), gate
                // scores (rows × E)] → rows × h, each row through `routed` expert rows (top-k × capacity
                // factor) of two products and an activation
};
[[nodiscard]] std::string_view op_kind_name(OpKind kind);
[[nodiscard]] std::vector<std::string> op_kind_names();

using OpId = std::uint32_t;

struct SpmdOp {
  std::string name;
  OpKind kind = OpKind::elementwise;
  std::vector<OpId> inputs;  // operators whose output this one reads, in operand order
  std::int64_t rows = 0;     // the output's shape (a loss is 1 × 1)
  std::int64_t columns = 0;
  Flop forward_flops{0};  // of the whole (unsharded) operator; backward is 2× forward
  SourceLocation origin;  // where a hand-written graph declared it
  // The columns are `stride` fused blocks of equal width (a fused QKV weight and its product: 3), so
  // that a strided split (Rhino's DimDistSpec stride) gives every device the same slice of each block.
  int stride = 1;
  int experts = 0;    // an experts operator, and its weights: E experts (their rows split in whole experts)
  double routed = 1;  // an experts operator: expert rows computed per input row (top-k × capacity factor)
};

class OpGraph {
 public:
  OpGraph() = default;
  OpGraph(std::string name, Dtype dtype) : name_(std::move(name)), dtype_(dtype) {}

  // @return the new operator's id. Inputs must already exist (so ids are a topological order).
  OpId add(SpmdOp op);
  // Marks an operator's columns as `stride` fused blocks (found once its consumer is known).
  void set_stride(OpId id, int stride) { ops_.at(id).stride = stride; }
  // Marks a parameter as the weights of E experts (expert parallelism splits its rows in whole experts).
  void set_experts(OpId id, int experts) { ops_.at(id).experts = experts; }

  [[nodiscard]] const std::string& name() const { return name_; }
  // The samples of one iteration the graph holds (its rows are samples × rows per sample); 0: not known.
  [[nodiscard]] int samples() const { return samples_; }
  void set_samples(int samples) { samples_ = samples; }
  [[nodiscard]] Dtype dtype() const { return dtype_; }
  [[nodiscard]] const std::vector<SpmdOp>& ops() const { return ops_; }
  [[nodiscard]] const SpmdOp& op(OpId id) const { return ops_.at(id); }
  [[nodiscard]] std::size_t size() const { return ops_.size(); }
  [[nodiscard]] Bytes bytes(OpId id) const;  // the whole output tensor
  // The last operator that reads each operator's output (itself when nobody does).
  [[nodiscard]] std::vector<OpId> last_use() const;
  // The operators that read each operator's output, in id order.
  [[nodiscard]] std::vector<std::vector<OpId>> users() const;
  [[nodiscard]] Bytes parameter_bytes() const;
  [[nodiscard]] Flop forward_flops() const;

 private:
  std::string name_;
  Dtype dtype_ = Dtype::fp32;
  int samples_ = 0;
  std::vector<SpmdOp> ops_;
};

// The training graph of a zoo or profile model for `batch` samples: one input, then per layer its
// matmuls (each with its weight as a parameter operator when the layer has parameters; a layer of
// attention products as one attention operator on the fused Q K V projection when it follows one,
// else one per product), an embedding's lookup with its table (the output head reading the table
// transposed when the model ties them), its remaining FLOPs as an element-wise or row-wise operator
// by layer kind, reshapes where one product's output does not have the next one's input layout, and
// a loss at the end. Layers with measured times and no FLOPs cannot be sharded.
// @throw InputError (at `where`) when the model has a layer without FLOPs.
[[nodiscard]] OpGraph build_op_graph(const LayerModel& model, int batch, Dtype dtype, const SourceLocation& where);

// A hand-written graph (docs/spmd.md):
//   name: mlp
//   dtype: fp32
//   ops:
//     - {name: x, kind: input, shape: [64, 1024]}
//     - {name: w1, kind: parameter, shape: [1024, 4096]}
//     - {name: h, kind: matmul, inputs: [x, w1]}
//     - {name: loss, kind: loss, inputs: [h]}
// Shapes of computed operators follow from their inputs; FLOPs from the shapes (matmul 2mnk,
// element-wise 1 and row-wise 5 per element, experts 4·rows·routed·h·f + rows·routed·f, attention `flops:`
// required). Operators may be listed in any order; they are numbered in a topological order (ties:
// file order). @throw InputError with every problem (file:line:col): unknown or missing keys,
// unknown operators, mismatched shapes, a stride that does not divide the columns, cycles.
[[nodiscard]] OpGraph load_op_graph(const std::string& path);
[[nodiscard]] OpGraph parse_op_graph(const std::string& text, const std::string& file_name);

}  // namespace dnnsim
