#include "models/dnn/profile_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/parse_number.hpp"

namespace dnnsim {
namespace {

constexpr std::string_view kSeparator = " -- ";
// The first four are required; saved_bytes (dnnsim's extension, docs/models.md) is optional.
constexpr std::array<std::string_view, 5> kKeys{"forward_compute_time", "backward_compute_time", "activation_size",
                                                "parameter_size", "saved_bytes"};
constexpr std::size_t kRequiredKeys = 4;
constexpr std::size_t kSavedBytes = 4;

struct Node {
  std::string id;
  std::string description;
  std::array<double, kKeys.size()> values{};  // in kKeys order
  int line = 0, column = 0;
  bool has_saved_bytes = false;
};

struct Edge {
  std::string from, to;
  int line = 0, from_column = 0, to_column = 0;  // 1-based
};

// Offsets of `part` inside `line` (part is a view into line), 1-based.
int column_of(std::string_view line, std::string_view part) { return static_cast<int>(part.data() - line.data()) + 1; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::optional<double> non_negative_number(std::string_view text) {
  const auto value = parse_number<double>(text);
  if (!value || *value < 0) return std::nullopt;
  return value;
}

bool valid_id(std::string_view id) {
  return !id.empty() &&
         std::none_of(id.begin(), id.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

LayerKind kind_from_description(std::string_view description) {
  std::string lower(description);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::vector<std::pair<std::string_view, LayerKind>> prefixes{{"conv", LayerKind::convolution},
                                                                            {"linear", LayerKind::matmul},
                                                                            {"fc", LayerKind::matmul},
                                                                            {"relu", LayerKind::elementwise},
                                                                            {"dropout", LayerKind::elementwise},
                                                                            {"add", LayerKind::elementwise},
                                                                            {"concat", LayerKind::elementwise},
                                                                            {"batchnorm", LayerKind::normalization},
                                                                            {"layernorm", LayerKind::normalization},
                                                                            {"maxpool", LayerKind::pooling},
                                                                            {"avgpool", LayerKind::pooling},
                                                                            {"adaptiveavgpool", LayerKind::pooling},
                                                                            {"embed", LayerKind::embedding}};
  for (const auto& [prefix, kind] : prefixes)
    if (lower.starts_with(prefix)) return kind;
  return LayerKind::other;
}

std::string collapse_spaces(std::string_view text) {
  std::string result;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (result.empty() || result.back() == ' ')) continue;
    result += space ? ' ' : c;
  }
  return result;
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void read(std::string_view text) {
    int number = 0;
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      std::string_view line = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
      ++number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!trim(line).empty()) read_line(line, number);
    }
  }

  // Resolves the edges and sorts topologically; reports every problem.
  LayerModel build(const std::string& measured_on, int measured_batch, bool* is_chain) {
    if (nodes_.empty() && sink_.empty()) error(0, 0, "no node line: expected 'ID -- DESCRIPTION -- key=value, …'");
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const auto [it, inserted] = index.emplace(nodes_[i].id, i);
      if (!inserted)
        error(nodes_[i].line, nodes_[i].column,
              fmt::format("duplicate node '{}' (first defined on line {})", nodes_[i].id, nodes_[it->second].line));
    }
    std::set<std::pair<std::size_t, std::size_t>> edges;  // duplicates merged
    std::map<std::pair<std::size_t, std::size_t>, const Edge*> edge_at;
    for (const Edge& edge : edges_) {
      const auto from = index.find(edge.from);
      const auto to = index.find(edge.to);
      if (from == index.end() && !unread_ids_.contains(edge.from))
        error(edge.line, edge.from_column, fmt::format("edge from unknown node '{}'", edge.from));
      if (to == index.end() && !unread_ids_.contains(edge.to))
        error(edge.line, edge.to_column, fmt::format("edge to unknown node '{}'", edge.to));
      if (from == index.end() || to == index.end()) continue;
      edges.emplace(from->second, to->second);
      edge_at.emplace(std::pair(from->second, to->second), &edge);
    }
    const std::vector<std::size_t> order = topological_order(edges, edge_at);
    if (measured_batch == 0) measured_batch = batch_from_file_name();
    if (measured_batch < 0) error(0, 0, fmt::format("measured batch {} must be >= 1", measured_batch));
    sink_.throw_if_any();

    std::vector<std::size_t> position(nodes_.size());
    for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = p;

