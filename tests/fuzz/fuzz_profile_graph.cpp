// PipeDream/DAPPLE profile graphs (models/dnn/profile_graph.hpp): nodes, edges, cycles, batch sizes.
#include "models/dnn/profile_graph.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return dnnsim::fuzz::expect_read_or_refused(
      [&] { (void)dnnsim::parse_profile_graph(dnnsim::fuzz::as_text(data, size), "fuzz.txt"); });
}
