#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "dnnsim/source_paths.hpp"
#include "models/gnn/graph.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim::gnn {
namespace {

using testing::diagnostics_thrown_by;
using testing::expect_errors;
using testing::write_file;

const std::string kPlanetoid = DNNSIM_SOURCE_DIR "/data/graphs/planetoid/";

// The counts of data/graphs/planetoid/README.md, whose directed counts equal PyG's
// published statistics (edge_index has both directions of each undirected edge).
TEST(GnnGraph, PlanetoidCountsMatchTheirPublishedStatistics) {
  struct Case {
    const char* name;
    NodeId nodes;
    std::uint64_t directed;
  };
  for (const Case& c : {Case{"cora", 2708, 10556}, Case{"citeseer", 3327, 9104}, Case{"pubmed", 19717, 88648}}) {
    const CsrGraph graph = load_edge_list(kPlanetoid + c.name + ".edges", c.nodes);
    EXPECT_EQ(graph.num_nodes(), c.nodes) << c.name;
    EXPECT_EQ(graph.directed_edges(), c.directed) << c.name;
  }
}

// cora.edges lists node 0 in "0 633", "0 1862", "0 2582" and nowhere else (u < v on every line).
TEST(GnnGraph, CoraNeighboursOfNodeZeroAreItsThreeLines) {
  const CsrGraph graph = load_edge_list(kPlanetoid + "cora.edges");
  const auto n = graph.neighbours(0);
  EXPECT_EQ(std::vector<NodeId>(n.begin(), n.end()), (std::vector<NodeId>{633, 1862, 2582}));
  // Symmetric storage: 633 lists 0 too.
  const auto back = graph.neighbours(633);
  EXPECT_TRUE(std::binary_search(back.begin(), back.end(), NodeId{0}));
}

TEST(GnnGraph, BuildDropsSelfLoopsAndDuplicates) {
  const CsrGraph graph = build_csr(4, {{0, 1}, {1, 0}, {2, 2}, {1, 3}, {0, 1}});
  EXPECT_EQ(graph.undirected_edges(), 2u);
  EXPECT_EQ(graph.degree(1), 2u);
  EXPECT_EQ(graph.degree(2), 0u);
}

TEST(GnnGraph, EdgeListErrorsAreLocatedAndAllReported) {
  const std::string path = write_file("bad.edges", "# comment\n0 1\n2 x\n3\n 1 9\n");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)load_edge_list(path, 5); });
  expect_errors(diagnostics,
                {{3, 3, "'x' is not a node id"}, {4, 2, "expected two node ids"}, {5, 4, "node id 9 out of range"}});
}

// A fuzzed slice of Cora (tests/fuzz/crashers/gnn_graph/edge-list-huge-id): 3 edges, one naming
// node 198,634,542, would have allocated a CSR of 198 million nodes. Refused at the id; with the
// node count given it is the out-of-range error instead. Bytes that are no digits (non-UTF-8 too)
// are not ids.
TEST(GnnGraph, EdgeListHugeIdAndBinaryBytesAreRefused) {
  const std::string huge = write_file("huge.edges", "0 633\n2 198634542\n4 1454\n");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)load_edge_list(huge); });
  expect_errors(diagnostics,
                {{2, 3, "node id 198634542 implies 198634543 nodes, but the file's 3 edges touch at most 6"}});
  const auto given = diagnostics_thrown_by([&] { (void)load_edge_list(huge, 2000); });
  expect_errors(given, {{2, 3, "node id 198634542 out of range"}});
  const auto binary =
      diagnostics_thrown_by([&] { (void)load_edge_list(write_file("bin.edges", "0 1\n\xff\xfe 2\n")); });
  expect_errors(binary, {{2, 1, "is not a node id"}});
}

// The METIS manual's Figure 2(a) example graph: 7 nodes, 11 edges.
constexpr const char* kMetisExample =
    "% METIS manual figure\n"
    "7 11\n"
    "5 3 2\n"
    "1 3 4\n"
    "5 4 2 1\n"
    "2 3 6 7\n"
    "1 3 6\n"
    "5 4 7\n"
    "6 4\n";

TEST(GnnGraph, MetisFormatReadsTheManualsExample) {
  const CsrGraph graph = load_metis_graph(write_file("example.graph", kMetisExample));
  EXPECT_EQ(graph.num_nodes(), 7u);
  EXPECT_EQ(graph.undirected_edges(), 11u);
  const auto n = graph.neighbours(3);  // node 4 (1-based): 2 3 6 7
  EXPECT_EQ(std::vector<NodeId>(n.begin(), n.end()), (std::vector<NodeId>{1, 2, 5, 6}));
}

TEST(GnnGraph, MetisWithEdgeWeightsSkipsThem) {
  const CsrGraph graph = load_metis_graph(write_file("w.graph", "3 2 001\n2 5\n1 5 3 7\n2 7\n"));
  EXPECT_EQ(graph.undirected_edges(), 2u);
}

TEST(GnnGraph, MetisErrorsAreLocated) {
  const auto diagnostics =
      diagnostics_thrown_by([&] { (void)load_metis_graph(write_file("bad.graph", "3 2\n2 9\n1 a\n2\n")); });
  expect_errors(diagnostics, {{2, 3, "node id 9 out of range 1..3"}, {3, 3, "'a' is not a node id"}});
  const auto count =
      diagnostics_thrown_by([&] { (void)load_metis_graph(write_file("short.graph", "3 5\n2\n1 3\n2\n")); });
  expect_errors(count, {{1, 1, "header declares 5 edges"}});
}

TEST(GnnGraph, UnknownExtensionAndMissingFileAreErrors) {
  EXPECT_THROW((void)load_graph_file(write_file("g.csv", "0 1\n")), InputError);
  EXPECT_THROW((void)load_graph_file("/nonexistent/g.edges"), InputError);
}