    // A cut after position b carries every output produced at or before b and consumed after it:
    // Σ over nodes u with position(u) ≤ b < position(last consumer of u). In a chain that is layer
    // b's own output, so cut_bytes is only set on branching graphs.
    std::vector<std::size_t> last_consumer(nodes_.size());
    for (std::size_t i = 0; i < nodes_.size(); ++i) last_consumer[i] = position[i];
    for (const auto& [from, to] : edges) last_consumer[from] = std::max(last_consumer[from], position[to]);
    const bool chain = edges.size() + 1 == nodes_.size() && std::all_of(edges.begin(), edges.end(), [&](const auto& e) {
                         return position[e.second] == position[e.first] + 1;
                       });
    std::vector<double> crossing(order.size() + 1, 0.0);  // difference array over boundaries
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (last_consumer[i] > position[i]) {
        crossing[position[i]] += nodes_[i].values[2];
        crossing[last_consumer[i]] -= nodes_[i].values[2];
      }
    for (std::size_t b = 1; b < crossing.size(); ++b) crossing[b] += crossing[b - 1];

    LayerModel model;
    model.name = std::filesystem::path(file_).stem().string();
    model.measured_on = measured_on;
    model.measured_batch = measured_batch;
    for (const std::size_t i : order) {
      const Node& node = nodes_[i];
      Layer layer;
      layer.name = collapse_spaces(node.description);
      layer.kind = kind_from_description(node.description);
      layer.forward_time = Seconds(node.values[0] * 1e-3);
      layer.backward_time = Seconds(node.values[1] * 1e-3);
      layer.activation_bytes = Bytes(node.values[2] / measured_batch);
      layer.activation_source = ActivationSource::profile_output;
      layer.parameter_bytes = Bytes(node.values[3]);
      if (!chain) layer.cut_bytes = Bytes(crossing[position[i]] / measured_batch);
      if (node.has_saved_bytes)
        layer.keep_activations(Bytes(node.values[kSavedBytes] / measured_batch), ActivationSource::saved_bytes);
      model.layers.push_back(std::move(layer));
    }
    if (is_chain != nullptr) *is_chain = chain;
    return model;
  }

 private:
  void error(int line, int column, std::string message) {
    sink_.error(SourceLocation{file_, line, column}, std::move(message));
  }

