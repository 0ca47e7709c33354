#include "planners/spmd/sharding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "models/program/collective_algorithms.hpp"

namespace dnnsim {

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::replicated:
      return "replicated";
    case Layout::split_rows:
      return "rows";
    case Layout::split_columns:
      return "columns";
    case Layout::partial:
      return "partial";
    case Layout::split_strided:
      return "strided";
  }
  return "?";
}

std::string_view conversion_name(Conversion conversion) {
  switch (conversion) {
    case Conversion::all_reduce:
      return "all-reduce";
    case Conversion::reduce_scatter:
      return "reduce-scatter";
    case Conversion::all_gather:
      return "all-gather";
    case Conversion::all_to_all:
      return "all-to-all";
    case Conversion::slice:
      return "slice";
    case Conversion::grouped_broadcast:
      return "grouped broadcast";
    case Conversion::grouped_reduce:
      return "grouped reduce";
    case Conversion::reshard:
      return "reshard all-to-all";
  }
  return "?";
}

std::optional<Conversion> conversion_between(Layout from, Layout to, bool grouped) {
  using L = Layout;
  if (from == to || to == L::partial) return std::nullopt;
  if (from == L::partial)
    return to == L::replicated ? Conversion::all_reduce
           : grouped           ? Conversion::grouped_reduce
                               : Conversion::reduce_scatter;
  if (from == L::replicated) return Conversion::slice;
  if (to == L::replicated) return grouped ? Conversion::grouped_broadcast : Conversion::all_gather;
  return Conversion::all_to_all;  // one split ↔ another
}

std::vector<ShardingRule> sharding_rules(const OpGraph& graph, OpId id) {
  using L = Layout;
  const SpmdOp& op = graph.op(id);
  const auto strided_input = [&](std::size_t k) { return k < op.inputs.size() && graph.op(op.inputs[k]).stride > 1; };
  std::vector<ShardingRule> rules;
  const auto all = [&](Layout in, Layout out, bool sharded) {
    rules.push_back({std::vector<Layout>(op.inputs.size(), in), out, sharded});
  };
  switch (op.kind) {
    case OpKind::input:  // Placeholder-Shard(0), or every device loads the whole batch
      return {{{}, L::split_rows, true}, {{}, L::replicated, false}};
    case OpKind::parameter:  // replicated (gradients all-reduced), or Parameter-Shard(d)
      rules = {{{}, L::replicated, false}, {{}, L::split_rows, true}, {{}, L::split_columns, true}};
      if (op.stride > 1) rules.push_back({{}, L::split_strided, true});
      return rules;
    case OpKind::matmul:
      rules = {{{L::split_rows, L::replicated}, L::split_rows, true},        // data parallel
               {{L::split_rows, L::replicated}, L::split_rows, true, true},  // … with SFB
               {{L::replicated, L::split_columns}, L::split_columns, true},  // column (feature) parallel
               {{L::split_columns, L::split_rows}, L::partial, true},        // row (reduction) parallel
               {{L::replicated, L::replicated}, L::replicated, false}};      // replicated computation
      if (strided_input(1)) rules.push_back({{L::replicated, L::split_strided}, L::split_strided, true});
      return rules;
    case OpKind::experts:                                                                           // [x, W1, W2, gate]
      return {{{L::split_rows, L::split_rows, L::split_rows, L::split_rows}, L::split_rows, true},  // expert parallel
              {{L::split_rows, L::replicated, L::replicated, L::split_rows}, L::split_rows, true},  // data parallel
              // each expert's FFN split as Megatron splits an MLP: W1 by columns, W2 by rows, a partial sum
              {{L::replicated, L::split_columns, L::split_rows, L::replicated}, L::partial, true},
              {{L::replicated, L::replicated, L::replicated, L::replicated}, L::replicated, false}};
    case OpKind::elementwise:
      all(L::split_rows, L::split_rows, true);
      all(L::split_columns, L::split_columns, true);
      if (op.stride > 1) all(L::split_strided, L::split_strided, true);
      all(L::replicated, L::replicated, false);
      if (op.inputs.size() == 2) all(L::partial, L::partial, false);  // an addition: partial sums add too
      return rules;
    case OpKind::attention:  // by samples or by heads (of a fused [Q K V]: a strided split)
      return {{{L::split_rows}, L::split_rows, true},
              {{strided_input(0) ? L::split_strided : L::split_columns}, L::split_columns, true},
              {{L::replicated}, L::replicated, false}};
    case OpKind::rowwise:  // along each row: rows may be split, columns not
      return {{{L::split_rows}, L::split_rows, true}, {{L::replicated}, L::replicated, false}};
    case OpKind::reshape:  // only the rows' split survives a change of layout; partial sums stay partial
      return {{{L::split_rows}, L::split_rows, true},
              {{L::replicated}, L::replicated, false},
              {{L::partial}, L::partial, false}};
    case OpKind::loss:  // a sum: over a split, or of partial addends, it is a partial sum
      rules = {{{L::split_rows}, L::partial, true},
               {{L::split_columns}, L::partial, true},
               {{L::replicated}, L::replicated, false},
               {{L::partial}, L::partial, false}};
      if (strided_input(0)) rules.push_back({{L::split_strided}, L::partial, true});
      return rules;
    case OpKind::embedding: {
      // Data parallel; the hidden dimension split; Megatron's vocabulary-parallel lookup (each device
      // its rows of the table, a partial sum of lookups); replicated.
      const bool second = op.inputs.size() == 3;
      const auto with = [&](std::vector<Layout> in, Layout extra) {
        if (second) in.push_back(extra);
        return in;
      };
      return {{with({L::split_rows, L::replicated}, L::replicated), L::split_rows, true},
              {with({L::replicated, L::split_columns}, L::split_columns), L::split_columns, true},
              {with({L::replicated, L::split_rows}, L::replicated), L::partial, true},
              {with({L::replicated, L::replicated}, L::replicated), L::replicated, false}};
    }
    case OpKind::transpose:
      return {{{L::split_rows}, L::split_columns, true},
              {{L::split_columns}, L::split_rows, true},
              {{L::replicated}, L::replicated, false},
              {{L::partial}, L::partial, false}};
    case OpKind::concat:  // side by side: a split of the rows, or nothing split
      all(L::split_rows, L::split_rows, true);
      all(L::replicated, L::replicated, false);
      all(L::partial, L::partial, false);
      return rules;
  }
  return rules;
}