// A header whose ncon is four billion (fmt 010: vertex weights) with short node lines: one error a
// line, found at once, not one per missing field (the fuzzer found the timeout).
TEST(GnnGraph, MetisHugeNconIsOneErrorPerLine) {
  const auto d =
      diagnostics_thrown_by([] { (void)load_metis_graph(write_file("g.metis", "2 1 010 4000000000\n1 2\n1 1\n")); });
  expect_errors(d, {{2, 4, "the line ends after 2 of its 4000000000 vertex size and weight fields"},
                    {3, 4, "the line ends after 2 of its 4000000000 vertex size and weight fields"}});
}

// Cora as shipped survives the binary CSR format unchanged.
TEST(GnnGraph, CsrRoundTripsCora) {
  const CsrGraph cora = load_edge_list(kPlanetoid + "cora.edges");
  const std::string path = write_file("cora.csr", "");
  save_csr(cora, path);
  const CsrGraph back = load_graph_file(path);
  EXPECT_EQ(back.offsets(), cora.offsets());
  EXPECT_EQ(back.neighbour_array(), cora.neighbour_array());
  EXPECT_THROW((void)load_graph_file(path, 100), InputError);  // the scenario's node count disagrees
}

// A .csr file of the path 0–1–2 (n = 3, m = 4: offsets 0 1 3 4, neighbours 1 | 0 2 | 1), then
// corrupted: bytes 24… are the offsets, 56… the neighbours (4 bytes each).
std::string path_csr(const std::function<void(std::vector<std::uint64_t>&, std::vector<NodeId>&)>& corrupt) {
  std::vector<std::uint64_t> header{3, 4}, offsets{0, 1, 3, 4};
  std::vector<NodeId> neighbours{1, 0, 2, 1};
  corrupt(offsets, neighbours);
  std::string bytes = "DNNSCSR1";
  bytes.append(reinterpret_cast<const char*>(header.data()), 16);
  bytes.append(reinterpret_cast<const char*>(offsets.data()), offsets.size() * 8);
  bytes.append(reinterpret_cast<const char*>(neighbours.data()), neighbours.size() * 4);
  return write_file("bad.csr", bytes);
}

TEST(GnnGraph, CsrErrorsAreLocatedByByte) {
  EXPECT_EQ(load_csr(path_csr([](auto&, auto&) {})).undirected_edges(), 2u);
  // Node 2's neighbour (byte 68) replaced by 7: out of range.
  const std::string bad = path_csr([](auto&, auto& n) { n[3] = 7; });
  auto d = diagnostics_thrown_by([&] { (void)load_csr(bad); });
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].location.file, bad + ": byte 68");
  EXPECT_NE(d[0].message.find("out of range"), std::string::npos);
  // Replaced by 0 instead: node 1 lists 2 (byte 64) but node 2 does not list 1, and node 2 lists 0
  // (byte 68) but node 0 does not list 2. Both, in file order.
  d = diagnostics_thrown_by([&] { (void)load_csr(path_csr([](auto&, auto& n) { n[3] = 0; })); });
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(d[0].location.file.find(": byte 64"), std::string::npos);
  EXPECT_NE(d[0].message.find("edge 1–2 is listed at node 1 but not at node 2"), std::string::npos);
  EXPECT_NE(d[1].location.file.find(": byte 68"), std::string::npos);
  EXPECT_NE(d[1].message.find("edge 2–0 is listed at node 2 but not at node 0"), std::string::npos);
  // Unsorted offsets (byte 40: node 2's offset 0 < node 1's 1); a truncated file; a wrong magic.
  d = diagnostics_thrown_by([&] { (void)load_csr(path_csr([](auto& o, auto&) { o[2] = 0; })); });
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].location.file.find(": byte 40"), std::string::npos);
  d = diagnostics_thrown_by([&] { (void)load_csr(write_file("short.csr", "DNNSCSR1")); });
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("shorter than the 24-byte header"), std::string::npos);
  d = diagnostics_thrown_by([&] { (void)load_csr(write_file("edges.csr", std::string(40, 'x'))); });
  ASSERT_GE(d.size(), 1u);
  EXPECT_NE(d[0].message.find("not a dnnsim .csr file"), std::string::npos);
}

// Same seed → same graph; R-MAT with a > d is skewed: its largest degree far exceeds the mean.
TEST(GnnGraph, RmatIsSeededAndSkewed) {
  const CsrGraph a = generate_rmat({.nodes = 1024, .edges = 8192, .seed = 7});
  const CsrGraph b = generate_rmat({.nodes = 1024, .edges = 8192, .seed = 7});
  EXPECT_EQ(a.neighbour_array(), b.neighbour_array());
  std::uint32_t largest = 0;
  for (NodeId v = 0; v < a.num_nodes(); ++v) largest = std::max(largest, a.degree(v));
  const double mean = static_cast<double>(a.directed_edges()) / a.num_nodes();
  EXPECT_GT(largest, 5 * mean);
  EXPECT_LE(a.undirected_edges(), 8192u);
  EXPECT_GT(a.undirected_edges(), 8192u / 2);
}

TEST(GnnGraph, PowerLawIsSeeded) {
  const CsrGraph a = generate_power_law({.nodes = 2000, .alpha = 2.2, .beta = 200, .seed = 3});
  const CsrGraph b = generate_power_law({.nodes = 2000, .alpha = 2.2, .beta = 200, .seed = 3});
  EXPECT_EQ(a.neighbour_array(), b.neighbour_array());
  EXPECT_GT(a.undirected_edges(), 0u);
}

}  // namespace
}  // namespace dnnsim::gnn
