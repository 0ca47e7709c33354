// Sweep specs: axes, expansion and the points' check against their base scenario.
#include "sim/sweep/sweep_spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dnnsim::fuzz::write_input(dnnsim::fuzz::as_text(data, size), "sweep.yaml");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::load_sweep(path); });
}
