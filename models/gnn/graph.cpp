#include "models/gnn/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/plod_generator.hpp>
#include <boost/graph/rmat_graph_generator.hpp>
#include <boost/random/linear_congruential.hpp>
#include <fstream>
#include <limits>
#include <sstream>

#include "models/common/diagnostics.hpp"
#include "models/common/parse_number.hpp"

namespace dnnsim::gnn {

CsrGraph build_csr(NodeId num_nodes, std::vector<std::pair<NodeId, NodeId>> edges) {
  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(num_nodes) + 1, 0);
  for (const auto& [u, v] : edges) {
    if (u == v) continue;
    ++offsets[u + 1];
    ++offsets[v + 1];
  }
  for (std::size_t i = 1; i < offsets.size(); ++i) offsets[i] += offsets[i - 1];
  std::vector<NodeId> neighbours(offsets.back());
  {
    std::vector<std::uint64_t> cursor(offsets.begin(), offsets.end() - 1);
    for (const auto& [u, v] : edges) {
      if (u == v) continue;
      neighbours[cursor[u]++] = v;
      neighbours[cursor[v]++] = u;
    }
  }
  edges = {};
  // Sort each list and drop duplicates, compacting in place (write position ≤ read position).
  std::uint64_t write = 0;
  for (NodeId node = 0; node < num_nodes; ++node) {
    const auto begin = neighbours.begin() + static_cast<std::ptrdiff_t>(offsets[node]);
    const auto end = neighbours.begin() + static_cast<std::ptrdiff_t>(offsets[node + 1]);
    std::sort(begin, end);
    const auto last = std::unique(begin, end);
    offsets[node] = write;
    write = static_cast<std::uint64_t>(std::copy(begin, last, neighbours.begin() + static_cast<std::ptrdiff_t>(write)) -
                                       neighbours.begin());
  }
  offsets[num_nodes] = write;
  neighbours.resize(write);
  neighbours.shrink_to_fit();
  return CsrGraph(std::move(offsets), std::move(neighbours));
}

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot open graph file");
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

// A cursor over one line of text that knows its 1-based line and column.
struct LineCursor {
  std::string_view line;
  std::size_t pos = 0;

  void skip_blanks() {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r')) ++pos;
  }
  [[nodiscard]] bool at_end() {
    skip_blanks();
    return pos >= line.size();
  }
  [[nodiscard]] int column() const { return static_cast<int>(pos) + 1; }
  // The next whitespace-separated token, or empty at the end of the line.
  std::string_view token() {
    skip_blanks();
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t' && line[pos] != '\r') ++pos;
    return line.substr(start, pos - start);
  }
};

// Parses a non-negative integer token; nullopt when it is not one.
std::optional<std::uint64_t> parse_unsigned(std::string_view token) { return parse_number<std::uint64_t>(token); }

