// Scenario YAML through the whole reader: parse, validate and build (units, names, links, routes,
// network conditions, every workload kind's keys).
#include "sim/scenario/scenario.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dnnsim::fuzz::write_input(dnnsim::fuzz::as_text(data, size), "scenario.yaml");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::load_scenario(path); });
}