int Mesh::devices() const {
  int product = 1;
  for (int a : axes) product *= a;
  return product;
}

int Mesh::coordinate(std::size_t device, std::size_t axis) const {
  std::size_t stride = 1;
  for (std::size_t b = axis + 1; b < axes.size(); ++b) stride *= static_cast<std::size_t>(axes[b]);
  return static_cast<int>((device / stride) % static_cast<std::size_t>(axes[axis]));
}

std::vector<std::vector<DeviceId>> Mesh::groups(const std::vector<std::size_t>& along) const {
  const auto in = [&](std::size_t a) { return std::find(along.begin(), along.end(), a) != along.end(); };
  std::vector<std::vector<DeviceId>> result;
  std::map<std::vector<int>, std::size_t> index_of;  // coordinates off `along` → group
  for (std::size_t d = 0; d < static_cast<std::size_t>(devices()); ++d) {
    std::vector<int> key;
    for (std::size_t a = 0; a < axes.size(); ++a) key.push_back(in(a) ? 0 : coordinate(d, a));
    const auto [it, inserted] = index_of.emplace(key, result.size());
    if (inserted) result.emplace_back();
    result[it->second].push_back(static_cast<DeviceId>(d));
  }
  return result;
}

std::string Mesh::describe() const {
  std::string text = "[";
  for (std::size_t a = 0; a < axes.size(); ++a) text += (a ? " × " : "") + std::to_string(axes[a]);
  return text + "]";
}

CollectiveLines SpmdCluster::lines(const Mesh& mesh, const std::vector<std::size_t>& axes) const {
  if (axes.size() == mesh.axes.size() || !axis_lines) return all;
  return axis_lines(mesh, axes);
}

