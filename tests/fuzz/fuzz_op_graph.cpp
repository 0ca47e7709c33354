// SPMD operator-graph files (models/spmd/op_graph.hpp): names, shapes, topological order, cycles.
#include "models/spmd/op_graph.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return dnnsim::fuzz::expect_read_or_refused(
      [&] { (void)dnnsim::parse_op_graph(std::string(dnnsim::fuzz::as_text(data, size)), "fuzz.yaml"); });
}
