// Runs the points of a sweep, each as its own `dnnsim run` process, and collects one CSV row per point
// (docs/sweeps.md).
//
// One process per point because SimGrid cannot reset its engine (a second engine in a process keeps
// the clock of the first, docs research: simgrid-recipes §4); the driver never creates an engine. A
// point is `EXE run BASE --out DIR/points/ID --set key=value …` in a process group of its own, with
// stdout/stderr in DIR/points/ID/{stdout,stderr}.txt; at most `jobs` run at once and each is killed
// (SIGKILL to its group) when it exceeds the time limit.
//
// Files in DIR:
//   sweep.json                    {name, points, columns}: what `merge_sweep` expects;
//   results.csv                   one row per finished point, appended, flushed and fsync'ed as each
//   (results-slice-I-of-K.csv)    point ends; RFC 4180 quoting; no wall times. Rows are appended in
//                                 completion order and, once every point is done, rewritten in point
//                                 order: a completed sweep gives the same bytes whatever --jobs was;
//   points/ID/                    the point's reports (summary.json …) and its captured output.
// Columns: point, the axis keys, status (ok | failed | expectation_missed | timeout), error, metrics.
//
// Resume: rows already in the CSV (any status) are kept and their points not run again; rerun into a
// fresh DIR (or delete the rows) to retry failures. Interrupt (SIGINT/SIGTERM): no new point starts,
// running points are killed and leave no row; rows already written stay.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "models/common/units.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace dnnsim {

struct SweepSlice {
  std::size_t index = 0;  // I: runs the points whose index % count == I
  std::size_t count = 1;  // K
};

struct SweepRunOptions {
  std::string out_dir;             // empty: out/<sweep name>
  unsigned jobs = 0;               // points at once; 0: std::thread::hardware_concurrency()
  std::optional<Seconds> timeout;  // per point; empty: the sweep file's
  std::optional<SweepSlice> slice;
  std::string executable;            // the dnnsim binary; empty: /proc/self/exe
  std::ostream* progress = nullptr;  // "[12/40] 1 failed, elapsed 1m03s, ETA 2m10s"; nullptr: quiet
};

struct SweepRunResult {
  std::string csv_path;
  std::size_t selected = 0;                                               // points of this run (after the slice)
  std::size_t already_done = 0;                                           // of those, found in the CSV and skipped
  std::size_t ok = 0, failed = 0, expectation_missed = 0, timed_out = 0;  // points run now
  bool interrupted = false;                                               // SIGINT/SIGTERM: the CLI exits with 130
};

// Runs the sweep. Signals SIGINT, SIGTERM and SIGCHLD are blocked and handled synchronously while it
// runs (their previous dispositions and the signal mask are restored before it returns).
// @throw InputError when the existing CSV belongs to another sweep (other columns or axis values);
// @throw std::runtime_error when a file cannot be written or a process cannot be started.
[[nodiscard]] SweepRunResult run_sweep(const SweepSpec& spec, const SweepRunOptions& options);

// The CSV columns of a sweep: point, axis keys, status, error, then one per metric. A metric whose
// path equals another column's name is named "summary.<path>" ("status" → "summary.status").
[[nodiscard]] std::vector<std::string> sweep_columns(const SweepSpec& spec);

struct SweepMergeResult {
  std::string csv_path;                   // DIR/results.csv
  std::size_t total = 0;                  // points the sweep has (sweep.json)
  std::size_t present = 0;                // rows written
  std::vector<std::string> missing;       // point ids with no row, in index order
  std::vector<std::size_t> slice_counts;  // the K of every results-slice-I-of-K.csv read (distinct, sorted)
};

// Merges DIR/results.csv and every DIR/results-slice-I-of-K.csv into DIR/results.csv, one row per
// point in index order (the first row found wins: results.csv, then slices by K and I).
// @throw InputError when sweep.json is missing or a CSV has other columns than sweep.json says.
[[nodiscard]] SweepMergeResult merge_sweep(const std::string& dir);

// RFC 4180: a field is quoted when it holds a comma, a quote, CR or LF; quotes are doubled.
[[nodiscard]] std::string csv_field(const std::string& text);
// Rows of fields of RFC 4180 text (read_csv_records, models/common/located_csv.hpp), every byte kept.
// An unterminated last line (no final newline) is dropped: it can only be a row cut short.
[[nodiscard]] std::vector<std::vector<std::string>> parse_csv(const std::string& text);

}  // namespace dnnsim