namespace {

// Per node, how many of its devices are in a group of `groups` that spans several nodes.
std::vector<int> nic_sharing(const ClusterView& view, const std::vector<std::vector<DeviceId>>& groups) {
  std::vector<int> sharing;
  for (const auto& group : groups) {
    bool spans = false;
    for (DeviceId d : group) spans = spans || view.devices[d].node != view.devices[group.front()].node;
    if (!spans) continue;
    for (DeviceId d : group) {
      if (sharing.size() <= view.devices[d].node) sharing.resize(view.devices[d].node + 1, 0);
      ++sharing[view.devices[d].node];
    }
  }
  std::uint32_t nodes = 0;
  for (const ClusterDevice& d : view.devices) nodes = std::max(nodes, d.node + 1);
  sharing.resize(nodes, 0);
  return sharing;
}

// Per node, the edges of the groups' rings (member i to i + 1, the last to the first) that leave it.
std::vector<int> ring_edges_leaving(const ClusterView& view, const std::vector<std::vector<DeviceId>>& groups) {
  std::uint32_t nodes = 0;
  for (const ClusterDevice& d : view.devices) nodes = std::max(nodes, d.node + 1);
  std::vector<int> edges(nodes, 0);
  for (const auto& group : groups)
    for (std::size_t i = 0; i < group.size(); ++i) {
      const std::uint32_t from = view.devices[group[i]].node, to = view.devices[group[(i + 1) % group.size()]].node;
      if (from != to) ++edges[from];
    }
  return edges;
}

// The linear costs of collectives over the axis' groups (they all run at once), priced on the first:
// exact at both ends for the ring's max over its edges of α_e + (S/p)/β_e once S is large. An
// inter-node path's bandwidth is shared by what leaves its node at once (one NIC per node; a GPU with a
// NIC of its own shares nothing): a ring sends through it once per ring edge that leaves the node (one
// ring over a shared NIC: collectives.md, "Channels"), the other algorithms from every member of a
// group that spans nodes (hierarchical's g inter-node rings, direct's pairs).
CollectiveLines fit_lines(const ClusterView& view, const DeviceTopology& topology,
                          const std::vector<std::vector<DeviceId>>& groups, const std::string& all_reduce_algorithm) {
  const std::vector<DeviceId>& group = groups.front();
  const std::vector<int> members = nic_sharing(view, groups), edges = ring_edges_leaving(view, groups);
  const auto fit = [&](CollectiveKind kind) {
    const double small = 1.0, large = 1e9;
    Collective c{kind, group, Bytes(small), kind == CollectiveKind::all_reduce ? all_reduce_algorithm : ""};
    c.root = group.front();
    const std::string name = c.algorithm.empty() ? default_collective_algorithm(c, topology) : c.algorithm.str();
    const bool ring = builtin_collective_algorithms().at(name).value->follows_group_order();
    const std::vector<int>& sharing = ring ? edges : members;
    const auto path = [&](DeviceId a, DeviceId b) {
      PathCost cost = view.path(a, b);
      if (view.devices[a].node != view.devices[b].node && !view.devices[a].own_nic)
        cost.bandwidth = cost.bandwidth / std::max(1, sharing[view.devices[a].node]);
      return cost;
    };
    const double t_small = collective_time(c, topology, path).value();
    c.size = Bytes(large);
    const double t_large = collective_time(c, topology, path).value();
    LinearCost line;
    line.seconds_per_byte = (t_large - t_small) / (large - small);
    line.alpha = std::max(0.0, t_small - small * line.seconds_per_byte);
    return line;
  };
  if (group.size() < 2) return {};
  return {fit(CollectiveKind::all_reduce), fit(CollectiveKind::all_gather), fit(CollectiveKind::reduce_scatter),
          fit(CollectiveKind::all_to_all), fit(CollectiveKind::broadcast)};
}

}  // namespace

SpmdCluster make_spmd_cluster(const ClusterView& view, Dtype dtype, const SpmdCommOptions& comm) {
  SpmdCluster cluster;
  cluster.names = view.names();
  cluster.comm = comm;
  const std::string& all_reduce_algorithm = comm.all_reduce_algorithm;
  for (const ClusterDevice& d : view.devices) {
    cluster.flops_per_second.push_back(
        d.gpu.peak(dtype).value_or(d.gpu.peak(Dtype::fp32).value_or(FlopsPerSecond(1e12))).value() *
        d.compute_efficiency);
    cluster.memory_bytes.push_back(d.gpu.memory.value());
  }
  std::map<std::uint32_t, int> per_node;
  for (const ClusterDevice& d : view.devices) ++per_node[d.node];
  cluster.gpus_per_node = per_node.begin()->second;
  for (const auto& [node, count] : per_node)
    if (count != cluster.gpus_per_node) cluster.gpus_per_node = 0;
  if (view.size() < 2) return cluster;  // nothing to communicate
  auto shared_view = std::make_shared<const ClusterView>(view);
  auto topology = std::make_shared<const DeviceTopology>(view.topology());
  const Mesh flat{{static_cast<int>(view.size())}};
  cluster.all = fit_lines(view, *topology, flat.groups(0), all_reduce_algorithm);
  // Fitted once per (mesh, axis) a planner asks about.
  auto cache = std::make_shared<std::map<std::pair<std::vector<int>, std::vector<std::size_t>>, CollectiveLines>>();
  cluster.axis_lines = [shared_view, topology, cache, all_reduce_algorithm](const Mesh& mesh,
                                                                            const std::vector<std::size_t>& axes) {
    const auto key = std::make_pair(mesh.axes, axes);
    if (auto found = cache->find(key); found != cache->end()) return found->second;
    const CollectiveLines lines = fit_lines(*shared_view, *topology, mesh.groups(axes), all_reduce_algorithm);
    cache->emplace(key, lines);
    return lines;
  };
  return cluster;
}