  void read_line(std::string_view line, int number) {
    const std::size_t first = line.find(kSeparator);
    const std::size_t last = line.rfind(kSeparator);
    const std::string_view head = trim(line.substr(0, first == std::string_view::npos ? line.size() : first));
    if (first == std::string_view::npos || !valid_id(head)) {
      error(number, column_of(line, head.empty() ? trim(line) : head),
            "expected 'ID -- DESCRIPTION -- key=value, …' (a node) or 'ID -- ID' (an edge)");
      return;
    }
    if (first == last) {
      const std::string_view to = trim(line.substr(first + kSeparator.size()));
      if (!valid_id(to)) {
        error(number, column_of(line, line.substr(first + kSeparator.size())),
              "expected a node id after ' -- ' (edges are 'ID -- ID')");
        unread_ids_.emplace(head);
        return;
      }
      edges_.push_back(Edge{std::string(head), std::string(to), number, column_of(line, head), column_of(line, to)});
      return;
    }
    Node node{std::string(head),
              std::string(trim(line.substr(first + kSeparator.size(), last - first - kSeparator.size()))),
              {},
              number,
              column_of(line, head)};
    std::array<bool, kKeys.size()> seen{};
    std::string_view rest = line.substr(last + kSeparator.size());
    while (true) {
      const std::size_t comma = rest.find(',');
      read_value(line, number, trim(rest.substr(0, comma)), node, seen);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    node.has_saved_bytes = seen[kSavedBytes];
    for (std::size_t k = 0; k < kRequiredKeys; ++k)
      if (!seen[k])
        error(number, column_of(line, line.substr(last + kSeparator.size())),
              fmt::format("missing key '{}'", kKeys[k]));
    nodes_.push_back(std::move(node));
  }

  void read_value(std::string_view line, int number, std::string_view item, Node& node,
                  std::array<bool, kKeys.size()>& seen) {
    const std::size_t equals = item.find('=');
    const std::string_view key = trim(item.substr(0, equals));
    const auto known = std::find(kKeys.begin(), kKeys.end(), key);
    if (equals == std::string_view::npos || known == kKeys.end()) {
      error(
          number, column_of(line, item.empty() ? line.substr(line.size()) : item),
          equals == std::string_view::npos
              ? fmt::format("expected key=value, got '{}'", item)
              : fmt::format("unknown key '{}'{}", key,
                            suggestion_suffix(std::string(key), std::vector<std::string>(kKeys.begin(), kKeys.end()))));
      return;
    }
    const auto k = static_cast<std::size_t>(known - kKeys.begin());
    if (seen[k]) error(number, column_of(line, key), fmt::format("duplicate key '{}'", key));
    seen[k] = true;
    std::string_view value = trim(item.substr(equals + 1));
    // A layer with several outputs lists their sizes: [a; b; …], summed.
    const bool list = key == "activation_size" && value.starts_with('[') && value.ends_with(']');
    std::string_view rest = list ? value.substr(1, value.size() - 2) : value;
    double total = 0;
    while (true) {
      const std::size_t semicolon = list ? rest.find(';') : std::string_view::npos;
      const std::string_view part = trim(rest.substr(0, semicolon));
      const std::optional<double> parsed = non_negative_number(part);
      if (!parsed) {
        error(number, column_of(line, part.empty() ? value : part),
              fmt::format("{} must be a non-negative number{}, got '{}'", key,
                          key == "activation_size" ? " or a list [a; b; …]" : "", part));
        return;
      }
      total += *parsed;
      if (semicolon == std::string_view::npos) break;
      rest = rest.substr(semicolon + 1);
    }
    // Beyond 1e18 (an exabyte, or 30 million years in ms) no value is a measurement, and sums of the
    // cut sizes over a graph must stay finite.
    if (total > 1e18) {
      error(number, column_of(line, value), fmt::format("{} must be at most 1e18, got {}", key, total));
      return;
    }
    node.values[k] = total;
  }

  // Kahn's algorithm; among the ready nodes, the one defined first. Reports one cycle if any.
  std::vector<std::size_t> topological_order(
      const std::set<std::pair<std::size_t, std::size_t>>& edges,
      const std::map<std::pair<std::size_t, std::size_t>, const Edge*>& edge_at) {
    const std::size_t n = nodes_.size();
    std::vector<std::vector<std::size_t>> successors(n), predecessors(n);
    std::vector<std::size_t> in_degree(n, 0);
    for (const auto& [from, to] : edges) {
      successors[from].push_back(to);
      predecessors[to].push_back(from);
      ++in_degree[to];
    }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i)
      if (in_degree[i] == 0) ready.insert(i);
    std::vector<std::size_t> order;
    std::vector<bool> placed(n, false);
    while (!ready.empty()) {
      const std::size_t node = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(node);
      placed[node] = true;
      for (const std::size_t next : successors[node])
        if (--in_degree[next] == 0) ready.insert(next);
    }
    if (order.size() == n) return order;
    // Every unplaced node has an unplaced predecessor: walk back from one until a node repeats.
    std::size_t node = static_cast<std::size_t>(std::find(placed.begin(), placed.end(), false) - placed.begin());
    std::vector<std::size_t> path;
    std::vector<bool> on_path(n, false);
    while (!on_path[node]) {
      on_path[node] = true;
      path.push_back(node);
      node = *std::find_if(predecessors[node].begin(), predecessors[node].end(),
                           [&](std::size_t p) { return !placed[p]; });
    }
    std::vector<std::size_t> cycle(std::find(path.begin(), path.end(), node), path.end());
    std::reverse(cycle.begin(), cycle.end());                                               // now in edge direction
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());  // first defined first
    std::string text;
    const Edge* closing = nullptr;
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      const Edge* edge = edge_at.at({cycle[i], cycle[(i + 1) % cycle.size()]});
      if (closing == nullptr || edge->line > closing->line) closing = edge;
      text += nodes_[cycle[i]].id + " -- ";
    }
    error(closing->line, closing->from_column,
          fmt::format("the graph has a cycle: {}{}", text, nodes_[cycle.front()].id));
    return order;
  }

  int batch_from_file_name() {
    const std::string name = std::filesystem::path(file_).filename().string();
    const std::size_t at = name.find("pbs-");
    int batch = 0;
    if (at != std::string::npos) {
      const char* begin = name.data() + at + 4;
      std::from_chars(begin, name.data() + name.size(), batch);
    }
    if (batch < 1) error(0, 0, "no micro-batch size: the file name has no 'pbs-N' and no measured batch was given");
    return batch;
  }

  std::string file_;
  DiagnosticSink sink_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  // Ids at the head of a line with its own error (a node line whose ' -- ' parts were broken reads as
  // a bad edge): the edges naming them are not also "unknown node".
  std::set<std::string, std::less<>> unread_ids_;
};

}  // namespace

LayerModel parse_profile_graph(std::string_view text, const std::string& file_name, const std::string& measured_on,
                               int measured_batch, bool* is_chain) {
  Reader reader(file_name);
  reader.read(text);
  return reader.build(measured_on, measured_batch, is_chain);
}

LayerModel load_profile_graph(const std::string& path, const std::string& measured_on, int measured_batch,
                              bool* is_chain) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot read the profile graph file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile_graph(text.str(), path, measured_on, measured_batch, is_chain);
}

}  // namespace dnnsim
