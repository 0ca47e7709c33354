// `dnnsim regress` inputs: scenario expectations and comparison files (sim/regress/regress_spec.hpp).
//
// Unlike the scenario target, the input is still a file in /tmp: load_regress_plan reads only paths
// (files and folders; it has no entry point for text with a name), and nothing may be written into the
// source tree. So a comparison file's relative scenario names resolve under /tmp and stop at "cannot
// open the scenario", and an input that is a scenario with `expect:` stops at "cannot open file" on
// its relative data paths: the scenarios a shipped comparison file names are reached only by an
// absolute path.
#include "sim/regress/regress_spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dnnsim::fuzz::write_input(dnnsim::fuzz::as_text(data, size), "regress.yaml");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::load_regress_plan({path}); });
}
