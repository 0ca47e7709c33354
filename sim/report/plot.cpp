#include "sim/report/plot.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "models/common/diagnostics.hpp"
#include "models/common/parse_number.hpp"
#include "models/common/units.hpp"
#include "sim/report/gnuplot.hpp"

namespace dnnsim {

// ---------------------------------------------------------------------------------------------
// Axis values

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<double> plain_number(std::string_view text) {
  text = trimmed(text);
  return parse_number<double>(text);
}

constexpr std::array kDimensions{Dimension::bytes, Dimension::seconds, Dimension::flop, Dimension::bandwidth,
                                 Dimension::flop_rate};

// The base unit of each dimension, for axis labels.
std::string_view base_unit(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes:
      return "B";
    case Dimension::seconds:
      return "s";
    case Dimension::flop:
      return "Flop";
    case Dimension::bandwidth:
      return "B/s";
    case Dimension::flop_rate:
      return "Flop/s";
  }
  return "";
}

}  // namespace

std::optional<AxisNumber> parse_axis_number(std::string_view text) {
  if (const auto plain = plain_number(text)) return AxisNumber{*plain, std::nullopt};
  if (trimmed(text).empty()) return std::nullopt;
  for (const Dimension dimension : kDimensions) {
    try {
      return AxisNumber{parse_quantity(text, dimension), dimension};
    } catch (const UnitError&) {
      // not this dimension: try the next one
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Sweep plots

namespace {

struct PlotPoint {
  std::string hue;
  std::string x;
  double y = 0;
};

// Hue values in a stable order: by value when all are numbers (or quantities), else as text.
std::vector<std::string> sorted_hues(const std::vector<PlotPoint>& points) {
  std::vector<std::string> hues;
  for (const PlotPoint& p : points)
    if (std::find(hues.begin(), hues.end(), p.hue) == hues.end()) hues.push_back(p.hue);
  const bool numeric =
      std::all_of(hues.begin(), hues.end(), [](const std::string& h) { return parse_axis_number(h).has_value(); });
  if (numeric) {
    std::stable_sort(hues.begin(), hues.end(), [](const std::string& a, const std::string& b) {
      const double va = parse_axis_number(a)->value;
      const double vb = parse_axis_number(b)->value;
      return va != vb ? va < vb : a < b;
    });
  } else {
    std::sort(hues.begin(), hues.end());
  }
  return hues;
}

// Okabe–Ito colours (readable with every common colour-vision deficiency).
constexpr std::array<std::string_view, 8> kPalette{"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                   "#D55E00", "#56B4E9", "#F0E442", "#000000"};

std::string series_colours() {
  std::string text;
  for (std::size_t i = 0; i < kPalette.size(); ++i)
    text += fmt::format("set linetype {} lc rgb \"{}\" lw 2 pt 7\n", i + 1, kPalette[i]);
  return text + fmt::format("set linetype cycle {}\n", kPalette.size());
}

constexpr std::size_t kMaxNamedTicks = 12;  // more distinct x values than this: numeric tick labels

}  // namespace

std::string make_sweep_plot_script(const CsvTable& table, const PlotOptions& options, std::vector<std::string>* notes) {
  DiagnosticSink sink;
  const auto find = [&](const std::string& name, std::string_view role) -> std::size_t {
    const auto index = table.column(name);
    if (!index)
      sink.error(SourceLocation{table.source, 1, 1},
                 fmt::format("no column '{}' for {}{}", name, role, suggestion_suffix(name, table.header)));
    return index.value_or(0);
  };
  const std::size_t x_column = find(options.x, "--x");
  const std::size_t y_column = find(options.y, "--y");
  const std::optional<std::size_t> hue_column =
      options.hue ? std::optional<std::size_t>(find(*options.hue, "--hue")) : std::nullopt;
  sink.throw_if_any();
  const std::optional<std::size_t> status_column = table.column("status");

  // Rows to plot.
  std::vector<PlotPoint> points;
  std::size_t not_ok = 0;
  std::size_t no_value = 0;
  std::map<std::string, std::size_t> statuses;  // status → rows, for the message
  for (const auto& row : table.rows) {
    if (status_column && row[*status_column] != "ok") {
      ++not_ok;
      ++statuses[row[*status_column].empty() ? "(empty)" : row[*status_column]];
      continue;
    }
    const auto y = parse_axis_number(row[y_column]);
    if (!y) {
      ++no_value;
      continue;
    }
    points.push_back(PlotPoint{hue_column ? row[*hue_column] : std::string(), row[x_column], y->value});
  }
  std::vector<std::string> lines;  // notes for the caller and the subtitle
  if (not_ok > 0) {
    std::vector<std::string> parts;
    for (const auto& [status, count] : statuses) parts.push_back(fmt::format("{} {}", count, status));
    lines.push_back(fmt::format("{} skipped: status {}", counted(not_ok, "row"), fmt::join(parts, ", ")));
  }
  if (no_value > 0) lines.push_back(fmt::format("{} skipped: no number in {}", counted(no_value, "row"), options.y));
  if (points.empty())
    throw InputError(SourceLocation{table.source, 0, 0},
                     fmt::format("nothing to plot: {}{}{}", counted(table.rows.size(), "row"),
                                 lines.empty() ? "" : "; ", fmt::join(lines, "; ")));

  // The x axis: numeric when every value is a number or a quantity, categorical otherwise.
  bool numeric_x = true;
  std::set<Dimension> dimensions;
  for (const PlotPoint& p : points) {
    const auto x = parse_axis_number(p.x);
    if (!x) {
      numeric_x = false;
      break;
    }
    if (x->dimension) dimensions.insert(*x->dimension);
  }
  const std::optional<Dimension> x_dimension =
      numeric_x && dimensions.size() == 1 ? std::optional<Dimension>(*dimensions.begin()) : std::nullopt;
  std::vector<std::string> categories;    // categorical x, in order of first appearance
  std::map<double, std::string> x_texts;  // numeric x → its first text, for tick labels
  for (const PlotPoint& p : points) {
    if (numeric_x) {
      x_texts.emplace(parse_axis_number(p.x)->value, trimmed(p.x));
    } else if (std::find(categories.begin(), categories.end(), p.x) == categories.end()) {
      categories.push_back(p.x);
    }
  }
  const auto x_of = [&](const std::string& text) {
    if (numeric_x) return parse_axis_number(text)->value;
    return static_cast<double>(std::find(categories.begin(), categories.end(), text) - categories.begin());
  };

  // One series per hue value; rows on the same x are averaged.
  const std::vector<std::string> hues = sorted_hues(points);
  std::string data;
  std::string plot;
  std::size_t averaged = 0;
  for (std::size_t s = 0; s < hues.size(); ++s) {
    std::map<double, std::pair<double, std::size_t>> by_x;  // x → (sum of y, rows)
    for (const PlotPoint& p : points) {
      if (p.hue != hues[s]) continue;
      auto& [sum, count] = by_x[x_of(p.x)];
      sum += p.y;
      ++count;
    }
    data += fmt::format("$series{} << EOD\n", s);
    for (const auto& [x, sum_count] : by_x) {
      data += fmt::format("{} {}\n", gnuplot_number(x),
                          gnuplot_number(sum_count.first / static_cast<double>(sum_count.second)));
      if (sum_count.second > 1) ++averaged;
    }
    data += "EOD\n";
    plot += fmt::format("{}$series{} using 1:2 with linespoints lw 2 pt 7 ps 1.2 title {}",
                        s == 0 ? "plot " : ", \\\n     ", s, hue_column ? gnuplot_string(hues[s]) : "notitle");
  }
  if (averaged > 0)
    lines.push_back(
        fmt::format("{} average several rows (another column varies: try it as --hue)", counted(averaged, "point")));
  if (notes) *notes = lines;

  std::string title = options.title.empty()
                          ? fmt::format("{} vs {}{}", options.y, options.x,
                                        options.hue ? fmt::format(" by {}", *options.hue) : std::string())
                          : options.title;
  for (const std::string& line : lines) title += "\n" + line;

  std::string script;
  script += fmt::format("# dnnsim plot: {} against {} from {}\n", options.y, options.x, table.source);
  script += "# Self-contained (the data is inline): `gnuplot THIS_FILE` redraws the figure.\n";
  script += png_terminal(1000, 600, options.output);
  script += fmt::format("set title {}\n", gnuplot_string(title));
  // Few quantities: ticks show the texts of the sweep ("25MB"); many: numbers in the base unit, named on the label.
  const bool named_ticks = x_dimension && x_texts.size() <= kMaxNamedTicks;
  script +=
      fmt::format("set xlabel {}\n", gnuplot_string(x_dimension && !named_ticks
                                                        ? fmt::format("{} ({})", options.x, base_unit(*x_dimension))
                                                        : options.x));
  script += fmt::format("set ylabel {}\n", gnuplot_string(options.y));
  script += "set grid\n";
  script += series_colours();
  if (hue_column) {
    script += fmt::format("set key outside right top title {}\n", gnuplot_string(*options.hue));
  } else {
    script += "unset key\n";
  }
  if (numeric_x) {
    const double low = x_texts.begin()->first;
    const double high = x_texts.rbegin()->first;
    // Sweeps over sizes and bandwidths are usually geometric: a log axis when they span 100×.
    if (low > 0 && high / low >= 100) script += "set logscale x\n";
    if (named_ticks) {
      std::vector<std::string> ticks;
      for (const auto& [value, text] : x_texts)
        ticks.push_back(fmt::format("{} {}", gnuplot_string(text), gnuplot_number(value)));
      script += fmt::format("set xtics ({})\n", fmt::join(ticks, ", "));
    } else if (x_dimension) {
      script += "set format x \"%.3s%c\"\n";  // 25M, 1.5G: engineering prefixes of the base unit
    }
    script += "set autoscale xfix\n";  // the data's range, not extended to the next tic (a decade on a log axis)
    script += "set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05\n";
  } else {
    std::vector<std::string> ticks;
    for (std::size_t c = 0; c < categories.size(); ++c)
      ticks.push_back(fmt::format("{} {}", gnuplot_string(categories[c]), c));
    script += fmt::format("set xtics ({})\n", fmt::join(ticks, ", "));
    script += fmt::format("set xrange [-0.5:{}]\n", gnuplot_number(static_cast<double>(categories.size()) - 0.5));
    script += "set offsets 0, 0, graph 0.05, graph 0.05\n";
  }
  script += data;
  script += plot + "\n";
  script += "unset output\n";
  return script;
}

// ---------------------------------------------------------------------------------------------
// Cluster runs

namespace {

// Numbers of `column` in a cluster report CSV, skipping empty fields (jobs that never ran).
std::vector<double> numeric_column(const CsvTable& table, const std::string& column) {
  const auto index = table.column(column);
  if (!index)
    throw InputError(SourceLocation{table.source, 1, 1},
                     fmt::format("no column '{}' (is it a cluster run's file?)", column));
  std::vector<double> values;
  DiagnosticSink sink;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::string& cell = table.rows[r][*index];
    if (cell.empty()) continue;
    if (const auto value = parse_number<double>(cell)) {
      values.push_back(*value);
    } else {
      const CsvTable::Position at = table.positions[r][*index];
      sink.error(SourceLocation{table.source, at.line, at.column},
                 fmt::format("{}: expected a number, got '{}'", column, cell));
    }
  }
  sink.throw_if_any();
  return values;
}

}  // namespace

std::string make_jct_cdf_script(const std::vector<std::pair<std::string, CsvTable>>& runs,
                                const std::string& png_path) {
  std::string script = png_terminal(900, 600, png_path);
  script +=
      "set title \"JCT CDF\"\nset xlabel \"job completion time (s)\"\nset ylabel \"fraction of finished jobs\"\n"
      "set logscale x\nset key bottom right\nset grid\n";
  std::string plots, data;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::vector<double> jct = numeric_column(runs[r].second, "jct_s");
    if (jct.empty()) throw InputError(SourceLocation{runs[r].second.source, 0, 0}, "no finished job to plot");
    std::sort(jct.begin(), jct.end());
    data += fmt::format("$run{} << EOD\n", r);
    for (std::size_t i = 0; i < jct.size(); ++i)
      data +=
          fmt::format("{} {}\n", std::max(jct[i], 1e-3), static_cast<double>(i + 1) / static_cast<double>(jct.size()));
    data += "EOD\n";
    plots +=
        fmt::format("{}$run{} using 1:2 with steps lw 2 title {}", r ? ", " : "", r, gnuplot_string(runs[r].first));
  }
  return script + data + "plot " + plots + "\n";
}

std::string make_utilisation_script(const std::vector<std::pair<std::string, CsvTable>>& runs,
                                    const std::string& png_path) {
  std::string script = png_terminal(900, 700, png_path);
  script += "set multiplot layout 2,1\nset xlabel \"time (h)\"\nset grid\nset key top right\n";
  std::string data, util, queued;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const std::vector<double> start = numeric_column(runs[r].second, "start_s");
    const std::vector<double> busy = numeric_column(runs[r].second, "utilisation");
    const std::vector<double> waiting = numeric_column(runs[r].second, "queued");
    data += fmt::format("$run{} << EOD\n", r);
    for (std::size_t i = 0; i < start.size() && i < busy.size() && i < waiting.size(); ++i)
      data += fmt::format("{} {} {}\n", start[i] / 3600.0, busy[i], waiting[i]);
    data += "EOD\n";
    util += fmt::format("{}$run{} using 1:2 with steps lw 2 title {}", r ? ", " : "", r, gnuplot_string(runs[r].first));
    queued +=
        fmt::format("{}$run{} using 1:3 with steps lw 2 title {}", r ? ", " : "", r, gnuplot_string(runs[r].first));
  }
  return script + data + "set ylabel \"GPU utilisation\"\nset yrange [0:1.05]\nplot " + util +
         "\nset ylabel \"queued jobs\"\nset yrange [*:*]\nplot " + queued + "\nunset multiplot\n";
}

}  // namespace dnnsim
