// Calibration tables (models/calibration/calibration.hpp): efficiency curves by kernel, dtype, size.
#include "models/calibration/calibration.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dnnsim::fuzz::write_input(dnnsim::fuzz::as_text(data, size), "calibration.yaml");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::load_calibration(path); });
}
