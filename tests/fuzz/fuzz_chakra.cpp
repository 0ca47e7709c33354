// Chakra execution traces (traces/chakra/chakra_trace.hpp), binary protobuf: one file per rank, the
// ranks' files separated by the bytes "DNNSIM-RANK" (one rank when absent; at most 4).
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/chakra/chakra_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::string_view kSeparator = "DNNSIM-RANK";
  constexpr std::size_t kMaxRanks = 4;
  std::string_view text = dnnsim::fuzz::as_text(data, size);
  std::vector<std::string> files, devices;
  for (;;) {
    const std::size_t cut = files.size() + 1 < kMaxRanks ? text.find(kSeparator) : std::string_view::npos;
    const std::string rank = std::to_string(files.size());
    files.push_back(dnnsim::fuzz::write_input(text.substr(0, cut), "trace." + rank + ".et"));
    devices.push_back("gpu" + rank);
    if (cut == std::string_view::npos) break;
    text.remove_prefix(cut + kSeparator.size());
  }
  dnnsim::ChakraImportOptions options;
  options.rank_gpus = std::vector<std::string>(files.size(), "A100-40GB-SXM");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::import_chakra(files, devices, options); });
}
