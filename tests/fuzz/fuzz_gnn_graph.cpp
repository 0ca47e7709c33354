// GNN graph files (models/gnn/graph.hpp): the same bytes as an edge list (with and without a node
// count), as a METIS graph and as dnnsim's binary CSR.
#include "models/gnn/graph.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = dnnsim::fuzz::as_text(data, size);
  const std::string edges = dnnsim::fuzz::write_input(text, "graph.edges");
  const std::string metis = dnnsim::fuzz::write_input(text, "graph.metis");
  const std::string csr = dnnsim::fuzz::write_input(text, "graph.csr");
  dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::gnn::load_graph_file(csr); });
  dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::gnn::load_graph_file(edges); });
  dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::gnn::load_graph_file(edges, 64); });
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::gnn::load_graph_file(metis); });
}
