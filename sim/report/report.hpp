// Reports of one run (docs/reports.md lists every field):
//   OUT/summary.json  iteration times, throughput, per-device utilisation, memory and time breakdown,
//                     per-link traffic, simulation statistics, status of the run;
//   OUT/tasks.csv     one row per task with its start and end;
//   OUT/trace.json    Chrome trace / Perfetto: a track per device stream, counters of link use.
// Same scenario and seed → byte-identical files: nothing here depends on wall time or addresses.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

[[nodiscard]] nlohmann::ordered_json make_summary(const Scenario& scenario, const SimulationResult& result);
// summary.json's `iteration_time_s` from each iteration's last task's end: iteration k ends when its last
// task and every earlier iteration's have (iterations that overlap, as pipelined epochs do, can finish
// out of order), and its time runs from the previous iteration's end.
[[nodiscard]] std::vector<double> iteration_times(std::vector<double> last_task_end);
// One task as tasks.csv (and the Python module's task columns) describe it.
struct TaskDescription {
  std::string kind;     // compute, transfer, or the collective's kind
  std::string devices;  // "node0/gpu0", "src>dst", "8 devices"
  double bytes = 0;
  double flops = 0;
};
[[nodiscard]] TaskDescription describe_task(const TaskGraph& graph, TaskId id);

// Pieces of a compact JSON document written as it is formatted, byte for byte what one
// nlohmann::ordered_json::dump() of the whole document gives (trace.json here, the cluster kind's
// jobs_trace.json).
// A string or a floating-point number as dump() writes it (escaped; the shortest text that reads back
// to the same double, "1.0" for a whole one). Integers are plain decimals in both (the stream's
// default "C" locale groups no digits): write them as they are.
struct Json {
  nlohmann::ordered_json value;
};
std::ostream& operator<<(std::ostream& out, const Json& json);
// The elements of a JSON array, one at a time: a comma before each but the first.
class JsonElements {
 public:
  explicit JsonElements(std::ostream& out) : out_(out) {}
  // The stream, ready for the next element.
  std::ostream& next() {
    if (!first_) out_ << ',';
    first_ = false;
    return out_;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

// tasks.csv and trace.json, written to `out` as they are formatted: nothing the size of the text is
// held (the trace keeps its link counters' rate changes, 16 bytes each, to sort them per link).
void write_tasks_csv(std::ostream& out, const SimulationResult& result);
void write_chrome_trace(std::ostream& out, const SimulationResult& result);

// Writes the files the scenario's `outputs` ask for into `dir` (created if needed).
void write_reports(const Scenario& scenario, const SimulationResult& result, const nlohmann::ordered_json& summary,
                   const std::string& dir);

// The short table printed on stdout after a run. Devices with the same GPU and figures share a row
// ("node0–1023/gpu0 × 1024") unless `all_devices`.
[[nodiscard]] std::string format_summary_table(const nlohmann::ordered_json& summary, bool all_devices = false);

// The value at a dotted path of the summary ("mean.iteration_time_s", "devices.node0/gpu1.peak_memory_bytes",
// "iteration_time_s.0": a list index), or nullptr when there is none. Keys never contain dots, so a
// dot always separates two levels. Used by expectations (sim/regress/expectations.hpp) and by `dnnsim sweep`
// for its CSV columns.
[[nodiscard]] const nlohmann::ordered_json* find_summary_value(const nlohmann::ordered_json& summary,
                                                               const std::string& path);
// The same, when the value is a number; empty for a missing path or a non-number (a string, a list…).
[[nodiscard]] std::optional<double> summary_metric(const nlohmann::ordered_json& summary, const std::string& path);

}  // namespace dnnsim
