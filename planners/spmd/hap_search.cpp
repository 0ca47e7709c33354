#include "planners/spmd/hap_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace dnnsim {

namespace {

constexpr std::uint8_t bit(Layout l) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(l)); }

// What a live tensor is known as (HAP's properties of one reference tensor).
struct LiveTensor {
  OpId id = 0;
  std::uint8_t layouts = 0;   // bit per Layout
  bool communicated = false;  // HAP's Communicated: no second collective
  bool synced = false;        // a parameter whose gradient all-reduce is already charged
  int segment = 0;            // whose ratios its split layouts follow
  bool operator<(const LiveTensor& o) const {
    return std::tie(id, layouts, communicated, synced, segment) <
           std::tie(o.id, o.layouts, o.communicated, o.synced, o.segment);
  }
  bool operator==(const LiveTensor& o) const = default;
};

struct SearchNode {
  std::vector<LiveTensor> live;  // sorted by id
  double cost = 0;
  std::size_t parent = 0;  // index into the previous operator's nodes
  ShardedOp choice;
};

// A parameter stays live while a transpose of it can still be read: its gradient is summed over
// every use before its one all-reduce.
std::vector<OpId> effective_last_use(const OpGraph& graph) {
  std::vector<OpId> last = graph.last_use();
  for (OpId id = 0; id < graph.size(); ++id)
    if (graph.op(id).kind == OpKind::transpose)
      if (const auto root = weight_root(graph, id)) last[*root] = std::max(last[*root], last[id]);
  return last;
}

class ProgramSearch {
 public:
  ProgramSearch(const OpGraph& graph, const std::vector<int>& segment, const ShardRatios& ratios,
                const SpmdCluster& cluster, const ProgramSearchOptions& options)
      : graph_(graph),
        segment_(segment),
        ratios_(ratios),
        cluster_(cluster),
        options_(options),
        mesh_{{static_cast<int>(cluster.size())}},
        lines_(cluster.all),
        last_use_(effective_last_use(graph)) {}

