// Runs sweep points as child processes and writes the results CSV (see sweep_runner.hpp).
//
// Signals are handled synchronously: SIGCHLD, SIGINT and SIGTERM are blocked and collected with
// sigtimedwait, whose timeout is the nearest point deadline. So there is no handler racing the CSV
// writes: a row is written whole (one write(), then fsync) or not at all, and an interrupt only ever
// arrives between rows.
#include "sim/sweep/sweep_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "sim/report/report.hpp"

namespace dnnsim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

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

std::string trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

// The first line of `text` for which `wanted` holds, trimmed; empty if none.
template <class Predicate>
std::string first_line(const std::string& text, Predicate wanted) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (wanted(line)) return trim(line);
  return "";
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// A child's error: its first line that mentions an error, else its first non-empty line.
std::string error_line(const std::string& stderr_text) {
  std::string line = first_line(stderr_text, [](const std::string& l) { return lower(l).find("error") != std::string::npos; });
  if (line.empty()) line = first_line(stderr_text, [](const std::string& l) { return !trim(l).empty(); });
  return line;
}

// Blocks SIGCHLD/SIGINT/SIGTERM for the lifetime of the object and gives them handlers that do
// nothing (a blocked signal whose action is "ignore" may be discarded, and a non-interactive shell
// starts background jobs with SIGINT ignored); restores everything on destruction.
class SignalScope {
 public:
  SignalScope() {
    sigemptyset(&set_);
    for (const int s : kSignals) sigaddset(&set_, s);
    if (::sigprocmask(SIG_BLOCK, &set_, &old_mask_) != 0) throw system_error("sigprocmask");
    struct sigaction action {};
    action.sa_handler = &SignalScope::ignore;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &old_actions_[i]);
  }
  ~SignalScope() {
    // Discard what is still pending so that restoring the old actions does not fire them.
    timespec zero{0, 0};
    while (::sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_actions_[i], nullptr);
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  [[nodiscard]] const sigset_t& set() const { return set_; }
  [[nodiscard]] const sigset_t& old_mask() const { return old_mask_; }

 private:
  static void ignore(int) {}
  static constexpr std::array<int, 3> kSignals{SIGCHLD, SIGINT, SIGTERM};
  sigset_t set_{};
  sigset_t old_mask_{};
  std::array<struct sigaction, 3> old_actions_{};
};

struct Child {
  pid_t pid = -1;
  const SweepPoint* point = nullptr;
  Clock::time_point deadline;
};

class Runner {
 public:
  Runner(const SweepSpec& spec, const SweepRunOptions& options) : spec_(spec), options_(options) {
    dir_ = options.out_dir.empty() ? fs::path("out") / spec.name : fs::path(options.out_dir);
    timeout_ = options.timeout.value_or(spec.timeout);
    jobs_ = options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
    executable_ = options.executable.empty() ? fs::read_symlink("/proc/self/exe").string() : options.executable;
    columns_ = sweep_columns(spec);
    csv_path_ = dir_ / (options.slice ? fmt::format("results-slice-{}-of-{}.csv", options.slice->index, options.slice->count)
                                      : std::string("results.csv"));
  }

