// The parameter-server kind's convergence inputs: a statistical-efficiency file
// (models/sync/statistical_efficiency.hpp) and the digits CSV of its calibration run
// (models/sync/proxy_training.hpp). Each input is read as both.
#include "models/sync/proxy_training.hpp"
#include "models/sync/statistical_efficiency.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = dnnsim::fuzz::as_text(data, size);
  const std::string yaml = dnnsim::fuzz::write_input(text, "efficiency.yaml");
  dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::load_statistical_efficiency(yaml); });
  const std::string csv = dnnsim::fuzz::write_input(text, "digits.csv");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::load_digits(csv); });
}