int SpmdProgram::segments() const {
  int count = 1;
  for (int s : segment) count = std::max(count, s + 1);
  return count;
}

std::string SpmdProgram::describe(const OpGraph& graph) const {
  std::string text;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const SpmdOp& op = graph.op(static_cast<OpId>(i));
    std::string axes_text;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const ShardedOp& s = axes[a][i];
      std::string inputs;
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        if (k > 0) inputs += ", ";
        inputs += fmt::format("{}:{}", graph.op(op.inputs[k]).name, layout_name(s.rule.inputs[k]));
        for (const ShardedOp::Convert& c : s.converts)
          if (c.input == k) inputs += fmt::format(" ({} from {})", conversion_name(c.conversion), layout_name(c.from));
      }
      if (axes.size() > 1) axes_text += fmt::format("{}axis {}: ", a ? "; " : "", a);
      axes_text += fmt::format("{}({}) → {}{}{}{}", op_kind_name(op.kind), inputs, layout_name(s.rule.output),
                               s.rule.sharded ? "" : ", computed on every device",
                               s.rule.sfb ? ", weight gradient by sufficient factors" : "",
                               s.synchronizes.empty() ? "" : ", weight gradient all-reduced");
    }
    text +=
        fmt::format("{}{} = {}\n", op.name, segment.empty() ? "" : fmt::format(" [segment {}]", segment[i]), axes_text);
  }
  return text;
}

std::size_t SpmdProgram::collective_count() const {
  std::size_t count = 0;
  for (const auto& ops : axes)
    for (const ShardedOp& s : ops) {
      for (const ShardedOp::Convert& c : s.converts) count += c.conversion == Conversion::slice ? 0 : 1;
      count += s.synchronizes.size() + (s.rule.sfb ? 2 : 0);
    }
  return count;
}

ShardRatios ShardRatios::even(const Mesh& mesh, int segments) {
  ShardRatios ratios;
  for (int size : mesh.axes)
    ratios.values.push_back(std::vector<std::vector<double>>(
        static_cast<std::size_t>(segments), std::vector<double>(static_cast<std::size_t>(size), 1.0 / size)));
  return ratios;
}

std::vector<double> ShardRatios::device_shares(const Mesh& mesh, int segment) const {
  std::vector<double> shares(static_cast<std::size_t>(mesh.devices()), 1.0);
  for (std::size_t d = 0; d < shares.size(); ++d)
    for (std::size_t a = 0; a < mesh.axes.size(); ++a)
      shares[d] *= values[a][static_cast<std::size_t>(segment)][static_cast<std::size_t>(mesh.coordinate(d, a))];
  return shares;
}

double sbp_boxing_bytes(Layout from, Layout to, double bytes, int p1, int p2) {
  using L = Layout;
  const double t = bytes;
  if (to == L::partial && from != L::partial) return kPartialPenaltyBytes;
  if (p1 == p2) {
    const double p = p1;
    if (from == to) return 0;
    if (is_split(from) && is_split(to)) return t * (p - 1) / p;             // all-to-all
    if (is_split(from) && to == L::replicated) return t * (p - 1);          // all-gather
    if (from == L::partial && is_split(to)) return t * (p - 1);             // reduce-scatter
    if (from == L::partial && to == L::replicated) return 2 * t * (p - 1);  // all-reduce
    return 1;                                                               // B → S: each device keeps its slice
  }
  // Different placements: the tensor crosses once, plus the gathering or reducing on either side.
  double cost = t;
  if (from == L::partial) cost += (p1 - 1) * t;
  if (to == L::replicated) cost += (p2 - 1) * t;
  return cost;
}

double largest_share(const std::vector<double>& shares) {
  return shares.empty() ? 1.0 : *std::max_element(shares.begin(), shares.end());
}

std::vector<std::int64_t> shard_lengths(std::int64_t length, const std::vector<double>& ratios) {
  std::vector<std::int64_t> lengths(ratios.size());
  std::vector<double> remainder(ratios.size());
  std::int64_t given = 0;
  for (std::size_t j = 0; j < ratios.size(); ++j) {
    const double exact = ratios[j] * static_cast<double>(length);
    lengths[j] = static_cast<std::int64_t>(std::floor(exact));
    remainder[j] = exact - static_cast<double>(lengths[j]);
    given += lengths[j];
  }
  std::vector<std::size_t> order(ratios.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t i = 0; given < length; i = (i + 1) % order.size(), ++given) ++lengths[order[i]];
  return lengths;
}

}  // namespace dnnsim
