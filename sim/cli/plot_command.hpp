// `dnnsim plot` and `dnnsim run --gantt`: figures drawn by gnuplot (docs/plots.md). The scripts
// come from sim/report/plot.hpp and sim/report/gantt.hpp; this file writes them next to the PNG and
// runs gnuplot (sim/report/gnuplot.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace dnnsim {
struct SimulationResult;
}

namespace dnnsim::cli {

struct PlotCommandOptions {
  std::string csv;                       // sweep results (dnnsim sweep): point,<axes…>,status,error,<metrics…>
  std::string x;                         // column for the x axis
  std::string y;                         // column for the y axis
  std::string hue;                       // column whose values make one line each; empty: a single line
  std::vector<std::string> where;        // "COLUMN=VALUE": plot only the rows that match all
  std::string output;                    // PNG file; the script is written beside it with the extension .gp
  std::string title;                     // empty: "<y> vs <x>"
  std::vector<std::string> jct_cdf;      // cluster run directories: plot their jobs.csv JCT CDFs instead
  std::vector<std::string> utilisation;  // cluster run directories: plot their utilisation.csv instead
};

// Writes OUTPUT's script (OUTPUT with .gp) and draws OUTPUT with gnuplot. Notes (skipped rows,
// averaged points) go to stderr. Returns 0, or 1 when gnuplot is missing or fails (said on stderr).
// @throw InputError (unreadable or malformed CSV, unknown column, nothing to plot) — exit code 2.
int run_plot_command(const PlotCommandOptions& options);

// gnuplot could not draw a figure (not installed, or it failed): the message says which and how to fix it.
class PlotError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes OUT_DIR/gantt.gp and draws OUT_DIR/gantt.png from the run's task timeline.
// @throw PlotError when gnuplot is missing or fails (gantt.gp is kept).
void write_gantt(const SimulationResult& result, const std::string& out_dir);

}  // namespace dnnsim::cli
