#include "models/spmd/op_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace dnnsim {

namespace {

const std::vector<std::pair<std::string, OpKind>>& kind_table() {
  static const std::vector<std::pair<std::string, OpKind>> table = {
      {"input", OpKind::input},         {"parameter", OpKind::parameter},
      {"matmul", OpKind::matmul},       {"elementwise", OpKind::elementwise},
      {"rowwise", OpKind::rowwise},     {"attention", OpKind::attention},
      {"reshape", OpKind::reshape},     {"loss", OpKind::loss},
      {"embedding", OpKind::embedding}, {"transpose", OpKind::transpose},
      {"concat", OpKind::concat},       {"experts", OpKind::experts}};
  return table;
}

}  // namespace

std::string_view op_kind_name(OpKind kind) {
  for (const auto& [name, k] : kind_table())
    if (k == kind) return name;
  return "?";
}

std::vector<std::string> op_kind_names() {
  std::vector<std::string> names;
  for (const auto& [name, k] : kind_table()) names.push_back(name);
  return names;
}

OpId OpGraph::add(SpmdOp op) {
  for (OpId input : op.inputs)
    if (input >= ops_.size())
      throw std::logic_error(fmt::format("operator '{}' reads operator {} before it exists", op.name, input));
  ops_.push_back(std::move(op));
  return static_cast<OpId>(ops_.size() - 1);
}

Bytes OpGraph::bytes(OpId id) const {
  const SpmdOp& o = op(id);
  return Bytes(static_cast<double>(o.rows) * static_cast<double>(o.columns) * dtype_bytes(dtype_));
}

std::vector<OpId> OpGraph::last_use() const {
  std::vector<OpId> last(ops_.size());
  for (OpId id = 0; id < ops_.size(); ++id) {
    last[id] = id;
    for (OpId input : ops_[id].inputs) last[input] = id;
  }
  return last;
}

std::vector<std::vector<OpId>> OpGraph::users() const {
  std::vector<std::vector<OpId>> result(ops_.size());
  for (OpId id = 0; id < ops_.size(); ++id)
    for (OpId input : ops_[id].inputs)
      if (result[input].empty() || result[input].back() != id) result[input].push_back(id);
  return result;
}

Bytes OpGraph::parameter_bytes() const {
  Bytes total{0};
  for (OpId id = 0; id < ops_.size(); ++id)
    if (ops_[id].kind == OpKind::parameter) total += bytes(id);
  return total;
}

Flop OpGraph::forward_flops() const {
  Flop total{0};
  for (const SpmdOp& op : ops_) total += op.forward_flops;
  return total;
}

namespace {

// Accumulates the graph of a LayerModel, layer by layer (build_op_graph).
class GraphBuilder {
 public:
  GraphBuilder(const LayerModel& model, int batch, Dtype dtype)
      : model_(model), b_(batch), graph_(model.name, dtype), tokens_(std::max(1, model.tokens_per_sample)) {}

  void input() {
    // The first layer's input: token ids for a language model, else the first product's A operand.
    std::int64_t rows = b_, columns = 1;
    if (model_.layers.empty() || model_.layers.front().kind != LayerKind::embedding)
      for (const Layer& layer : model_.layers)
        if (!layer.matmuls.empty()) {
          rows = b_ * layer.matmuls.front().m;
          columns = layer.matmuls.front().k;
          break;
        }
    if (!model_.layers.empty() && model_.layers.front().kind == LayerKind::embedding) rows = b_ * tokens_;
    current_ = add({"input", OpKind::input, {}, rows, columns, Flop(0)});
  }

  void layer(const Layer& layer, std::size_t index) {
    Flop rest = layer.forward_flops * static_cast<double>(b_);
    if (layer.kind == LayerKind::embedding && layer.matmuls.empty() && embedding(layer, index)) return;
    if (layer.kind == LayerKind::attention && fused_attention(layer)) return;
    const bool has_weights = layer.parameter_bytes.value() > 0;
    for (std::size_t i = 0; i < layer.matmuls.size(); ++i) {
      const MatmulShape& mm = layer.matmuls[i];
      const std::string name = layer.matmuls.size() == 1 ? layer.name : fmt::format("{}.{}", layer.name, i);
      const Flop flops = mm.flops() * static_cast<double>(b_);
      rest = rest - flops;
      read_as(b_ * mm.m, mm.k, name);
      if (tied_head(layer, mm)) {
        const OpId weight = add({name + ".tied", OpKind::transpose, {*table_}, mm.k, mm.n, Flop(0)});
        current_ = add({name, OpKind::matmul, {current_, weight}, b_ * mm.m, mm.n, flops});
      } else if (!has_weights) {
        // Products of two activations (Q·Kᵀ, P·V) with the heads folded into m: sharded by samples or heads.
        current_ = add({name, OpKind::attention, {current_}, b_ * mm.m, mm.n, flops});
      } else {
        const OpId weight = add({name + ".weight", OpKind::parameter, {}, mm.k, mm.n, Flop(0)});
        current_ = add({name, OpKind::matmul, {current_, weight}, b_ * mm.m, mm.n, flops});
      }
    }
    if (rest.value() > 0 || layer.matmuls.empty()) {
      const OpKind kind = layer.kind == LayerKind::normalization ? OpKind::rowwise : OpKind::elementwise;
      const SpmdOp& in = graph_.op(current_);
      SpmdOp op{layer.name + (layer.matmuls.empty() ? "" : ".rest"),
                kind,
                {current_},
                in.rows,
                in.columns,
                Flop(std::max(0.0, rest.value()))};
      op.stride = in.stride;
      current_ = add(std::move(op));
    }
  }

