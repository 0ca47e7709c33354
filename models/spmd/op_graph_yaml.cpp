// The hand-written operator-graph format (models/spmd/op_graph.hpp, docs/spmd.md): every operator
// read, names resolved, a topological order found (cycles reported on every operator of the cycle),
// and shapes and FLOPs derived from the inputs, with every problem located in the file.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "models/common/yaml_reader.hpp"
#include "models/spmd/op_graph.hpp"

namespace dnnsim {

namespace {

struct RawOp {
  SpmdOp op;
  std::vector<std::string> input_names;
  std::vector<SourceLocation> input_where;
  std::optional<std::pair<std::int64_t, std::int64_t>> shape;
  std::optional<double> flops;
  bool has_stride = false;
  SourceLocation where;
};

std::optional<RawOp> read_raw_op(YamlReader& reader, const YAML::Node& entry) {
  MapReader map(reader, entry, "an operator");
  if (!map.valid()) return std::nullopt;
  RawOp r;
  r.where = reader.where(entry);
  r.op.origin = r.where;
  r.op.name = map.string("name", true).value_or("");
  const auto kind = map.choice("kind", "operator kind", op_kind_names(), true);
  if (kind)
    for (OpKind k :
         {OpKind::input, OpKind::parameter, OpKind::matmul, OpKind::elementwise, OpKind::rowwise, OpKind::attention,
          OpKind::reshape, OpKind::loss, OpKind::embedding, OpKind::transpose, OpKind::concat, OpKind::experts})
      if (op_kind_name(k) == *kind) r.op.kind = k;
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
  r.has_stride = map.has("stride");
  if (auto stride = map.integer("stride", 1, 1 << 20)) r.op.stride = static_cast<int>(*stride);
  if (auto experts = map.integer("experts", 1, 1 << 20)) r.op.experts = static_cast<int>(*experts);
  if (auto routed = map.number("routed", 1e-9, 1e6)) r.op.routed = *routed;
  map.finish();
  if (!kind) return r;
  const bool leaf = r.op.kind == OpKind::input || r.op.kind == OpKind::parameter;
  const char* article = r.op.kind == OpKind::input ? "an" : "a";
  if (leaf && !r.shape) reader.error(entry, fmt::format("{} {} needs 'shape: [rows, columns]'", article, *kind));
  if (leaf && !r.input_names.empty()) reader.error(entry, fmt::format("{} {} has no inputs", article, *kind));
  if (!leaf && r.shape && r.op.kind != OpKind::reshape)
    reader.error(entry, "the shape of a computed operator follows from its inputs; only a reshape takes 'shape'");
  if (r.op.kind == OpKind::attention && !r.flops) reader.error(entry, "an attention operator needs 'flops'");
  if (r.op.kind == OpKind::experts && r.op.experts == 0) reader.error(entry, "an experts operator needs 'experts' (E)");
  if (r.op.kind != OpKind::experts && (map.has("experts") || map.has("routed")))
    reader.error(entry, "'experts' and 'routed' belong to an experts operator");
  if (r.has_stride && !leaf) reader.error(entry, "'stride' is given on inputs and parameters; products inherit it");
  // Rhino's strided split gives each device the same share of each of the `stride` blocks: the
  // columns must split into that many equal blocks.
  if (r.has_stride && r.shape && r.shape->second % r.op.stride != 0)
    reader.error(map.node()["stride"], fmt::format("stride {} does not divide the {} columns of '{}' into equal blocks",
                                                   r.op.stride, r.shape->second, r.op.name));
  return r;
}

// Kahn's algorithm, the lowest file position first among the ready operators; the operators left
// over wait on a cycle or on something downstream of one, and those on a cycle are reported.
std::optional<std::vector<std::size_t>> topological_order(YamlReader& reader, const std::vector<RawOp>& raw,
                                                          const std::vector<std::vector<std::size_t>>& inputs) {
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
        break;
      }
  }
  if (order.size() == raw.size()) return order;
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
  return std::nullopt;
}

