// Figures drawn by gnuplot (docs/plots.md): a metric of a sweep's results against one of its axes,
// and the Gantt chart of one run's timeline.
//
// dnnsim writes gnuplot scripts whose data is inline (`$name << EOD … EOD`), so that each script is
// self-contained and reproducible (`gnuplot fig.gp` redraws the figure), and runs gnuplot on them.
// The scripts pick the `pngcairo` terminal when the gnuplot at hand has it (Debian's gnuplot-nox
// does) and fall back to the libgd `png` terminal otherwise.
// Everything here is deterministic: same input → byte-identical script.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"

namespace dnnsim {

struct SimulationResult;  // sim/run/simulation.hpp (kept out of this header: it brings SimGrid in)

// A CSV file read per RFC 4180: comma-separated fields, fields in double quotes may hold commas,
// line breaks and doubled quotes (""), lines end with LF or CRLF. The first record is the header.
struct CsvTable {
  std::string source;  // file name, for messages
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as wide as the header
  std::vector<int> row_lines;                  // 1-based line on which each row starts

  // Index of the column named `name`, if there is one.
  [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const;
};

// Parses CSV text with read_csv_records (models/common/located_csv.hpp; fields untrimmed); `source`
// names it in messages. Strict, unlike the sweep runner's parse_csv (sim/sweep), which silently drops
// a row cut short because it recovers its own interrupted files.
// @throw InputError at source:line:col, every problem at once: an unterminated quoted field, a character
//        after a closing quote, a quote inside an unquoted field, a row wider or narrower than the
//        header, or no header.
[[nodiscard]] CsvTable parse_csv_table(std::string_view text, const std::string& source);
// @throw InputError (as parse_csv_table; also when the file cannot be read)
[[nodiscard]] CsvTable read_csv(const std::string& path);

// The rows whose columns equal the given values: each condition is "COLUMN=VALUE" (exact text), all
// must hold — `dnnsim plot --where`, to draw one slice of a sweep. @throw InputError for a condition
// without '=' or a column the table does not have (with a did-you-mean).
[[nodiscard]] CsvTable filter_rows(const CsvTable& table, const std::vector<std::string>& conditions);

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

// The gnuplot script of a run's Gantt chart: one row per (device, stream) that ran a task, from the
// first device at the top; one box per task and device it occupies (as in trace.json: the compute
// device, a transfer's source, every member of a collective), coloured by phase; x is the simulated
// time in ms; the title gives the makespan. Tasks that never ran are left out and counted in the title.
// Boxes are `boxxyerror` rows of inline data (three numbers per box), not `set object rect`, so
// 100k tasks stay a few MB of script and a few seconds of gnuplot.
[[nodiscard]] std::string make_gantt_script(const SimulationResult& result, const std::string& png_path);

// Cluster runs (docs/cluster.md): the CDF of `jct_s` of each run's jobs.csv, one line per (label, table),
// x logarithmic; and each run's utilisation.csv as two time series (GPU utilisation, queued jobs).
// @throw InputError when a table lacks the column or has no finished job.
[[nodiscard]] std::string make_jct_cdf_script(const std::vector<std::pair<std::string, CsvTable>>& runs, const std::string& png_path);
[[nodiscard]] std::string make_utilisation_script(const std::vector<std::pair<std::string, CsvTable>>& runs,
                                                  const std::string& png_path);

// Runs `program` (default: gnuplot from PATH) with `script` on its standard input and waits for it.
// Returns 0 on success; otherwise non-zero with `error` saying why: gnuplot not installed (exit code
// 127, "install it with scripts/install-deps"), or it failed (its exit status and error output).
int render_with_gnuplot(const std::string& script, std::string& error, const std::string& program = "gnuplot");

}  // namespace dnnsim
