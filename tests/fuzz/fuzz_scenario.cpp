// Scenario YAML through the whole reader: parse, validate and build (units, names, links, routes,
// network conditions, every workload kind's keys).
//
// The input is read as a file of scenarios/papers/cluster/ (load_scenario_text: its folder is where
// relative paths start, and nothing is written into the tree), so that the shipped scenarios' paths
// resolve as they do there: ../../../data/calibration/… (every LLM and Megatron scenario's table),
// the traces, throughput tables and policies/…. Read from /tmp, as until 2026-12-01, every one of them
// was "cannot open file", and what reads the tables a scenario names was never fuzzed through one.
#include "dnnsim/source_paths.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(dnnsim::fuzz::as_text(data, size));
  return dnnsim::fuzz::expect_read_or_refused(
      [&] { (void)dnnsim::load_scenario_text(text, DNNSIM_SOURCE_DIR "/scenarios/papers/cluster/fuzz-input.yaml"); });
}