// The shape and FLOPs of `op` from its (already shaped) inputs; false after reporting a problem.
bool derive_shape(YamlReader& reader, const OpGraph& graph, const RawOp& r, SpmdOp& op) {
  const auto shape_of = [&](std::size_t k) {
    return std::make_pair(graph.op(op.inputs[k]).rows, graph.op(op.inputs[k]).columns);
  };
  const auto fail = [&](const std::string& message) {
    reader.sink().error(r.where, message);
    return false;
  };
  const auto arity = [&](const char* what) {
    return fail(fmt::format("operator '{}' ({}) {}", op.name, op_kind_name(op.kind), what));
  };
  const double elements_in =
      op.inputs.empty() ? 0.0 : static_cast<double>(shape_of(0).first) * static_cast<double>(shape_of(0).second);
  switch (op.kind) {
    case OpKind::input:
    case OpKind::parameter:
      std::tie(op.rows, op.columns) = r.shape.value_or(std::make_pair(std::int64_t{1}, std::int64_t{1}));
      return true;
    case OpKind::matmul: {
      if (op.inputs.size() != 2) return arity("takes two inputs, A and B");
      const auto [m, k] = shape_of(0);
      const auto [k2, n] = shape_of(1);
      if (k != k2)
        return fail(fmt::format("matmul '{}': A is {}×{} but B is {}×{} (A's columns must equal B's rows)", op.name, m,
                                k, k2, n));
      op.rows = m;
      op.columns = n;
      op.stride = graph.op(op.inputs[1]).stride;
      op.forward_flops = Flop(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
      break;
    }
    case OpKind::experts: {
      if (op.inputs.size() != 4) return arity("takes four inputs: the rows, W1, W2 and the gate scores");
      const auto [m, h] = shape_of(0);
      const auto [eh, f] = shape_of(1);
      const std::int64_t e = op.experts;
      if (eh != e * h || shape_of(2) != std::make_pair(e * f, h) || shape_of(3) != std::make_pair(m, e))
        return fail(
            fmt::format("experts '{}': for {} rows of {} and {} experts, W1 must be {}×f, W2 {}·f×{} and the gate "
                        "scores {}×{} (they are {}×{}, {}×{}, {}×{})",
                        op.name, m, h, e, e * h, e, h, m, e, eh, f, shape_of(2).first, shape_of(2).second,
                        shape_of(3).first, shape_of(3).second));
      op.rows = m;
      op.columns = h;
      const double routed = static_cast<double>(m) * op.routed;
      op.forward_flops =
          Flop(4.0 * routed * static_cast<double>(h) * static_cast<double>(f) + routed * static_cast<double>(f));
      break;
    }
    case OpKind::embedding: {
      if (op.inputs.size() < 2 || op.inputs.size() > 3)
        return arity("takes the ids, the table and optionally a second table");
      if (op.inputs.size() == 3 && shape_of(2).second != shape_of(1).second)
        return fail(fmt::format("embedding '{}': its tables are {} and {} columns wide", op.name, shape_of(1).second,
                                shape_of(2).second));
      op.rows = shape_of(0).first;
      op.columns = shape_of(1).second;
      op.forward_flops = Flop(static_cast<double>(op.rows) * static_cast<double>(op.columns));
      break;
    }
    case OpKind::transpose:
      if (op.inputs.size() != 1) return arity("takes one input");
      std::tie(op.columns, op.rows) = shape_of(0);
      break;
    case OpKind::concat: {
      if (op.inputs.size() < 2) return arity("takes two inputs or more");
      op.rows = shape_of(0).first;
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        if (shape_of(k).first != op.rows)
          return fail(fmt::format("concat '{}': its inputs have {} and {} rows", op.name, op.rows, shape_of(k).first));
        op.columns += shape_of(k).second;
      }
      break;
    }
    case OpKind::elementwise:
    case OpKind::rowwise:
    case OpKind::attention:
    case OpKind::loss:
    case OpKind::reshape: {
      const std::size_t max_inputs = op.kind == OpKind::elementwise ? 2 : 1;
      if (op.inputs.empty() || op.inputs.size() > max_inputs)
        return arity(max_inputs == 2 ? "takes one input, or two of the same shape" : "takes one input");
      std::tie(op.rows, op.columns) = shape_of(0);
      if (op.inputs.size() == 2 && shape_of(1) != shape_of(0))
        return fail(fmt::format("elementwise '{}': its inputs are {}×{} and {}×{}", op.name, shape_of(0).first,
                                shape_of(0).second, shape_of(1).first, shape_of(1).second));
      if (op.kind == OpKind::elementwise) op.stride = graph.op(op.inputs[0]).stride;
      // Attention on a fused [Q K V] (stride 3) gives the context, a third as wide.
      if (op.kind == OpKind::attention) op.columns /= graph.op(op.inputs[0]).stride;
      if (op.kind == OpKind::elementwise) op.forward_flops = Flop(elements_in * static_cast<double>(op.inputs.size()));
      if (op.kind == OpKind::rowwise) op.forward_flops = Flop(5 * elements_in);
      if (op.kind == OpKind::loss) {
        op.forward_flops = Flop(elements_in);
        op.rows = op.columns = 1;
      }
      if (op.kind == OpKind::reshape) {
        if (!r.shape || r.shape->first * r.shape->second != op.rows * op.columns)
          return fail(fmt::format("reshape '{}' needs 'shape' with as many elements as its input ({})", op.name,
                                  op.rows * op.columns));
        std::tie(op.rows, op.columns) = *r.shape;
      }
      break;
    }
  }
  if (r.flops) op.forward_flops = Flop(*r.flops);
  return true;
}

