// A parameter sweep: a base scenario and axes of scenario keys, expanded into points (docs/sweeps.md).
//
// The sweep file names the base scenario, the summary metrics to collect, a per-point time limit
// and a list of axis groups. Each group yields a list of assignments ("key.path" = YAML value, the
// syntax of `dnnsim run --set`); groups combine as a cartesian product, the last group varying
// fastest:
//   grid   {k1: [a, b], k2: [x, y]}          → (a,x) (a,y) (b,x) (b,y)   (product, last key fastest)
//   zip    {k1: [a, b], k2: [x, y]}          → (a,x) (b,y)               (same length, taken together)
//   range  {key, from, to, steps, scale}      → steps values from `from` to `to`, linear or log
//   random {samples, seed, keys: {k: dist}}   → `samples` draws, each key from its distribution
//
// Reading goes parse → expand → validate: every problem of the sweep file, and every point whose
// overrides make the base scenario invalid (checked with load_scenario, nothing is run), is reported
// at once as an InputError located in the sweep file (FILE:LINE:COL), at the axis value that
// produced it where that can be told, else at the axis group or at `axes`.
// Pure C++ (no SimGrid): the CLI reads a sweep before it forks any point.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/units.hpp"

namespace dnnsim {

struct SweepPoint {
  std::size_t index = 0;  // position in the full expansion; the point id is derived from it
  // (key path, YAML value text) in SweepSpec::axis_keys order; the text round-trips through YAML and,
  // for quantities, through the unit parser ("31.6228Gbps"). Passed to the run as --set key=text.
  std::vector<std::pair<std::string, std::string>> assignments;
};

struct SweepSpec {
  std::string file;                    // the sweep file as given
  std::string name;                    // output directory name and sweep.json "name"
  std::string base_path;               // the base scenario, resolved against the sweep file's directory
  std::vector<std::string> metrics;    // dotted paths into summary.json
  std::vector<SourceLocation> metric_where;  // where each of `metrics` is written
  Seconds timeout{600};                // per point; `timeout:` in the file, default 10 min
  std::vector<std::string> axis_keys;  // every key set by an axis, in file order: the CSV columns
  std::vector<SweepPoint> points;      // in expansion order; points[i].index == i
};

// Reads, expands and validates a sweep file. @throw InputError with every problem found.
[[nodiscard]] SweepSpec load_sweep(const std::string& path);

// Same, without loading the base scenario for each point (no validation of the points): for tools
// that only need the expansion (`dnnsim sweep --merge` does not need it either).
[[nodiscard]] SweepSpec load_sweep_unvalidated(const std::string& path);

// "p0007": "p" and the index, zero-padded to the width of the largest index of `total` points
// (at least 4 digits), so that ids sort in index order and agree between slices and resumes.
[[nodiscard]] std::string point_id(std::size_t index, std::size_t total);

// The CSV text of an axis value: a YAML scalar as its plain text ("25MB", "3"), anything else (a list,
// a mapping) as its flow-style YAML text.
[[nodiscard]] std::string display_value(const std::string& yaml_text);

}  // namespace dnnsim
