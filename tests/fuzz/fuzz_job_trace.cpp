// Job-trace readers of the cluster kind (traces/jobs/job_readers.hpp, `dnnsim list job-traces`):
// the first byte picks the format, the rest is the file. PAI's second table (`tasks:`) is the part
// after a line "====" (the job table alone when there is none).
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/jobs/job_readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& entries = dnnsim::builtin_job_trace_readers().entries();
  const std::string& format = entries[data[0] % entries.size()].name;
  const std::string_view text = dnnsim::fuzz::as_text(data + 1, size - 1);
  const std::size_t cut = text.find("\n====\n");
  dnnsim::JobTraceFiles files;
  files.file = dnnsim::fuzz::write_input(text.substr(0, cut), "jobs");
  if (format == "alibaba-pai")
    files.extra["tasks"] =
        dnnsim::fuzz::write_input(cut == std::string_view::npos ? std::string_view() : text.substr(cut + 6), "tasks");
  return dnnsim::fuzz::expect_read_or_refused([&] { (void)dnnsim::read_job_trace(format, files); });
}