OpGraph read_op_graph(YamlReader& reader, const YAML::Node& root) {
  MapReader top(reader, root, "an operator graph");
  if (!top.valid()) return {};
  const std::string name = top.string("name").value_or("graph");
  Dtype dtype = Dtype::fp32;
  if (auto d = top.choice("dtype", dtype_names())) dtype = *dtype_from_name(*d);
  std::vector<RawOp> raw;
  std::map<std::string, std::size_t> index_of;
  const YAML::Node list = top.require("ops");
  for (const YAML::Node& entry : list.IsDefined() ? reader.list(list, "operators") : std::vector<YAML::Node>{}) {
    std::optional<RawOp> r = read_raw_op(reader, entry);
    if (!r) continue;
    if (!r->op.name.empty() && !index_of.emplace(r->op.name, raw.size()).second)
      reader.error(entry, fmt::format("operator '{}' is defined twice", r->op.name));
    raw.push_back(std::move(*r));
  }
  top.finish();

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
  const std::optional<std::vector<std::size_t>> order = topological_order(reader, raw, inputs);
  if (!order) return {};

  OpGraph graph(name, dtype);
  std::vector<OpId> id_of(raw.size());
  for (std::size_t i : *order) {
    SpmdOp op = raw[i].op;
    for (std::size_t in : inputs[i]) op.inputs.push_back(id_of[in]);
    if (!derive_shape(reader, graph, raw[i], op)) return {};
    id_of[i] = graph.add(std::move(op));
  }
  // An experts operator's weights are a parameter, split in whole experts by expert parallelism.
  for (OpId id = 0; id < graph.size(); ++id) {
    if (graph.op(id).kind != OpKind::experts) continue;
    for (std::size_t k : {1, 2}) {
      const OpId weight = graph.op(id).inputs[k];
      if (graph.op(weight).kind != OpKind::parameter) {
        reader.sink().error(graph.op(id).origin,
                            fmt::format("experts '{}': W1 and W2 must be parameters", graph.op(id).name));
        return {};
      }
      graph.set_experts(weight, graph.op(id).experts);
    }
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
