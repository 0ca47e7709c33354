// `--set KEY.PATH=VALUE` overrides (one per input line) applied to the quickstart scenario, then the
// whole scenario read: overrides create sections, index lists and replace subtrees.
#include <sstream>
#include <vector>

#include "dnnsim/source_paths.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> overrides;
  std::istringstream lines{std::string(dnnsim::fuzz::as_text(data, size))};
  for (std::string line; std::getline(lines, line);) overrides.push_back(line);
  return dnnsim::fuzz::expect_read_or_refused(
      [&] { (void)dnnsim::load_scenario(DNNSIM_SOURCE_DIR "/scenarios/quickstart.yaml", overrides); });
}