// Calls `visit(line_number, line)` for each line of `text`.
template <class Visit>
void for_each_line(std::string_view text, Visit&& visit) {
  int line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    visit(++line_number, text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

CsrGraph load_edge_list(const std::string& path, std::optional<NodeId> num_nodes) {
  const std::string text = read_whole_file(path);
  DiagnosticSink sink;
  std::vector<std::pair<NodeId, NodeId>> edges;
  std::uint64_t largest = 0;
  SourceLocation largest_where;
  constexpr std::uint64_t max_id = std::numeric_limits<NodeId>::max() - 1;
  for_each_line(text, [&](int line_number, std::string_view line) {
    LineCursor cursor{line};
    if (cursor.at_end() || line[cursor.pos] == '#') return;
    NodeId ends[2] = {0, 0};
    bool ok = true;
    for (NodeId& end : ends) {
      const int column = (cursor.skip_blanks(), cursor.column());
      const std::string_view token = cursor.token();
      if (token.empty()) {
        sink.error({path, line_number, column}, "expected two node ids 'u v'");
        ok = false;
        break;
      }
      const auto value = parse_unsigned(token);
      if (!value) {
        sink.error({path, line_number, column}, fmt::format("'{}' is not a node id (a non-negative integer)", token));
        ok = false;
        continue;
      }
      if (num_nodes && *value >= *num_nodes) {
        sink.error({path, line_number, column},
                   fmt::format("node id {} out of range: the graph has {} nodes (ids 0..{})", *value, *num_nodes,
                               *num_nodes - 1));
        ok = false;
        continue;
      }
      if (*value > max_id) {
        sink.error({path, line_number, column}, fmt::format("node id {} exceeds the 32-bit id range", *value));
        ok = false;
        continue;
      }
      end = static_cast<NodeId>(*value);
      if (*value >= largest) largest_where = {path, line_number, column};
      largest = std::max<std::uint64_t>(largest, *value);
    }
    if (ok) edges.emplace_back(ends[0], ends[1]);
  });
  // Without a node count the largest id sets it, and the CSR holds an offset per node. Edge-list
  // datasets number their nodes densely (SNAP's sparse ids stay within a few times the node count,
  // and at most 2E nodes have an edge): a few edges naming a huge id is a damaged file, which would
  // otherwise allocate gigabytes for nodes that cannot exist in it.
  constexpr std::uint64_t kAlwaysDense = std::uint64_t{1} << 20;
  constexpr std::uint64_t kSparsity = 16;
  if (!num_nodes && sink.empty() && largest + 1 > kAlwaysDense && largest + 1 > kSparsity * 2 * edges.size())
    sink.error(largest_where, fmt::format("node id {} implies {} nodes, but the file's {} edges touch at most {}: "
                                          "renumber the nodes densely or give the node count",
                                          largest, largest + 1, edges.size(), 2 * edges.size()));
  sink.throw_if_any();
  const NodeId nodes = num_nodes ? *num_nodes : (edges.empty() ? 0 : static_cast<NodeId>(largest + 1));
  return build_csr(nodes, std::move(edges));
}

CsrGraph load_metis_graph(const std::string& path) {
  const std::string text = read_whole_file(path);
  DiagnosticSink sink;
  std::optional<std::uint64_t> n, m;
  bool edge_weights = false;
  std::uint64_t vertex_fields = 0;  // vertex size + ncon weights before the neighbours
  int header_line = 0;
  NodeId node = 0;  // the node whose line comes next (0-based)
  std::vector<std::pair<NodeId, NodeId>> edges;
  std::uint64_t listed = 0;  // neighbour entries: 2m when consistent

  for_each_line(text, [&](int line_number, std::string_view line) {
    LineCursor cursor{line};
    if (!line.empty() && line[0] == '%') return;
    if (!n) {
      if (cursor.at_end()) return;
      header_line = line_number;
      std::uint64_t fields[4] = {0, 0, 0, 1};
      int count = 0;
      while (!cursor.at_end() && count < 4) {
        const int column = cursor.column();
        const std::string_view token = cursor.token();
        const auto value = parse_unsigned(token);
        if (!value) {
          sink.error({path, line_number, column}, fmt::format("'{}' is not a non-negative integer", token));
          n = 0;
          return;
        }
        fields[count++] = *value;
      }
      if (count < 2) {
        sink.error({path, line_number, 1}, "METIS header needs 'n m [fmt [ncon]]'");
        n = 0;
        return;
      }
      if (fields[0] > std::numeric_limits<NodeId>::max() - 1) {
        sink.error({path, line_number, 1}, "node count exceeds the 32-bit id range");
        n = 0;
        return;
      }
      n = fields[0];
      m = fields[1];
      const std::uint64_t format = fields[2];
      if (count >= 3 && (format % 10 > 1 || format / 10 % 10 > 1 || format / 100 % 10 > 1 || format > 111)) {
        // The lines' layout depends on fmt: with a bad one they cannot be read.
        sink.error({path, line_number, 1},
                   fmt::format("fmt '{}' must be three 0/1 digits (vsize, vwgt, ewgt)", format));
        n = 0;
        return;
      }
      edge_weights = format % 10 == 1;
      vertex_fields = format / 100 % 10 + (format / 10 % 10 == 1 ? fields[3] : 0);
      return;
    }
    if (node >= *n) {
      if (!cursor.at_end())
        sink.error({path, line_number, cursor.column()}, fmt::format("more node lines than the {} in the header", *n));
      return;
    }
    for (std::uint64_t i = 0; i < vertex_fields; ++i) {
      cursor.skip_blanks();
      // One error for a short line, not one per missing field: ncon can be as large as the header says.
      if (cursor.at_end()) {
        sink.error({path, line_number, cursor.column()},
                   fmt::format("the line ends after {} of its {} vertex size and weight fields", i, vertex_fields));
        break;
      }
      const int column = cursor.column();
      if (!parse_unsigned(cursor.token())) sink.error({path, line_number, column}, "expected a vertex size or weight");
    }
    while (!cursor.at_end()) {
      const int column = cursor.column();
      const std::string_view token = cursor.token();
      const auto value = parse_unsigned(token);
      if (!value) {
        sink.error({path, line_number, column}, fmt::format("'{}' is not a node id (1..{})", token, *n));
      } else if (*value < 1 || *value > *n) {
        sink.error({path, line_number, column}, fmt::format("node id {} out of range 1..{}", *value, *n));
      } else {
        ++listed;
        const auto other = static_cast<NodeId>(*value - 1);
        if (node < other) edges.emplace_back(node, other);  // each undirected edge is listed at both ends
      }
      if (edge_weights) {
        const int weight_column = (cursor.skip_blanks(), cursor.column());
        if (!parse_unsigned(cursor.token())) sink.error({path, line_number, weight_column}, "expected an edge weight");
      }
    }
    ++node;
  });
  if (!n) {
    sink.error({path, 1, 1}, "empty METIS file: expected a header 'n m [fmt [ncon]]'");
  } else if (sink.empty()) {
    if (node < *n)
      sink.error({path, header_line, 1},
                 fmt::format("header declares {} nodes but the file has {} node lines", *n, node));
    else if (listed != 2 * *m)
      sink.error({path, header_line, 1},
                 fmt::format("header declares {} edges but the lines list {} neighbour entries (expected {})", *m,
                             listed, 2 * *m));
  }
  sink.throw_if_any();
  return build_csr(static_cast<NodeId>(*n), std::move(edges));
}

namespace {
// Boost's generators take the graph type only for its size types.
using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
}  // namespace

CsrGraph generate_rmat(const RmatParams& params) {
  boost::minstd_rand generator(static_cast<std::uint32_t>(params.seed));
  using Iterator = boost::rmat_iterator<boost::minstd_rand, BoostGraph>;
  const double d = 1.0 - params.a - params.b - params.c;
  std::vector<std::pair<NodeId, NodeId>> edges;
  edges.reserve(params.edges);
  for (Iterator it(generator, params.nodes, params.edges, params.a, params.b, params.c, d), end; it != end; ++it)
    edges.emplace_back(static_cast<NodeId>(it->first), static_cast<NodeId>(it->second));
  return build_csr(params.nodes, std::move(edges));
}

CsrGraph generate_power_law(const PowerLawParams& params) {
  boost::minstd_rand generator(static_cast<std::uint32_t>(params.seed));
  using Iterator = boost::plod_iterator<boost::minstd_rand, BoostGraph>;
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (Iterator it(generator, params.nodes, params.alpha, params.beta), end; it != end; ++it)
    edges.emplace_back(static_cast<NodeId>(it->first), static_cast<NodeId>(it->second));
  return build_csr(params.nodes, std::move(edges));
}

namespace {

constexpr char kCsrMagic[8] = {'D', 'N', 'N', 'S', 'C', 'S', 'R', '1'};
constexpr std::uint64_t kCsrHeader = 24;
constexpr std::size_t kShownProblems = 20;

// Problems of a binary file, each at its byte offset, reported by offset; past kShownProblems found
// only counted.
class BinaryProblems {
 public:
  explicit BinaryProblems(std::string path) : path_(std::move(path)) {}
  void add(std::uint64_t offset, std::string message) {
    if (count_++ < kShownProblems) found_.emplace_back(offset, std::move(message));
  }
  void throw_if_any() {
    if (count_ == 0) return;
    std::stable_sort(found_.begin(), found_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Diagnostic> diagnostics;
    for (auto& [offset, message] : found_)
      diagnostics.push_back(
          Diagnostic{SourceLocation{fmt::format("{}: byte {}", path_, offset), 0, 0}, std::move(message)});
    if (count_ > kShownProblems)
      diagnostics.push_back(Diagnostic{SourceLocation{path_, 0, 0},
                                       fmt::format("… and {} more problems in this file", count_ - kShownProblems)});
    throw InputError(std::move(diagnostics));
  }

 private:
  std::string path_;
  std::vector<std::pair<std::uint64_t, std::string>> found_;
  std::uint64_t count_ = 0;
};

}  // namespace

void save_csr(const CsrGraph& graph, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t nodes = graph.num_nodes(), entries = graph.directed_edges();
  out.write(kCsrMagic, sizeof kCsrMagic);
  out.write(reinterpret_cast<const char*>(&nodes), sizeof nodes);
  out.write(reinterpret_cast<const char*>(&entries), sizeof entries);
  out.write(reinterpret_cast<const char*>(graph.offsets().data()),
            static_cast<std::streamsize>(graph.offsets().size() * sizeof(std::uint64_t)));
  out.write(reinterpret_cast<const char*>(graph.neighbour_array().data()),
            static_cast<std::streamsize>(graph.neighbour_array().size() * sizeof(NodeId)));
  if (!out) throw InputError(SourceLocation{path, 0, 0}, "cannot write the file");
}

CsrGraph load_csr(const std::string& path) {
  static_assert(std::endian::native == std::endian::little, "the .csr format is little-endian");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot open the file");
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  BinaryProblems problems(path);
  char magic[8] = {};
  std::uint64_t nodes = 0, entries = 0;
  if (size < kCsrHeader) {
    problems.add(0, fmt::format("{} bytes: shorter than the 24-byte header of a .csr file", size));
    problems.throw_if_any();
  }
  in.read(magic, sizeof magic);
  in.read(reinterpret_cast<char*>(&nodes), sizeof nodes);
  in.read(reinterpret_cast<char*>(&entries), sizeof entries);
  if (!std::equal(magic, magic + 8, kCsrMagic)) problems.add(0, "not a dnnsim .csr file (magic \"DNNSCSR1\" expected)");
  if (nodes > std::numeric_limits<NodeId>::max()) problems.add(8, fmt::format("{} nodes: node ids are 32-bit", nodes));
  // Sizes in doubles first: a corrupt header must not overflow the expected size into a match.
  const double expected =
      static_cast<double>(kCsrHeader) + 8.0 * (static_cast<double>(nodes) + 1) + 4.0 * static_cast<double>(entries);
  if (expected != static_cast<double>(size))
    problems.add(
        8, fmt::format("the header says {} nodes and {} neighbour entries, {:.0f} bytes in all, but the file has {}",
                       nodes, entries, expected, size));
  problems.throw_if_any();

  std::vector<std::uint64_t> offsets(nodes + 1);
  std::vector<NodeId> neighbours(entries);
  in.read(reinterpret_cast<char*>(offsets.data()),
          static_cast<std::streamsize>(offsets.size() * sizeof(std::uint64_t)));
  in.read(reinterpret_cast<char*>(neighbours.data()), static_cast<std::streamsize>(neighbours.size() * sizeof(NodeId)));
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot read the file");
  const std::uint64_t neighbours_at = kCsrHeader + 8 * (nodes + 1);
  if (offsets.front() != 0) problems.add(kCsrHeader, fmt::format("offsets must start at 0, not {}", offsets.front()));
  if (offsets.back() != entries)
    problems.add(kCsrHeader + 8 * nodes,
                 fmt::format("the last offset is {}, not the {} neighbour entries", offsets.back(), entries));
  for (std::uint64_t v = 0; v < nodes; ++v)
    if (offsets[v + 1] < offsets[v])
      problems.add(kCsrHeader + 8 * (v + 1), fmt::format("offset of node {} decreases", v + 1));
  problems.throw_if_any();  // the lists below are only meaningful with sound offsets
  for (std::uint64_t v = 0; v < nodes; ++v)
    for (std::uint64_t i = offsets[v]; i < offsets[v + 1]; ++i) {
      const NodeId u = neighbours[i];
      const std::uint64_t at = neighbours_at + 4 * i;
      if (u >= nodes)
        problems.add(at, fmt::format("neighbour {} of node {} is out of range: the graph has {} nodes", u, v, nodes));
      else if (u == v)
        problems.add(at, fmt::format("node {} lists itself (self-loops are not kept)", v));
      else if (i > offsets[v] && u <= neighbours[i - 1])
        problems.add(at, fmt::format("neighbours of node {} are not sorted or repeat {}", v, u));
    }
  problems.throw_if_any();
  // Symmetry in one pass: visiting the nodes v in increasing order, every u > v that v lists must
  // list v next among its own neighbours below u, which arrive sorted — a cursor per node instead
  // of a search per edge. At the end each cursor must have passed all of its node's smaller
  // neighbours (one listed at u but not back at v was skipped).
  std::vector<std::uint64_t> cursor(offsets.begin(), offsets.end() - 1);
  for (std::uint64_t v = 0; v < nodes; ++v)
    for (std::uint64_t i = offsets[v]; i < offsets[v + 1]; ++i) {
      const NodeId u = neighbours[i];
      if (u < v) continue;
      while (cursor[u] < offsets[u + 1] && neighbours[cursor[u]] < v) {
        problems.add(neighbours_at + 4 * cursor[u],
                     fmt::format("edge {}–{} is listed at node {} but not at node {}: the CSR must be symmetric", u,
                                 neighbours[cursor[u]], u, neighbours[cursor[u]]));
        ++cursor[u];
      }
      if (cursor[u] < offsets[u + 1] && neighbours[cursor[u]] == v)
        ++cursor[u];
      else
        problems.add(
            neighbours_at + 4 * i,
            fmt::format("edge {}–{} is listed at node {} but not at node {}: the CSR must be symmetric", v, u, v, u));
    }
  for (std::uint64_t u = 0; u < nodes; ++u)
    for (; cursor[u] < offsets[u + 1] && neighbours[cursor[u]] < u; ++cursor[u])
      problems.add(neighbours_at + 4 * cursor[u],
                   fmt::format("edge {}–{} is listed at node {} but not at node {}: the CSR must be symmetric", u,
                               neighbours[cursor[u]], u, neighbours[cursor[u]]));
  problems.throw_if_any();
  return CsrGraph(std::move(offsets), std::move(neighbours));
}

CsrGraph load_graph_file(const std::string& path, std::optional<NodeId> num_nodes) {
  const auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".edges") || ends_with(".txt") || ends_with(".el")) return load_edge_list(path, num_nodes);
  if (ends_with(".graph") || ends_with(".metis")) {
    CsrGraph graph = load_metis_graph(path);
    if (num_nodes && graph.num_nodes() != *num_nodes)
      throw InputError(SourceLocation{path, 0, 0},
                       fmt::format("METIS graph has {} nodes, the scenario says {}", graph.num_nodes(), *num_nodes));
    return graph;
  }
  if (ends_with(".csr")) {
    CsrGraph graph = load_csr(path);
    if (num_nodes && graph.num_nodes() != *num_nodes)
      throw InputError(SourceLocation{path, 0, 0},
                       fmt::format("the .csr graph has {} nodes, the scenario says {}", graph.num_nodes(), *num_nodes));
    return graph;
  }
  throw InputError(SourceLocation{path, 0, 0},
                   "unknown graph file extension; expected .edges, .txt, .el (edge list), .graph, .metis (METIS) or "
                   ".csr (dnnsim binary CSR)");
}

}  // namespace dnnsim::gnn
