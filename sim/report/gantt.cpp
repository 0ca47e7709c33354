#include "sim/report/gantt.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "models/common/units.hpp"
#include "sim/report/gnuplot.hpp"
#include "sim/run/simulation.hpp"

namespace dnnsim {

namespace {

// Okabe–Ito colours (readable with every common colour-vision deficiency).
std::string_view phase_colour(Phase phase) {
  switch (phase) {
    case Phase::forward:
      return "#0072B2";  // blue
    case Phase::backward:
      return "#E69F00";  // orange
    case Phase::weight_grad:
      return "#D55E00";  // vermillion
    case Phase::optimizer:
      return "#009E73";  // green
    case Phase::communication:
      return "#CC79A7";  // purple
    case Phase::other:
      return "#999999";  // grey
    case Phase::recompute:
      return "#56B4E9";  // sky blue: a forward pass again
  }
  return "#000000";
}

constexpr int kMaxRowLabels = 48;                 // more rows than this: label every k-th one
constexpr std::size_t kMaxSeparatedDevices = 64;  // more devices than this: no line between them
constexpr double kMs = 1e3;                       // the time axis is in milliseconds

}  // namespace

std::string make_gantt_script(const SimulationResult& result, const std::string& png_path) {
  const TaskGraph& graph = result.graph;
  const std::size_t streams = std::max<std::size_t>(1, graph.streams().size());
  const auto row_key = [&](DeviceId d, StreamId s) { return static_cast<std::size_t>(d) * streams + s; };

  // The (device, stream) pairs that ran something, in device then stream order.
  std::set<std::size_t> used;
  std::size_t never_ran = 0;
  std::vector<double> iteration_end(std::max<std::uint32_t>(1, graph.iteration_count()), 0.0);
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    if (!happened(result.task_start[id]) || !happened(result.task_end[id])) {
      ++never_ran;
      continue;
    }
    const Task& task = graph.task(id);
    for (const DeviceId d : task.devices()) used.insert(row_key(d, task.stream));
    iteration_end[task.iteration] = std::max(iteration_end[task.iteration], result.task_end[id]);
  }
  std::map<std::size_t, int> row_of;
  for (const std::size_t key : used) row_of.emplace(key, static_cast<int>(row_of.size()));
  const int rows = static_cast<int>(row_of.size());

  // Boxes per phase: "start_ms end_ms row" lines.
  std::vector<std::pair<Phase, std::string>> boxes;
  for (const std::string& name : phase_names()) boxes.emplace_back(*phase_from_name(name), std::string());
  const auto boxes_of = [&](Phase phase) -> std::string& {
    return std::find_if(boxes.begin(), boxes.end(), [&](const auto& b) { return b.first == phase; })->second;
  };
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const double start = result.task_start[id];
    const double end = result.task_end[id];
    if (!happened(start) || !happened(end)) continue;
    const Task& task = graph.task(id);
    std::string& out = boxes_of(task.phase);
    for (const DeviceId d : task.devices())
      out += fmt::format("{:.9g} {:.9g} {}\n", start * kMs, end * kMs, row_of.at(row_key(d, task.stream)));
  }

  std::string title =
      fmt::format("Gantt chart: makespan {}, {}, {} tasks on {} devices", format_seconds(Seconds(result.makespan_s)),
                  counted(iteration_end.size(), "iteration"), graph.tasks().size(), graph.devices().size());
  if (never_ran > 0) title += fmt::format("\n{} never ran (not drawn)", counted(never_ran, "task"));

  const int height = std::clamp(140 + 20 * rows, 320, 2400);
  std::string script;
  script += "# dnnsim Gantt chart of one run: a row per (device, stream), a box per task coloured by phase.\n";
  script += "# Self-contained (the data is inline): `gnuplot THIS_FILE` redraws the figure.\n";
  script += png_terminal(1400, height, png_path);
  script += fmt::format("set title {}\n", gnuplot_string(title));
  script += "set xlabel \"simulated time (ms)\"\n";
  script += fmt::format("set xrange [0:{}]\n", gnuplot_number(std::max(result.makespan_s * kMs, 1e-9)));
  script += fmt::format("set yrange [{}:-0.5]\n", gnuplot_number(std::max(rows, 1) - 0.5));  // first device at the top
  script += "set grid xtics\nset key outside below center horizontal reverse Left samplen 2 width 2\n";
  script += "set style fill solid 1.0 noborder\n";
  std::vector<std::string> ticks;
  const int step = (rows + kMaxRowLabels - 1) / kMaxRowLabels;
  for (const auto& [key, row] : row_of) {
    if (step > 1 && row % step != 0) continue;
    const std::size_t device = key / streams;
    const std::size_t stream = key % streams;
    ticks.push_back(fmt::format("{} {}",
                                gnuplot_string(fmt::format("{} {}", graph.devices()[device],
                                                           graph.streams().empty() ? "" : graph.streams()[stream])),
                                row));
  }
  script += ticks.empty() ? "set ytics ()\n" : fmt::format("set ytics ({}) nomirror\n", fmt::join(ticks, ", "));
  // A thin line between devices, when each has several rows and there are not too many.
  if (row_of.size() > graph.devices().size() && graph.devices().size() <= kMaxSeparatedDevices) {
    std::size_t previous_device = row_of.begin()->first / streams;
    for (const auto& [key, row] : row_of) {
      if (key / streams != previous_device)
        script +=
            fmt::format("set arrow from graph 0, first {0} to graph 1, first {0} nohead lc rgb \"#bbbbbb\" back\n",
                        gnuplot_number(row - 0.5));
      previous_device = key / streams;
    }
  }
  // Iteration boundaries as dashed lines (but the last: it is the right edge).
  if (iteration_end.size() <= 64)
    for (std::size_t k = 0; k + 1 < iteration_end.size(); ++k)
      script += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 2 lc rgb \"#444444\" front\n",
                            gnuplot_number(iteration_end[k] * kMs));

  std::string plot;
  for (const auto& [phase, lines] : boxes) {
    if (lines.empty()) continue;
    const std::string name(phase_name(phase));
    script += fmt::format("${} << EOD\n{}EOD\n", name, lines);
    plot += fmt::format("{}${} using (($1+$2)/2):3:1:2:($3-0.4):($3+0.4) with boxxyerror fc rgb \"{}\" title {}",
                        plot.empty() ? "plot " : ", \\\n     ", name, phase_colour(phase), gnuplot_string(name));
  }
  if (plot.empty()) {
    script += "set label \"no task ran\" at graph 0.5, graph 0.5 center\nplot NaN notitle\n";
  } else {
    script += plot + "\n";
  }
  script += "unset output\n";
  return script;
}

}  // namespace dnnsim
