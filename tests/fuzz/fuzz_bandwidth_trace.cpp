// Bandwidth-trace CSV (traces/network/bandwidth_schedule.hpp), with and without a period and a nominal.
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/network/bandwidth_schedule.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = dnnsim::fuzz::as_text(data, size);
  dnnsim::fuzz::expect_read_or_refused(
      [&] { (void)dnnsim::parse_bandwidth_trace(text, "fuzz.csv", std::nullopt, std::nullopt); });
  return dnnsim::fuzz::expect_read_or_refused(
      [&] { (void)dnnsim::parse_bandwidth_trace(text, "fuzz.csv", dnnsim::BytesPerSecond(1e9), dnnsim::Seconds(10)); });
}
