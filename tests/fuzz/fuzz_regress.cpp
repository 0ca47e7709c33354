// `dnnsim regress` inputs: scenario expectations and comparison files (sim/regress/regress_spec.hpp).
#include "sim/regress/regress_spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dnnsim::fuzz::write_input(dnnsim::fuzz::as_text(data, size), "regress.yaml");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::load_regress_plan({path}); });
}