  // Applies `rule` to `node`'s state: the conversions it needs, the syncs it charges; false when a
  // tensor would need a second communication or a parameter a first.
  bool apply(OpId id, const ShardingRule& rule, std::vector<LiveTensor>& live, ShardedOp& choice) const {
    const SpmdOp& op = graph_.op(id);
    const int seg = segment_of(id);
    const auto find = [&](OpId t) {
      return std::find_if(live.begin(), live.end(), [&](const LiveTensor& l) { return l.id == t; });
    };
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      auto it = find(op.inputs[k]);
      const Layout want = rule.inputs[k];
      if ((it->layouts & bit(want)) && (!is_split(want) || it->segment == seg)) continue;
      if (it->communicated || graph_.op(it->id).kind == OpKind::parameter) return false;
      std::optional<ShardedOp::Convert> best;
      double best_time = 0;
      for (Layout have :
           {Layout::replicated, Layout::split_rows, Layout::split_columns, Layout::partial, Layout::split_strided}) {
        if (!(it->layouts & bit(have))) continue;
        for (bool grouped : {false, true}) {
          if (grouped && !options_.grouped) continue;
          std::optional<Conversion> c =
              have == want ? std::optional<Conversion>(Conversion::reshard) : conversion_between(have, want, grouped);
          if (!c || (grouped && (*c != Conversion::grouped_broadcast && *c != Conversion::grouped_reduce))) continue;
          const double time = convert_time(*c, have, want, graph_.bytes(it->id).value(), seg, it->segment);
          if (!best || time < best_time) {
            best = ShardedOp::Convert{k, have, want, *c};
            best_time = time;
          }
        }
      }
      if (!best) return false;
      choice.converts.push_back(*best);
      // A split entering another segment holds only its new shards; replicated and partial copies stay.
      if (is_split(want) && it->segment != seg)
        it->layouts &= static_cast<std::uint8_t>(bit(Layout::replicated) | bit(Layout::partial));
      it->layouts |= bit(want);
      if (is_split(want)) it->segment = seg;
      it->communicated = true;
    }
    if (rule.sharded)
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        const std::optional<OpId> root = weight_root(graph_, op.inputs[k]);
        if (!root || rule.inputs[k] != Layout::replicated || (rule.sfb && k == 1)) continue;
        auto it = find(*root);
        if (it == live.end() || it->layouts != bit(Layout::replicated) || it->synced) continue;
        it->synced = true;
        choice.synchronizes.push_back(k);
      }
    return true;
  }

  double convert_time(Conversion c, Layout from, Layout to, double bytes, int seg, int source) const {
    if (options_.model == SpmdCostModel::sbp)
      return boxing_time(from, to, bytes, static_cast<int>(cluster_.size()), lines_);
    return conversion_time(c, bytes, ratios_.of(0, seg), lines_, ratios_.of(0, source));
  }

  SpmdProgram run(SearchStatistics& stats) const {
    std::vector<std::vector<SearchNode>> layers(graph_.size() + 1);
    layers[0].push_back(SearchNode{});
    for (OpId id = 0; id < graph_.size(); ++id) {
      const SpmdOp& op = graph_.op(id);
      std::map<std::vector<LiveTensor>, std::size_t> index_of;  // state → position in `next`
      std::vector<SearchNode>& next = layers[id + 1];
      for (std::size_t from = 0; from < layers[id].size(); ++from) {
        const SearchNode& node = layers[id][from];
        for (const ShardingRule& rule : sharding_rules(graph_, id)) {
          if (rule.sfb && !options_.sfb) continue;
          if (options_.filter && !options_.filter(op, rule)) continue;
          ++stats.transitions;
          std::vector<LiveTensor> live = node.live;
          ShardedOp choice{id, rule, {}, {}};
          if (!apply(id, rule, live, choice)) continue;
          live.push_back(LiveTensor{id, bit(rule.output), false, false, segment_of(id)});
          std::erase_if(live, [&](const LiveTensor& t) { return last_use_[t.id] <= id; });
          std::sort(live.begin(), live.end());
          const double cost =
              node.cost + op_cost(graph_, mesh_, {&choice}, segment_, ratios_, cluster_, options_.model).total();
          const auto [pos, inserted] = index_of.emplace(live, next.size());
          if (inserted) {
            next.push_back(SearchNode{std::move(live), cost, from, std::move(choice)});
          } else if (cost < next[pos->second].cost) {
            next[pos->second].cost = cost;
            next[pos->second].parent = from;
            next[pos->second].choice = std::move(choice);
          }
        }
      }
      if (next.size() > options_.max_states) {
        std::stable_sort(next.begin(), next.end(),
                         [](const SearchNode& a, const SearchNode& b) { return a.cost < b.cost; });
        stats.pruned += next.size() - options_.max_states;
        next.resize(options_.max_states);
      }
      stats.states += next.size();
      if (next.empty())
        throw std::runtime_error(
            fmt::format("no sharding of operator '{}' is allowed by the planner's rules", op.name));
    }
    // Every program is complete once every operator has run (a loss ends partial or replicated, and
    // both are its reference value up to the scalar all-reduce); the cheapest wins.
    const auto& final_layer = layers.back();
    std::size_t best = 0;
    for (std::size_t i = 1; i < final_layer.size(); ++i)
      if (final_layer[i].cost < final_layer[best].cost) best = i;
    SpmdProgram program;
    program.mesh = mesh_;
    program.segment = segment_;
    program.axes.assign(1, std::vector<ShardedOp>(graph_.size()));
    for (std::size_t layer = graph_.size(), at = best; layer > 0; --layer) {
      program.axes[0][layer - 1] = layers[layer][at].choice;
      at = layers[layer][at].parent;
    }
    return program;
  }

 private:
  int segment_of(OpId id) const { return segment_.empty() ? 0 : segment_[id]; }

  const OpGraph& graph_;
  const std::vector<int>& segment_;
  const ShardRatios& ratios_;
  const SpmdCluster& cluster_;
  const ProgramSearchOptions& options_;
  Mesh mesh_;
  CollectiveLines lines_;
  std::vector<OpId> last_use_;
};

}  // namespace

SpmdProgram search_program(const OpGraph& graph, const std::vector<int>& segment, const ShardRatios& ratios,
                           const SpmdCluster& cluster, const ProgramSearchOptions& options,
                           SearchStatistics* statistics) {
  SearchStatistics stats;
  SpmdProgram program = ProgramSearch(graph, segment, ratios, cluster, options).run(stats);
  if (statistics) *statistics = stats;
  return program;
}

}  // namespace dnnsim