  SweepRunResult run() {
    fs::create_directories(dir_ / "points");
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
      *options_.progress << fmt::format("sweep {}: {} point{}{}, {} to run, {} at a time, time limit {} → {}\n", spec_.name,
                                        result_.selected, result_.selected == 1 ? "" : "s",
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
      auto rows = parse_csv(read_text(csv_path_));
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
    std::string text = fs::exists(csv_path_) ? read_text(csv_path_) : std::string();
    csv_fd_ = ::open(csv_path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (csv_fd_ < 0) throw system_error("cannot open " + csv_path_.string());
    // A row cut short (the driver killed mid-write by SIGKILL, or a full disk) is dropped.
    const auto last_newline = text.rfind('\n');
    const std::size_t complete = last_newline == std::string::npos ? 0 : last_newline + 1;
    if (complete != text.size()) {
      text.resize(complete);
      if (::ftruncate(csv_fd_, static_cast<off_t>(complete)) != 0) throw system_error("cannot truncate " + csv_path_.string());
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
    for (const SweepPoint& point : spec_.points) index_of.emplace(point_id(point.index, spec_.points.size()), point.index);
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      const SourceLocation where{csv_path_.string(), static_cast<int>(r + 1), 1};
      const auto found = row.empty() ? index_of.end() : index_of.find(row[0]);
      if (row.size() != columns_.size() || found == index_of.end())
        throw InputError(where, fmt::format("not a row of this sweep (point '{}'): use another --out", row.empty() ? "" : row[0]));
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
    SignalScope signals;
    start_ = Clock::now();
    std::vector<Child> running;
    try {
      run_loop(todo, signals, running);
    } catch (...) {
      for (const Child& child : running) ::kill(-child.pid, SIGKILL);
      for (const Child& child : running) reap(child.pid);
      throw;
    }
  }

  void run_loop(const std::vector<const SweepPoint*>& todo, const SignalScope& signals, std::vector<Child>& running) {
    std::size_t next = 0;
    while (true) {
      while (!result_.interrupted && running.size() < jobs_ && next < todo.size())
        running.push_back(launch(*todo[next++], signals.old_mask()));
      if (running.empty()) break;
      const auto nearest = std::min_element(running.begin(), running.end(), [](const Child& a, const Child& b) {
                             return a.deadline < b.deadline;
                           })->deadline;
      const auto wait = std::max(Clock::duration::zero(), nearest - Clock::now());
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
      const timespec limit{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
      const int signal = ::sigtimedwait(&signals.set(), nullptr, &limit);
      if (signal == SIGINT || signal == SIGTERM) {
        // Stop: kill what runs and write nothing for it; the rows written so far stay.
        result_.interrupted = true;
        for (const Child& child : running) ::kill(-child.pid, SIGKILL);
        for (const Child& child : running) reap(child.pid);
        running.clear();
        break;
      }
      // A SIGCHLD, a deadline, or EINTR/EAGAIN: look at every child either way (signals coalesce).
      for (auto it = running.begin(); it != running.end();) {
        int status = 0;
        const pid_t pid = ::waitpid(it->pid, &status, WNOHANG);
        if (pid == it->pid) {
          finish(*it, status, false);
          it = running.erase(it);
        } else if (Clock::now() >= it->deadline) {
          ::kill(-it->pid, SIGKILL);
          reap(it->pid);
          finish(*it, 0, true);
          it = running.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  static void reap(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }

  // fork + exec: `EXE run BASE --out DIR/points/ID --set key=value …` in a new process group, with
  // stdin from /dev/null and stdout/stderr in the point's directory.
  Child launch(const SweepPoint& point, const sigset_t& old_mask) {
    const fs::path point_dir = dir_ / "points" / point_id(point.index, spec_.points.size());
    fs::remove_all(point_dir);  // a killed earlier attempt must not leave a summary.json behind
    fs::create_directories(point_dir);
    std::vector<std::string> args{executable_, "run", spec_.base_path, "--out", point_dir.string()};
    for (const auto& [key, text] : point.assignments) {
      args.emplace_back("--set");
      args.push_back(key + "=" + text);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int out_fd = ::open((point_dir / "stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err_fd = ::open((point_dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (null_fd < 0 || out_fd < 0 || err_fd < 0) throw system_error("cannot create the files of " + point_dir.string());
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Child: only async-signal-safe calls until exec.
      ::setpgid(0, 0);
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(out_fd, STDOUT_FILENO);
      ::dup2(err_fd, STDERR_FILENO);
      ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      ::execv(argv[0], argv.data());
      static constexpr char kMessage[] = "error: cannot execute the dnnsim binary\n";
      [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
      ::_exit(127);
    }
    ::close(null_fd);
    ::close(out_fd);
    ::close(err_fd);
    if (pid < 0) throw system_error("cannot fork");
    ::setpgid(pid, pid);  // also here, so that a kill right after fork reaches the group
    const auto limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_.value()));
    return Child{pid, &point, Clock::now() + limit};
  }

  void finish(const Child& child, int wait_status, bool timed_out) {
    const SweepPoint& point = *child.point;
    const std::string id = point_id(point.index, spec_.points.size());
    const fs::path point_dir = dir_ / "points" / id;
    std::string status;
    std::string error;
    bool read_metrics = false;
    if (timed_out) {
      status = "timeout";
      error = fmt::format("exceeded the time limit of {}", format_seconds(timeout_));
      ++result_.timed_out;
    } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
      status = "ok";
      read_metrics = true;
    } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 3) {
      status = "expectation_missed";
      error = first_line(read_text(point_dir / "stdout.txt"),
                         [](const std::string& l) { return l.find("MISS") != std::string::npos; });
      read_metrics = true;
    } else {
      status = "failed";
      error = error_line(read_text(point_dir / "stderr.txt"));
      if (WIFSIGNALED(wait_status))
        error = fmt::format("killed by signal {} ({}){}", WTERMSIG(wait_status), ::strsignal(WTERMSIG(wait_status)),
                            error.empty() ? "" : ": " + error);
      else if (error.empty())
        error = fmt::format("exit code {}", WEXITSTATUS(wait_status));
    }
    std::vector<std::string> metrics(spec_.metrics.size());
    if (read_metrics) {
      nlohmann::ordered_json summary;
      try {
        summary = nlohmann::ordered_json::parse(read_text(point_dir / "summary.json"));
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
    const auto manifest = nlohmann::json::parse(read_text(manifest_path));
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
    if (std::regex_match(name, match, slice_name))
      slices.emplace_back(std::stoul(match[2].str()), std::stoul(match[1].str()), entry.path());
  }
  std::sort(slices.begin(), slices.end());
  for (const auto& [count, index, path] : slices) inputs.push_back(path);

  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < total; ++i) index_of.emplace(point_id(i, total), i);
  std::vector<std::optional<std::vector<std::string>>> rows(total);
  for (const fs::path& path : inputs) {
    const auto parsed = parse_csv(read_text(path));
    if (parsed.empty()) continue;
    if (parsed.front() != columns)
      throw InputError(SourceLocation{path.string(), 1, 1},
                       fmt::format("the columns differ from sweep.json's ({}): a slice of another sweep?",
                                   fmt::join(columns, ",")));
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
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  bool field_started = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(std::move(field));
      rows.push_back(std::move(row));
      row.clear();
      field.clear();
      field_started = false;
    } else {
      field += c;
      field_started = true;
    }
  }
  return rows;  // anything after the last line end is an unterminated row: dropped
}

}  // namespace dnnsim
