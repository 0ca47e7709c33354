// Runs sweep points as child processes (sim/process/process_pool.hpp) and writes the results CSV (see
// sweep_runner.hpp).
//
// The pool calls back between children, never inside a signal handler: a row is written whole (one
// write(), then fsync) or not at all, and an interrupt only ever arrives between rows.
#include "sim/sweep/sweep_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "models/common/input_file.hpp"
#include "models/common/located_csv.hpp"
#include "models/common/parse_number.hpp"
#include "models/common/units.hpp"
#include "sim/process/process_pool.hpp"
#include "sim/report/report.hpp"

namespace dnnsim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Writes all of `text` to `fd` and forces it to disk.
void write_durably(int fd, const std::string& text, const std::string& name) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("cannot write " + name);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) throw system_error("cannot sync " + name);
}

// Replaces `path` by `text` atomically (a temporary file renamed over it), so that a reader never
// sees half a file and concurrent slices writing the same sweep.json do not interleave.
void replace_file(const fs::path& path, const std::string& text) {
  // Host and pid: slices on several machines may write the same file of a shared directory.
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  const fs::path temporary = path.string() + fmt::format(".tmp-{}-{}", host.data(), ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw system_error("cannot write " + temporary.string());
  try {
    write_durably(fd, text, temporary.string());
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  fs::rename(temporary, path);
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += csv_field(fields[i]);
  }
  return line + "\n";
}

// "0.4s", "17s", "1m03s", "2h05m": progress times.
std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (seconds < 9.95) return fmt::format("{:.1f}s", std::max(0.0, seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

// The metric as a CSV cell: numbers as JSON writes them (shortest text that reads back the same
// double, integers without a decimal point), strings as they are, a missing path as an empty cell.
std::string metric_cell(const nlohmann::ordered_json& summary, const std::string& path) {
  const nlohmann::ordered_json* value = find_summary_value(summary, path);
  if (value == nullptr || value->is_null()) return "";
  if (value->is_string()) return value->get<std::string>();
  return value->dump();
}

class Runner {
 public:
  Runner(const SweepSpec& spec, const SweepRunOptions& options) : spec_(spec), options_(options) {
    dir_ = options.out_dir.empty() ? fs::path("out") / spec.name : fs::path(options.out_dir);
    timeout_ = options.timeout.value_or(spec.timeout);
    jobs_ = options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
    executable_ = options.executable.empty() ? current_executable() : options.executable;
    columns_ = sweep_columns(spec);
    csv_path_ =
        dir_ / (options.slice ? fmt::format("results-slice-{}-of-{}.csv", options.slice->index, options.slice->count)
                              : std::string("results.csv"));
  }

  SweepRunResult run() {
    create_output_directory(dir_.string());  // a file there is named as it was given
    create_output_directory((dir_ / "points").string());
    nlohmann::ordered_json manifest;
    manifest["name"] = spec_.name;
    manifest["points"] = spec_.points.size();
    manifest["columns"] = columns_;
    replace_file(dir_ / "sweep.json", manifest.dump(2) + "\n");

    result_.csv_path = csv_path_.string();
    const std::set<std::size_t> done = open_csv();
    std::vector<const SweepPoint*> todo;
    for (const SweepPoint& point : spec_.points) {
      if (options_.slice && point.index % options_.slice->count != options_.slice->index) continue;
      ++result_.selected;
      if (done.count(point.index) > 0)
        ++result_.already_done;
      else
        todo.push_back(&point);
    }
    if (options_.progress != nullptr) {
      *options_.progress << fmt::format(
          "sweep {}: {}{}, {} to run, {} at a time, time limit {} → {}\n", spec_.name,
          counted(result_.selected, "point"),
          result_.already_done > 0
              ? fmt::format(" ({} already in {})", result_.already_done, csv_path_.filename().string())
              : std::string(),
          todo.size(), jobs_, format_seconds(timeout_), csv_path_.string());
    }
    try {
      run_points(todo);
    } catch (...) {
      ::close(csv_fd_);
      throw;
    }
    ::close(csv_fd_);
    // Complete: put the rows in point order, so that the same sweep gives the same file whatever the
    // completion order (atomically: an interrupted rewrite leaves the appended file as it was).
    if (!result_.interrupted) {
      auto rows = parse_csv(read_text_file(csv_path_));
      std::stable_sort(rows.begin() + 1, rows.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
      std::string text;
      for (const auto& row : rows) text += csv_line(row);
      replace_file(csv_path_, text);
    }
    return result_;
  }

 private:
  // Opens the CSV for appending: writes the header into a new file, or checks an existing one and
  // returns the indexes of the points it already has.
  std::set<std::size_t> open_csv() {
    std::set<std::size_t> done;
    std::string text = fs::exists(csv_path_) ? read_text_file(csv_path_) : std::string();
    csv_fd_ = ::open(csv_path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (csv_fd_ < 0) throw system_error("cannot open " + csv_path_.string());
    // A row cut short (the driver killed mid-write by SIGKILL, or a full disk) is dropped.
    const auto last_newline = text.rfind('\n');
    const std::size_t complete = last_newline == std::string::npos ? 0 : last_newline + 1;
    if (complete != text.size()) {
      text.resize(complete);
      if (::ftruncate(csv_fd_, static_cast<off_t>(complete)) != 0)
        throw system_error("cannot truncate " + csv_path_.string());
    }
    if (::lseek(csv_fd_, 0, SEEK_END) < 0) throw system_error("cannot seek " + csv_path_.string());
    if (text.empty()) {
      write_durably(csv_fd_, csv_line(columns_), csv_path_.string());
      return done;
    }
    const auto rows = parse_csv(text);
    if (rows.front() != columns_)
      throw InputError(SourceLocation{csv_path_.string(), 1, 1},
                       fmt::format("this file has the columns of another sweep ({}); the sweep has {}: use another "
                                   "--out, or delete the file to start again",
                                   fmt::join(rows.front(), ","), fmt::join(columns_, ",")));
    std::map<std::string, std::size_t> index_of;
    for (const SweepPoint& point : spec_.points)
      index_of.emplace(point_id(point.index, spec_.points.size()), point.index);
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      const SourceLocation where{csv_path_.string(), static_cast<int>(r + 1), 1};
      const auto found = row.empty() ? index_of.end() : index_of.find(row[0]);
      if (row.size() != columns_.size() || found == index_of.end())
        throw InputError(
            where, fmt::format("not a row of this sweep (point '{}'): use another --out", row.empty() ? "" : row[0]));
      const SweepPoint& point = spec_.points[found->second];
      for (std::size_t k = 0; k < point.assignments.size(); ++k) {
        if (row[1 + k] != display_value(point.assignments[k].second))
          throw InputError(where, fmt::format("point {} was run with {}={}, the sweep now says {}: the sweep changed; "
                                              "use another --out",
                                              row[0], point.assignments[k].first, row[1 + k],
                                              display_value(point.assignments[k].second)));
      }
      done.insert(point.index);
    }
    return done;
  }

  void run_points(const std::vector<const SweepPoint*>& todo) {
    start_ = Clock::now();
    // Interrupted: the children that ran were killed and leave no row; the rows written so far stay.
    result_.interrupted = !run_child_processes(
        todo.size(), jobs_, [&](std::size_t i) { return command(*todo[i]); },
        [&](std::size_t i, const ChildExit& exit) { finish(*todo[i], exit); });
  }

  // `EXE run BASE --out DIR/points/ID --set key=value …`, stdout/stderr in the point's directory.
  ChildCommand command(const SweepPoint& point) const {
    const fs::path point_dir = dir_ / "points" / point_id(point.index, spec_.points.size());
    fs::remove_all(point_dir);  // a killed earlier attempt must not leave a summary.json behind
    fs::create_directories(point_dir);
    ChildCommand child{{executable_, "run", spec_.base_path, "--out", point_dir.string()},
                       (point_dir / "stdout.txt").string(),
                       (point_dir / "stderr.txt").string(),
                       timeout_};
    for (const auto& [key, text] : point.assignments) {
      child.argv.emplace_back("--set");
      child.argv.push_back(key + "=" + text);
    }
    return child;
  }

  void finish(const SweepPoint& point, const ChildExit& exit) {
    const std::string id = point_id(point.index, spec_.points.size());
    const fs::path point_dir = dir_ / "points" / id;
    std::string status;
    std::string error;
    bool read_metrics = false;
    if (exit.how == ChildExit::How::exited && exit.code == 0) {
      status = "ok";
      read_metrics = true;
    } else if (exit.how == ChildExit::How::exited && exit.code == 3) {
      status = "expectation_missed";
      error = first_line_matching(read_text_file(point_dir / "stdout.txt"),
                                  [](const std::string& l) { return l.find("MISS") != std::string::npos; });
      read_metrics = true;
    } else {
      status = exit.how == ChildExit::How::timed_out ? "timeout" : "failed";
      error = failure_reason(exit, read_text_file(point_dir / "stderr.txt"), timeout_);
      if (exit.how == ChildExit::How::timed_out) ++result_.timed_out;
    }
    std::vector<std::string> metrics(spec_.metrics.size());
    if (read_metrics) {
      nlohmann::ordered_json summary;
      try {
        summary = nlohmann::ordered_json::parse(read_text_file(point_dir / "summary.json"));
        for (std::size_t m = 0; m < metrics.size(); ++m) metrics[m] = metric_cell(summary, spec_.metrics[m]);
      } catch (const nlohmann::json::exception&) {
        status = "failed";
        error = "the run wrote no readable summary.json";
      }
    }
    if (status == "ok") ++result_.ok;
    if (status == "expectation_missed") ++result_.expectation_missed;
    if (status == "failed") ++result_.failed;

    std::vector<std::string> row{id};
    for (const auto& [key, text] : point.assignments) row.push_back(display_value(text));
    row.push_back(status);
    row.push_back(error);
    row.insert(row.end(), metrics.begin(), metrics.end());
    write_durably(csv_fd_, csv_line(row), csv_path_.string());
    report_progress();
  }

  void report_progress() {
    if (options_.progress == nullptr) return;
    const std::size_t finished = result_.ok + result_.failed + result_.expectation_missed + result_.timed_out;
    const std::size_t to_run = result_.selected - result_.already_done;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double eta = elapsed / static_cast<double>(finished) * static_cast<double>(to_run - finished);
    const std::size_t failures = result_.failed + result_.timed_out;
    *options_.progress << fmt::format("[{}/{}] {} failed, elapsed {}, ETA {}\n", result_.already_done + finished,
                                      result_.selected, failures, format_duration(elapsed), format_duration(eta))
                       << std::flush;
  }

  const SweepSpec& spec_;
  const SweepRunOptions& options_;
  fs::path dir_;
  fs::path csv_path_;
  Seconds timeout_;
  unsigned jobs_ = 1;
  std::string executable_;
  std::vector<std::string> columns_;
  int csv_fd_ = -1;
  Clock::time_point start_;
  SweepRunResult result_;
};

}  // namespace

std::vector<std::string> sweep_columns(const SweepSpec& spec) {
  std::vector<std::string> columns{"point"};
  columns.insert(columns.end(), spec.axis_keys.begin(), spec.axis_keys.end());
  columns.emplace_back("status");
  columns.emplace_back("error");
  const std::size_t fixed = columns.size();
  for (const std::string& metric : spec.metrics) {
    const bool taken = std::find(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(fixed), metric) !=
                       columns.begin() + static_cast<std::ptrdiff_t>(fixed);
    columns.push_back(taken ? "summary." + metric : metric);
  }
  return columns;
}

SweepRunResult run_sweep(const SweepSpec& spec, const SweepRunOptions& options) {
  Runner runner(spec, options);
  return runner.run();
}

SweepMergeResult merge_sweep(const std::string& dir_text) {
  const fs::path dir(dir_text);
  const fs::path manifest_path = dir / "sweep.json";
  if (!fs::is_regular_file(manifest_path))
    throw InputError(SourceLocation{manifest_path.string(), 0, 0},
                     "no sweep.json here: not the output directory of dnnsim sweep");
  std::size_t total = 0;
  std::vector<std::string> columns;
  try {
    const auto manifest = nlohmann::json::parse(read_text_file(manifest_path));
    total = manifest.at("points").get<std::size_t>();
    columns = manifest.at("columns").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(SourceLocation{manifest_path.string(), 0, 0}, fmt::format("unreadable sweep.json: {}", e.what()));
  }

  // Inputs: results.csv first, then the slices by K then I.
  std::vector<fs::path> inputs;
  if (fs::is_regular_file(dir / "results.csv")) inputs.push_back(dir / "results.csv");
  std::vector<std::tuple<std::size_t, std::size_t, fs::path>> slices;
  const std::regex slice_name(R"(results-slice-(\d+)-of-(\d+)\.csv)");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, match, slice_name)) continue;
    // Digits beyond size_t name no slice a sweep wrote.
    const auto count = parse_number<std::size_t>(match[2].str()), index = parse_number<std::size_t>(match[1].str());
    if (count && index) slices.emplace_back(*count, *index, entry.path());
  }
  std::sort(slices.begin(), slices.end());
  for (const auto& [count, index, path] : slices) inputs.push_back(path);

  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < total; ++i) index_of.emplace(point_id(i, total), i);
  std::vector<std::optional<std::vector<std::string>>> rows(total);
  for (const fs::path& path : inputs) {
    const auto parsed = parse_csv(read_text_file(path));
    if (parsed.empty()) continue;
    if (parsed.front() != columns)
      throw InputError(
          SourceLocation{path.string(), 1, 1},
          fmt::format("the columns differ from sweep.json's ({}): a slice of another sweep?", fmt::join(columns, ",")));
    for (std::size_t r = 1; r < parsed.size(); ++r) {
      const auto found = parsed[r].empty() ? index_of.end() : index_of.find(parsed[r][0]);
      if (parsed[r].size() != columns.size() || found == index_of.end())
        throw InputError(SourceLocation{path.string(), static_cast<int>(r + 1), 1},
                         fmt::format("not a row of this sweep of {} points", total));
      if (!rows[found->second]) rows[found->second] = parsed[r];
    }
  }

  SweepMergeResult result;
  result.total = total;
  for (const auto& [count, index, path] : slices)
    if (std::find(result.slice_counts.begin(), result.slice_counts.end(), count) == result.slice_counts.end())
      result.slice_counts.push_back(count);
  result.csv_path = (dir / "results.csv").string();
  std::string text = csv_line(columns);
  for (std::size_t i = 0; i < total; ++i) {
    if (rows[i]) {
      text += csv_line(*rows[i]);
      ++result.present;
    } else {
      result.missing.push_back(point_id(i, total));
    }
  }
  replace_file(dir / "results.csv", text);
  return result;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  // What follows the last line end is a row cut short; a quoted field cut there is a syntax error of
  // that row alone, which is dropped too.
  const std::size_t last_newline = text.rfind('\n');
  const std::size_t complete = last_newline == std::string::npos ? 0 : last_newline + 1;
  DiagnosticSink ignored;
  std::vector<std::vector<std::string>> rows;
  for (LocatedCsvRow& record :
       read_csv_records(std::string_view(text).substr(0, complete), "", CsvSyntax{',', false}, ignored)) {
    if (record.malformed) continue;
    std::vector<std::string>& row = rows.emplace_back();
    for (LocatedCsvField& field : record.fields) row.push_back(std::move(field.text));
  }
  return rows;
}

}  // namespace dnnsim