  OpGraph finish() {
    graph_.add(SpmdOp{"loss", OpKind::loss, {current_}, 1, 1, Flop(static_cast<double>(graph_.op(current_).rows))});
    graph_.set_samples(static_cast<int>(b_));
    return std::move(graph_);
  }

 private:
  OpId add(SpmdOp op) { return graph_.add(std::move(op)); }

  // A product with the tied embedding table as its weights (a language model's output head: no
  // weights of its own but an output bias).
  bool tied_head(const Layer& layer, const MatmulShape& mm) const {
    return layer.kind == LayerKind::matmul && table_ && graph_.op(*table_).rows == mm.n &&
           graph_.op(*table_).columns == mm.k && layer.parameter_bytes.value() < 4.0 * static_cast<double>(mm.n * mm.k);
  }

  // `id` holds [Q K V] side by side: so do the weights of the product that made it, and the product
  // under an element-wise operator (a bias).
  void mark_fused(OpId id) {
    const SpmdOp& op = graph_.op(id);
    if (op.columns % 3 != 0) return;
    graph_.set_stride(id, 3);
    if (op.kind == OpKind::matmul && graph_.op(op.inputs[1]).kind == OpKind::parameter)
      graph_.set_stride(op.inputs[1], 3);
    if (op.kind == OpKind::elementwise && graph_.op(op.inputs[0]).columns == op.columns) mark_fused(op.inputs[0]);
  }

  // A product whose A operand is not laid out as the previous output (a convolution after a pooling)
  // reads it through a reshape. The element count may differ too (a convolution's im2col reads each
  // input pixel several times): the reshape then stands for that re-layout, and carries only the
  // rows' split.
  void read_as(std::int64_t rows, std::int64_t columns, const std::string& name) {
    const SpmdOp& in = graph_.op(current_);
    if (in.rows != rows || in.columns != columns)
      current_ = add({name + ".reshape", OpKind::reshape, {current_}, rows, columns, Flop(0)});
  }

  // A lookup of every token in the layer's table (hidden = its FLOPs per token, one per element). The
  // table is split in two when a later weightless head reads the first `vocab` rows as its B operand
  // (the tied LM head): the token rows and the rest (positions, segments).
  bool embedding(const Layer& layer, std::size_t index) {
    const double per_token = layer.forward_flops.value() / static_cast<double>(tokens_);
    const auto hidden = static_cast<std::int64_t>(std::llround(per_token));
    if (hidden <= 0 || graph_.op(current_).columns != 1) return false;
    const double elements = layer.parameter_bytes.value() / 4.0;  // the zoo's 4-byte parameters
    auto rows = static_cast<std::int64_t>(std::llround(elements / static_cast<double>(hidden)));
    if (rows <= 0) return false;
    std::int64_t vocab = rows;
    for (std::size_t l = index + 1; l < model_.layers.size(); ++l)
      for (const MatmulShape& mm : model_.layers[l].matmuls)
        if (model_.layers[l].kind == LayerKind::matmul && mm.k == hidden && mm.n <= rows &&
            model_.layers[l].parameter_bytes.value() < 4.0 * static_cast<double>(mm.n * mm.k))
          vocab = mm.n;
    const OpId table = add({layer.name + ".table", OpKind::parameter, {}, vocab, hidden, Flop(0)});
    table_ = table;
    std::vector<OpId> inputs{current_, table};
    if (rows > vocab)
      inputs.push_back(add({layer.name + ".positions", OpKind::parameter, {}, rows - vocab, hidden, Flop(0)}));
    current_ = add({layer.name, OpKind::embedding, std::move(inputs), graph_.op(current_).rows, hidden,
                    layer.forward_flops * static_cast<double>(b_)});
    return true;
  }

  // Self-attention after a fused Q K V projection: one attention operator reading the projection
  // (whose columns are then 3 blocks of heads × head dimension) and giving the context, heads ×
  // head dimension wide, with all of the layer's FLOPs. Its first product, Q·Kᵀ per head, is
  // [heads·q × kv] · [kv × head dimension]ᵀ folded: self-attention has q = kv = n, so heads = m / n.
  bool fused_attention(const Layer& layer) {
    if (layer.matmuls.size() != 2 || layer.parameter_bytes.value() > 0) return false;
    const MatmulShape& scores = layer.matmuls.front();
    if (scores.n <= 0 || scores.m % scores.n != 0) return false;
    const std::int64_t width = scores.m / scores.n * scores.k;  // heads × head dimension
    const SpmdOp qkv = graph_.op(current_);
    if (qkv.columns != 3 * width || qkv.rows != b_ * scores.n) return false;
    mark_fused(current_);
    current_ = add(
        {layer.name, OpKind::attention, {current_}, qkv.rows, width, layer.forward_flops * static_cast<double>(b_)});
    return true;
  }

  const LayerModel& model_;
  std::int64_t b_;
  OpGraph graph_;
  std::int64_t tokens_;
  OpId current_ = 0;
  std::optional<OpId> table_;
};

}  // namespace

OpGraph build_op_graph(const LayerModel& model, int batch, Dtype dtype, const SourceLocation& where) {
  std::vector<std::string> unshardable;
  for (const Layer& layer : model.layers)
    if (layer.forward_flops.value() <= 0) unshardable.push_back(layer.name);
  if (!unshardable.empty())
    throw InputError(where, fmt::format("an SPMD workload shards FLOP-costed layers; {} layer(s) of '{}' have no FLOPs "
                                        "(measured profiles cannot be sharded): {}",
                                        unshardable.size(), model.name, unshardable.front()));
  GraphBuilder builder(model, batch, dtype);
  builder.input();
  for (std::size_t i = 0; i < model.layers.size(); ++i) builder.layer(model.layers[i], i);
  return builder.finish();
}

}  // namespace dnnsim
