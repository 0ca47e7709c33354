#include "models/spmd/op_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "models/common/yaml_reader.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::input: return "input";
    case OpKind::parameter: return "parameter";
    case OpKind::matmul: return "matmul";
    case OpKind::elementwise: return "elementwise";
    case OpKind::rowwise: return "rowwise";
    case OpKind::attention: return "attention";
    case OpKind::reshape: return "reshape";
    case OpKind::loss: return "loss";
  }
  return "?";
}

namespace {

const std::vector<std::pair<std::string, OpKind>>& kind_table() {
  static const std::vector<std::pair<std::string, OpKind>> table = {
      {"input", OpKind::input},     {"parameter", OpKind::parameter}, {"matmul", OpKind::matmul},
      {"elementwise", OpKind::elementwise}, {"rowwise", OpKind::rowwise}, {"attention", OpKind::attention},
      {"reshape", OpKind::reshape}, {"loss", OpKind::loss}};
  return table;
}

}  // namespace

OpId OpGraph::add(SpmdOp op) {
  for (OpId input : op.inputs)
    if (input >= ops_.size()) throw std::logic_error(fmt::format("operator '{}' reads operator {} before it exists", op.name, input));
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

Bytes OpGraph::parameter_bytes() const {
  Bytes total{0};
  for (OpId id = 0; id < ops_.size(); ++id)
    if (ops_[id].kind == OpKind::parameter) total += bytes(id);
  return total;
}

OpGraph build_op_graph(const LayerModel& model, int batch, Dtype dtype, const SourceLocation& where) {
  OpGraph graph(model.name, dtype);
  const auto b = static_cast<std::int64_t>(batch);
  // The first layer's input: the first product's A operand, or one column per sample.
  std::int64_t rows = b, columns = 1;
  for (const Layer& layer : model.layers)
    if (!layer.matmuls.empty()) {
      rows = b * layer.matmuls.front().m;
      columns = layer.matmuls.front().k;
      break;
    }
  OpId current = graph.add(SpmdOp{"input", OpKind::input, {}, rows, columns, Flop(0)});
  std::vector<std::string> unshardable;
  for (const Layer& layer : model.layers) {
    if (layer.forward_flops.value() <= 0) {
      unshardable.push_back(layer.name);
      continue;
    }
    Flop rest = layer.forward_flops * static_cast<double>(b);
    const bool has_weights = layer.parameter_bytes.value() > 0;
    for (std::size_t i = 0; i < layer.matmuls.size(); ++i) {
      const MatmulShape& mm = layer.matmuls[i];
      const std::string name = layer.matmuls.size() == 1 ? layer.name : fmt::format("{}.{}", layer.name, i);
      const SpmdOp& in = graph.op(current);
      // A product whose A operand is not laid out as the previous output (attention's per-head
      // products, a convolution after a pooling) reads it through a reshape.
      // The element count may differ too (a convolution's im2col reads each input pixel several
      // times): the reshape then stands for that re-layout, and carries only the rows' split.
      if (in.rows != b * mm.m || in.columns != mm.k) {
        current = graph.add(SpmdOp{name + ".reshape", OpKind::reshape, {current}, b * mm.m, mm.k, Flop(0)});
      }
      const Flop flops = mm.flops() * static_cast<double>(b);
      rest = rest - flops;
      if (layer.kind == LayerKind::attention || !has_weights) {
        // Products of two activations (Q·Kᵀ, P·V) with the heads folded into m: sharded by samples or heads.
        current = graph.add(SpmdOp{name, OpKind::attention, {current}, b * mm.m, mm.n, flops});
        continue;
      }
      const OpId weight = graph.add(SpmdOp{name + ".weight", OpKind::parameter, {}, mm.k, mm.n, Flop(0)});
      current = graph.add(SpmdOp{name, OpKind::matmul, {current, weight}, b * mm.m, mm.n, flops});
    }
    if (rest.value() > 0 || layer.matmuls.empty()) {
      const OpKind kind = layer.kind == LayerKind::normalization ? OpKind::rowwise : OpKind::elementwise;
      const SpmdOp& in = graph.op(current);
      current = graph.add(SpmdOp{layer.name + (layer.matmuls.empty() ? "" : ".rest"), kind, {current}, in.rows,
                                 in.columns, Flop(std::max(0.0, rest.value()))});
    }
  }
  if (!unshardable.empty())
    throw InputError(where, fmt::format("an SPMD workload shards FLOP-costed layers; {} layer(s) of '{}' have no FLOPs "
                                        "(measured profiles cannot be sharded): {}",
                                        unshardable.size(), model.name, unshardable.front()));
  graph.add(SpmdOp{"loss", OpKind::loss, {current}, 1, 1, Flop(static_cast<double>(graph.op(current).rows))});
  return graph;
}

namespace {

struct RawOp {
  SpmdOp op;
  std::vector<std::string> input_names;
  std::vector<SourceLocation> input_where;
  std::optional<std::pair<std::int64_t, std::int64_t>> shape;
  std::optional<double> flops;
  SourceLocation where;
};

OpGraph read_op_graph(YamlReader& reader, const YAML::Node& root) {
  MapReader top(reader, root, "an operator graph");
  if (!top.valid()) return {};
  const std::string name = top.string("name").value_or("graph");
  Dtype dtype = Dtype::fp32;
  if (auto d = top.choice("dtype", dtype_names())) dtype = *dtype_from_name(*d);
  std::vector<RawOp> raw;
  std::map<std::string, std::size_t> index_of;
  std::vector<std::string> kind_names;
  for (const auto& [n, k] : kind_table()) kind_names.push_back(n);
  const YAML::Node list = top.require("ops");
  for (const YAML::Node& entry : list.IsDefined() ? reader.list(list, "operators") : std::vector<YAML::Node>{}) {
    MapReader map(reader, entry, "an operator");
    if (!map.valid()) continue;
    RawOp r;
    r.where = reader.where(entry);
    r.op.origin = r.where;
    r.op.name = map.string("name", true).value_or("");
    const auto kind = map.choice("kind", "operator kind", kind_names, true);
    if (kind)
      for (const auto& [n, k] : kind_table())
        if (n == *kind) r.op.kind = k;
    if (YAML::Node shape = map.get("shape"); shape.IsDefined()) {
      const auto dims = reader.list(shape, "dimensions");
      if (dims.size() != 2) {
        reader.error(shape, "expected [rows, columns]");
      } else {
        const auto rows = reader.integer(dims[0], 1, std::int64_t{1} << 40);
        const auto cols = reader.integer(dims[1], 1, std::int64_t{1} << 40);
        if (rows && cols) r.shape = std::make_pair(*rows, *cols);
      }
    }
    if (YAML::Node inputs = map.get("inputs"); inputs.IsDefined())
      for (const YAML::Node& in : reader.list(inputs, "operator names"))
        if (auto text = reader.string(in)) {
          r.input_names.push_back(*text);
          r.input_where.push_back(reader.where(in));
        }
    r.flops = map.number("flops", 0, 1e30);
    map.finish();
    if (!r.op.name.empty() && !index_of.emplace(r.op.name, raw.size()).second)
      reader.error(entry, fmt::format("operator '{}' is defined twice", r.op.name));
    if (kind) {
      const bool leaf = r.op.kind == OpKind::input || r.op.kind == OpKind::parameter;
      if (leaf && !r.shape) reader.error(entry, fmt::format("a{} {} needs 'shape: [rows, columns]'",
                                                            r.op.kind == OpKind::input ? "n" : "", *kind));
      if (leaf && !r.input_names.empty()) reader.error(entry, fmt::format("a{} {} has no inputs",
                                                                          r.op.kind == OpKind::input ? "n" : "", *kind));
      if (!leaf && r.shape && r.op.kind != OpKind::reshape)
        reader.error(entry, "the shape of a computed operator follows from its inputs; only a reshape takes 'shape'");
      if (r.op.kind == OpKind::attention && !r.flops) reader.error(entry, "an attention operator needs 'flops'");
    }
    raw.push_back(std::move(r));
  }
  top.finish();

  // Resolve names, then order topologically (Kahn; ties by file order) and report cycles.
  std::vector<std::vector<std::size_t>> inputs(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i)
    for (std::size_t k = 0; k < raw[i].input_names.size(); ++k) {
      const auto found = index_of.find(raw[i].input_names[k]);
      if (found == index_of.end()) {
        std::vector<std::string> names;
        for (const auto& [n, idx] : index_of) names.push_back(n);
        reader.sink().error(raw[i].input_where[k], fmt::format("unknown operator '{}'{}", raw[i].input_names[k],
                                                               suggestion_suffix(raw[i].input_names[k], names)));
      } else {
        inputs[i].push_back(found->second);
      }
    }
  if (!reader.sink().diagnostics().empty()) return {};
  std::vector<std::size_t> order;
  std::vector<int> pending(raw.size());
  std::vector<std::vector<std::size_t>> users(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    pending[i] = static_cast<int>(inputs[i].size());
    for (std::size_t in : inputs[i]) users[in].push_back(i);
  }
  std::vector<bool> done(raw.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < raw.size(); ++i)
      if (!done[i] && pending[i] == 0) {
        done[i] = true;
        order.push_back(i);
        for (std::size_t u : users[i]) --pending[u];
        progress = true;
        break;  // restart from the top: the lowest file position among the ready operators goes first
      }
  }
  if (order.size() != raw.size()) {
    // Every operator left waits on a cycle or on something downstream of one: report those on a cycle.
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (done[i]) continue;
      // Follow unfinished inputs from i; if we come back to i, it is on a cycle.
      std::vector<std::size_t> path{i};
      std::vector<bool> seen(raw.size(), false);
      std::size_t at = i;
      bool on_cycle = false;
      while (true) {
        const auto next = std::find_if(inputs[at].begin(), inputs[at].end(), [&](std::size_t in) { return !done[in]; });
        if (next == inputs[at].end() || seen[*next]) {
          on_cycle = next != inputs[at].end() && *next == i;
          break;
        }
        seen[*next] = true;
        at = *next;
        path.push_back(at);
        if (at == i) {
          on_cycle = true;
          break;
        }
      }
      if (!on_cycle) continue;
      std::string text;
      for (std::size_t p : path) text += raw[p].op.name + " ← ";
      text += raw[i].op.name;
      reader.sink().error(raw[i].where, fmt::format("operator '{}' is on a dependency cycle: {}", raw[i].op.name, text));
    }
    return {};
  }

  OpGraph graph(name, dtype);
  std::vector<OpId> id_of(raw.size());
  const auto arity_error = [&](const RawOp& r, const char* what) {
    reader.sink().error(r.where, fmt::format("operator '{}' ({}) {}", r.op.name, op_kind_name(r.op.kind), what));
  };
  for (std::size_t i : order) {
    RawOp& r = raw[i];
    SpmdOp op = r.op;
    for (std::size_t in : inputs[i]) op.inputs.push_back(id_of[in]);
    const auto shape_of = [&](std::size_t k) { return std::make_pair(graph.op(op.inputs[k]).rows, graph.op(op.inputs[k]).columns); };
    bool ok = true;
    switch (op.kind) {
      case OpKind::input:
      case OpKind::parameter:
        std::tie(op.rows, op.columns) = r.shape.value_or(std::make_pair(std::int64_t{1}, std::int64_t{1}));
        break;
      case OpKind::matmul: {
        if (op.inputs.size() != 2) { arity_error(r, "takes two inputs, A and B"); ok = false; break; }
        const auto [m, k] = shape_of(0);
        const auto [k2, n] = shape_of(1);
        if (k != k2) {
          reader.sink().error(r.where, fmt::format("matmul '{}': A is {}×{} but B is {}×{} (A's columns must equal B's rows)",
                                                   op.name, m, k, k2, n));
          ok = false;
        }
        op.rows = m;
        op.columns = n;
        op.forward_flops = Flop(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
        break;
      }
      case OpKind::elementwise:
      case OpKind::rowwise:
      case OpKind::attention:
      case OpKind::loss:
      case OpKind::reshape: {
        const std::size_t max_inputs = op.kind == OpKind::elementwise ? 2 : 1;
        if (op.inputs.empty() || op.inputs.size() > max_inputs) {
          arity_error(r, max_inputs == 2 ? "takes one input, or two of the same shape" : "takes one input");
          ok = false;
          break;
        }
        std::tie(op.rows, op.columns) = shape_of(0);
        if (op.inputs.size() == 2 && shape_of(1) != shape_of(0)) {
          reader.sink().error(r.where, fmt::format("elementwise '{}': its inputs are {}×{} and {}×{}", op.name,
                                                   shape_of(0).first, shape_of(0).second, shape_of(1).first, shape_of(1).second));
          ok = false;
        }
        const double elements = static_cast<double>(op.rows) * static_cast<double>(op.columns);
        if (op.kind == OpKind::elementwise) op.forward_flops = Flop(elements * static_cast<double>(op.inputs.size()));
        if (op.kind == OpKind::rowwise) op.forward_flops = Flop(5 * elements);
        if (op.kind == OpKind::loss) {
          op.forward_flops = Flop(elements);
          op.rows = op.columns = 1;
        }
        if (op.kind == OpKind::reshape) {
          if (!r.shape || r.shape->first * r.shape->second != op.rows * op.columns) {
            reader.sink().error(r.where, fmt::format("reshape '{}' needs 'shape' with as many elements as its input ({})",
                                                     op.name, op.rows * op.columns));
            ok = false;
          } else {
            std::tie(op.rows, op.columns) = *r.shape;
          }
        }
        if (r.flops) op.forward_flops = Flop(*r.flops);
        break;
      }
    }
    if (!ok) return {};
    id_of[i] = graph.add(std::move(op));
  }
  bool has_loss = false;
  for (const SpmdOp& op : graph.ops()) has_loss = has_loss || op.kind == OpKind::loss;
  if (!has_loss && !raw.empty()) reader.error(root, "the graph has no loss operator: training needs one");
  return graph;
}

}  // namespace

OpGraph parse_op_graph(const std::string& text, const std::string& file_name) {
  DiagnosticSink sink;
  YamlReader reader(file_name, sink);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    sink.error(reader.where(e.mark), e.msg);
  }
  sink.throw_if_any();
  OpGraph graph = read_op_graph(reader, root);
  sink.throw_if_any();
  return graph;
}

OpGraph load_op_graph(const std::string& path) {
  DiagnosticSink sink;
  YamlReader reader(path, sink);
  YAML::Node root = reader.load_file();
  sink.throw_if_any();
  OpGraph graph = read_op_graph(reader, root);
  sink.throw_if_any();
  return graph;
}

}  // namespace dnnsim
