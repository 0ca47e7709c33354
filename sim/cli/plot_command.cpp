#include "sim/cli/plot_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/input_file.hpp"
#include "sim/report/gantt.hpp"
#include "sim/report/gnuplot.hpp"
#include "sim/report/plot.hpp"
#include "sim/run/simulation.hpp"

namespace dnnsim::cli {
namespace {

namespace fs = std::filesystem;

// Writes `text` to `path`, creating its directory. @throw InputError (as write_reports does)
void write_text(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) create_output_directory(path.parent_path().string());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw InputError(SourceLocation{path.string(), 0, 0}, "cannot write the file");
}

// gnuplot exits 0 even when it could not open its output: check that a PNG is there.
bool png_written(const fs::path& path) {
  std::error_code ignored;
  return fs::is_regular_file(path, ignored) && fs::file_size(path, ignored) > 0;
}

}  // namespace

namespace {

int draw(const std::string& script, const fs::path& png) {
  const fs::path script_path = fs::path(png).replace_extension(".gp");
  write_text(script_path, script);
  std::error_code ignored;
  fs::remove(png, ignored);
  std::string error;
  if (render_with_gnuplot(script, error) != 0 || !png_written(png)) {
    std::cerr << fmt::format("error: cannot draw {}: {}\n(the script is in {})\n", png.string(), error,
                             script_path.string());
    return 1;
  }
  std::cout << fmt::format("plot written to {} (gnuplot script {})\n", png.string(), script_path.string());
  return 0;
}

// (run directory name, its `file`) for each directory.
std::vector<std::pair<std::string, CsvTable>> run_tables(const std::vector<std::string>& dirs, const char* file) {
  std::vector<std::pair<std::string, CsvTable>> runs;
  for (const std::string& dir : dirs)
    runs.emplace_back(fs::path(dir).lexically_normal().filename().string().empty()
                          ? fs::path(dir).lexically_normal().parent_path().filename().string()
                          : fs::path(dir).lexically_normal().filename().string(),
                      read_csv((fs::path(dir) / file).string()));
  return runs;
}

}  // namespace

int run_plot_command(const PlotCommandOptions& options) {
  if (!options.jct_cdf.empty())
    return draw(make_jct_cdf_script(run_tables(options.jct_cdf, "jobs.csv"), options.output), options.output);
  if (!options.utilisation.empty())
    return draw(make_utilisation_script(run_tables(options.utilisation, "utilisation.csv"), options.output),
                options.output);
  if (options.csv.empty() || options.x.empty() || options.y.empty())
    throw InputError(SourceLocation{},
                     "dnnsim plot needs RESULTS --x --y (a sweep plot), or --jct-cdf DIR… or --utilisation DIR…");
  const CsvTable table = filter_rows(read_csv(options.csv), options.where);
  PlotOptions plot;
  plot.x = options.x;
  plot.y = options.y;
  if (!options.hue.empty()) plot.hue = options.hue;
  plot.output = options.output;
  plot.title = options.title;
  std::vector<std::string> notes;
  const std::string script = make_sweep_plot_script(table, plot, &notes);
  for (const std::string& note : notes) std::cerr << "note: " << note << '\n';

  const fs::path png(options.output);
  const fs::path script_path = fs::path(png).replace_extension(".gp");
  write_text(script_path, script);
  std::error_code ignored;
  fs::remove(png, ignored);  // so that a stale figure is never taken for a new one
  std::string error;
  if (render_with_gnuplot(script, error) != 0) {
    std::cerr << fmt::format("error: cannot draw {}: {}\n(the script is in {})\n", png.string(), error,
                             script_path.string());
    return 1;
  }
  if (!png_written(png)) {
    std::cerr << fmt::format("error: gnuplot wrote no {} (the script is in {})\n", png.string(), script_path.string());
    return 1;
  }
  std::cout << fmt::format("plot written to {} (gnuplot script {})\n", png.string(), script_path.string());
  return 0;
}

void write_gantt(const SimulationResult& result, const std::string& out_dir) {
  const fs::path png = fs::path(out_dir) / "gantt.png";
  const fs::path script_path = fs::path(out_dir) / "gantt.gp";
  const std::string script = make_gantt_script(result, png.string());
  write_text(script_path, script);
  std::error_code ignored;
  fs::remove(png, ignored);
  std::string error;
  if (render_with_gnuplot(script, error) != 0)
    throw PlotError(
        fmt::format("--gantt: cannot draw {}: {} (the script is in {})", png.string(), error, script_path.string()));
  if (!png_written(png)) throw PlotError(fmt::format("--gantt: gnuplot wrote no {}", png.string()));
}

}  // namespace dnnsim::cli
