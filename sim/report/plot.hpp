// Figures of results drawn by gnuplot (docs/plots.md; the scripts' pieces and the runner are in
// gnuplot.hpp, the Gantt chart of a run in gantt.hpp): a metric of a sweep's results against one of
// its axes, and the JCT and utilisation of cluster runs.
// Everything here is deterministic: same input → byte-identical script.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"
#include "sim/report/csv_table.hpp"

namespace dnnsim {

// A sweep axis value as a number. YAML texts of a sweep are either plain numbers ("0.5", "8") or
// quantities with a unit ("25MB", "10Gbps", "2us"), which are read with parse_quantity in the base
// unit of their dimension (bytes, seconds, flop, bytes/s, flop/s: "10Gbps" → 1.25e9 B/s).
// Empty when the text is neither (a name such as "ring" is categorical).
struct AxisNumber {
  double value = 0;
  std::optional<Dimension> dimension;  // empty for a plain number
};
[[nodiscard]] std::optional<AxisNumber> parse_axis_number(std::string_view text);

struct PlotOptions {
  std::string x;                   // column for the x axis (a sweep axis)
  std::string y;                   // column for the y axis (a metric)
  std::optional<std::string> hue;  // column whose values make one line each
  std::string output;              // PNG file the script writes
  std::string title;               // empty: "<y> vs <x>"
};

// The gnuplot script of a sweep plot: y against x, one line with points per hue value (hue values
// sorted: numerically when they all are numbers, else as text). A numeric x (every used value a number
// or a quantity) is a real axis, points sorted by x, labelled with the original texts when there are
// few; otherwise x is categorical, one tick per value in the order of first appearance.
// Rows whose `status` column (when there is one) is not "ok", or whose y is empty or not a number,
// are skipped; several rows on the same (hue, x) are averaged. Each such fact becomes a line of
// `notes` (when given) and of the figure's subtitle.
// @throw InputError when x, y or hue is not a column (with the closest name), or no row is left to plot.
[[nodiscard]] std::string make_sweep_plot_script(const CsvTable& table, const PlotOptions& options,
                                                 std::vector<std::string>* notes = nullptr);

// Cluster runs (docs/cluster.md): the CDF of `jct_s` of each run's jobs.csv, one line per (label, table),
// x logarithmic; and each run's utilisation.csv as two time series (GPU utilisation, queued jobs).
// @throw InputError when a table lacks the column or has no finished job.
[[nodiscard]] std::string make_jct_cdf_script(const std::vector<std::pair<std::string, CsvTable>>& runs,
                                              const std::string& png_path);
[[nodiscard]] std::string make_utilisation_script(const std::vector<std::pair<std::string, CsvTable>>& runs,
                                                  const std::string& png_path);

}  // namespace dnnsim
