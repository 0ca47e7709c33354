// TaskGraph JSON (docs/taskgraph.md), including TaskGraph::validate (cycles, streams, groups).
#include "models/program/task_graph_json.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return dnnsim::fuzz::expect_read_or_refused(
      [&] { (void)dnnsim::parse_task_graph(std::string(dnnsim::fuzz::as_text(data, size)), "fuzz.json"); });
}
