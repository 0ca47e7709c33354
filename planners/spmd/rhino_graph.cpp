#include "planners/spmd/rhino_graph.hpp"

#include <algorithm>

namespace dnnsim {

std::vector<OpId> critical_nodes(const OpGraph& graph) {
  const std::vector<OpId> last = graph.last_use();
  std::vector<OpId> critical;
  // Sweep the boundaries in id order, counting the activations live across each.
  std::vector<int> ends_after(graph.size() + 1, 0);
  int live = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    live -= ends_after[id];  // tensors last read by `id` stop crossing after it
    const bool crosses = last[id] > id && graph.op(id).kind != OpKind::parameter;
    if (crosses) {
      ++live;
      ++ends_after[last[id]];
    }
    if (crosses && live == 1 && id + 1 < graph.size()) critical.push_back(id);
  }
  return critical;
}

namespace {

bool is_parameter(const OpGraph& graph, OpId id) { return graph.op(id).kind == OpKind::parameter; }

std::vector<RhinoCone> cones_of(const OpGraph& graph, const std::vector<std::vector<OpId>>& users, OpId begin, OpId end,
                                bool fine) {
  const auto inside = [&](OpId id) { return id >= begin && id < end; };
  std::vector<bool> root(end - begin, false);
  for (OpId id = begin; id < end; ++id) {
    if (is_parameter(graph, id)) continue;
    std::size_t local_users = 0;
    for (OpId u : users[id]) local_users += inside(u) ? 1 : 0;
    if (local_users != 1) root[id - begin] = true;  // read by several, or by nothing here: a root
    if (fine) {
      std::vector<OpId> local_operands;
      for (OpId in : graph.op(id).inputs)
        if (inside(in) && !is_parameter(graph, in)) local_operands.push_back(in);
      if (local_operands.size() > 1) {
        root[id - begin] = true;
        for (OpId in : local_operands) root[in - begin] = true;
      }
    }
  }
  // Each operator joins the cone of the root it leads to through its one local reader.
  std::vector<OpId> owner(end - begin);
  for (OpId id = end; id-- > begin;) {
    if (root[id - begin]) {
      owner[id - begin] = id;
      continue;
    }
    OpId reader = end;
    for (OpId u : users[id])
      if (inside(u)) reader = std::min(reader, u);
    owner[id - begin] = reader < end ? owner[reader - begin] : id;
  }
  std::vector<RhinoCone> cones;
  for (OpId id = begin; id < end; ++id)
    if (owner[id - begin] == id) cones.push_back({id, {}});
  for (OpId id = begin; id < end; ++id) {
    auto cone =
        std::find_if(cones.begin(), cones.end(), [&](const RhinoCone& c) { return c.root == owner[id - begin]; });
    cone->ops.push_back(id);
  }
  return cones;
}

}  // namespace

std::vector<RhinoSubgraph> decompose(const OpGraph& graph, int group, bool fine) {
  const std::vector<OpId> critical = critical_nodes(graph);
  const std::vector<std::vector<OpId>> users = graph.users();
  std::vector<OpId> cuts;  // the last operator of each sub-graph but the last
  for (std::size_t i = static_cast<std::size_t>(std::max(1, group)) - 1; i < critical.size();
       i += static_cast<std::size_t>(std::max(1, group)))
    cuts.push_back(critical[i]);
  std::vector<RhinoSubgraph> result;
  OpId begin = 0;
  for (std::size_t c = 0; c <= cuts.size(); ++c) {
    const OpId end = c < cuts.size() ? cuts[c] + 1 : static_cast<OpId>(graph.size());
    RhinoSubgraph sub;
    sub.begin = begin;
    sub.end = end;
    if (c > 0) sub.entering = cuts[c - 1];
    sub.cones = cones_of(graph, users, begin, end, fine);
    result.push_back(std::move(sub));
    begin = end;
  }
  return result;
}

}  // namespace dnnsim
