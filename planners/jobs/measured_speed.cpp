#include "planners/jobs/measured_speed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "models/common/input_file.hpp"
#include "models/common/located_csv.hpp"
#include "models/common/parse_number.hpp"
#include "models/common/yaml_reader.hpp"
#include "planners/jobs/interference.hpp"

namespace dnnsim {
namespace {

// Linear in local batch among samples sorted by batch, clamped at both ends; above the largest
// measured batch, gradient accumulation (see the header).
IterationCost interpolate(const std::vector<PolluxSpeedModel::Sample>& samples, double local_bsz) {
  const double largest = samples.back().local_bsz;
  double steps = 1.0;
  if (local_bsz > largest) {
    steps = std::ceil(local_bsz / largest - 1e-9);
    local_bsz = local_bsz / steps;
  }
  double step = samples.front().step, sync = samples.front().sync;
  if (local_bsz >= largest) {
    step = samples.back().step;
    sync = samples.back().sync;
  } else if (local_bsz > samples.front().local_bsz) {
    auto hi = std::upper_bound(samples.begin(), samples.end(), local_bsz,
                               [](double b, const PolluxSpeedModel::Sample& s) { return b < s.local_bsz; });
    auto lo = hi - 1;
    const double t = (local_bsz - lo->local_bsz) / (hi->local_bsz - lo->local_bsz);
    step = lo->step + t * (hi->step - lo->step);
    sync = lo->sync + t * (hi->sync - lo->sync);
  }
  // step_time is the whole iteration, its sync included (sync ≤ step in every table: e.g. cifar10 on
  // 6 nodes, step 0.141 s = 1-GPU compute 0.043 s + sync 0.099 s); accumulated micro-steps add compute only.
  const double compute = std::max(0.0, step - sync);
  return IterationCost{Seconds(compute * steps), Seconds(sync), Bytes(0.0)};
}

IterationCost mix(const IterationCost& a, const IterationCost& b, double t) {
  return IterationCost{a.compute + (b.compute - a.compute) * t, a.sync + (b.sync - a.sync) * t, Bytes(0.0)};
}

// Bracketing keys of `value` among sorted `keys`, and the weight of the upper one (clamped).
std::tuple<int, int, double> bracket(const std::vector<int>& keys, double value) {
  if (value <= keys.front()) return {keys.front(), keys.front(), 0.0};
  if (value >= keys.back()) return {keys.back(), keys.back(), 0.0};
  auto hi = std::upper_bound(keys.begin(), keys.end(), static_cast<int>(std::floor(value)));
  if (hi == keys.end()) return {keys.back(), keys.back(), 0.0};
  const int upper = *hi, lower = *(hi - 1);
  return {lower, upper, (value - lower) / static_cast<double>(upper - lower)};
}

std::string sorted_digits(std::string digits) {
  std::sort(digits.begin(), digits.end());
  return digits;
}

}  // namespace

PolluxSettings read_pollux_settings(const std::string& csv, const std::vector<std::string>& applications) {
  DiagnosticSink sink;
  PolluxSettings settings;
  const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(csv), csv, sink, ',');
  if (table.require({"application", "max_local_bsz", "fixed_batch_size", "max_replicas"}, sink)) {
    for (const LocatedCsvRow& row : table.rows()) {
      const auto name = table.name(row, "application", sink);
      PolluxApplicationSettings s;
      const auto given = [&](const char* column) { return !table.text(row, column, sink).value_or("").empty(); };
      const auto optional_number = [&](const char* column, double& into) {
        if (!given(column)) return;
        if (auto value = table.number(row, column, sink, 1.0)) into = *value;
      };
      optional_number("max_local_bsz", s.max_local_bsz);
      optional_number("fixed_batch_size", s.fixed_batch_size);
      if (given("max_replicas"))  // a count: 2.5 replicas is a mistake, not 2
        if (auto replicas = table.integer(row, "max_replicas", sink, 1)) s.max_replicas = *replicas;
      if (!name) continue;
      // A row for an application without tables would leave the one meant without its settings.
      if (std::find(applications.begin(), applications.end(), *name) == applications.end())
        sink.error(table.where(row, table.optional_field(row, "application")),
                   fmt::format("no Pollux throughput table for application '{}'{}", *name,
                               suggestion_suffix(*name, applications)));
      settings[*name] = s;
    }
  }
  sink.throw_if_any();
  return settings;
}

PolluxMicroSteps split_local_batch(double local, double largest_local, bool at_least_one) {
  int accum = static_cast<int>(std::ceil(local / largest_local - kPolluxRounding)) - 1;
  if (at_least_one) accum = std::max(accum, 1);
  return PolluxMicroSteps{static_cast<int>(std::ceil(local / (accum + 1) - kPolluxRounding)), accum};
}

std::size_t PolluxSpeedModel::Application::epochs() const {
  std::size_t epochs = validation.front().progress.size();
  for (const auto& v : validation) epochs = std::min(epochs, v.progress.size());
  return epochs;
}

double PolluxSpeedModel::Application::epoch_end(std::size_t e) const {
  double end = 1e300;
  for (const auto& v : validation) end = std::min(end, v.progress[e]);
  return end;
}

namespace {

// The measured batches around `batch` and the weight t of the upper one: applications.py interpolates
// linearly in the batch between them and clamps outside the measured range (then lo = hi, t = 0).
struct BatchBracket {
  const PolluxSpeedModel::Validation* lo;
  const PolluxSpeedModel::Validation* hi;
  double t;
};

BatchBracket bracket(const std::vector<PolluxSpeedModel::Validation>& v, double batch) {
  if (batch <= v.front().batch) return {&v.front(), &v.front(), 0.0};
  if (batch >= v.back().batch) return {&v.back(), &v.back(), 0.0};
  const auto hi = std::upper_bound(v.begin(), v.end(), batch, [](double b, const auto& t) { return b < t.batch; });
  const auto lo = hi - 1;
  return {&*lo, &*hi, (batch - lo->batch) / (hi->batch - lo->batch)};
}

}  // namespace

PolluxSpeedModel::GradStats PolluxSpeedModel::Application::grad_stats(double batch, int epoch) const {
  const auto e = static_cast<std::size_t>(epoch);
  const auto at = [&](const Validation& table) {
    const std::size_t row = std::min(e, table.grad_sqr.size() - 1);
    return GradStats{table.grad_sqr[row], table.grad_var[row]};
  };
  const BatchBracket b = bracket(validation, batch);
  if (b.lo == b.hi) return at(*b.lo);
  const GradStats lo = at(*b.lo), hi = at(*b.hi);
  return GradStats{lo.sqr + b.t * (hi.sqr - lo.sqr), lo.var + b.t * (hi.var - lo.var)};
}

double PolluxSpeedModel::Application::iterations_after(double batch, std::size_t epoch) const {
  const BatchBracket b = bracket(validation, batch);
  if (b.lo == b.hi) return b.lo->iteration[epoch];
  return b.lo->iteration[epoch] + b.t * (b.hi->iteration[epoch] - b.lo->iteration[epoch]);
}

double PolluxSpeedModel::Application::gain(double batch, const GradStats& s) const {
  const double scale = batch / validation.front().batch;
  const double denominator = s.var / scale + s.sqr;
  return denominator > 0 ? (s.var + s.sqr) / denominator : 1.0;
}

PolluxMicroSteps PolluxSpeedModel::Application::fixed_batch_steps(double batch, int replicas,
                                                                  double largest_local) const {
  const double local = std::ceil(batch / replicas - kPolluxRounding);
  PolluxMicroSteps steps = split_local_batch(local, largest_local, replicas == 1 && batch > validation.front().batch);
  steps.atomic = std::min(steps.atomic, static_cast<int>(validation.back().batch / (replicas * (steps.accum + 1))));
  return steps;
}

double PolluxSpeedModel::largest_local(const JobRecord& job, const PolluxSettings& settings) const {
  const double measured = application(job).max_local_bsz;
  const auto it = settings.find(job.model);
  const double limit = it == settings.end() ? 0.0 : it->second.max_local_bsz;
  return limit > 0 ? std::min(limit, measured) : measured;
}

PolluxSpeedModel::PolluxSpeedModel(const std::string& throughput_dir) {
  namespace fs = std::filesystem;
  DiagnosticSink sink;
  if (std::error_code refused; !fs::is_directory(throughput_dir, refused))
    throw InputError(SourceLocation{throughput_dir}, "not a directory of Pollux throughput tables");
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(throughput_dir))
    if (entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  for (const fs::path& folder : folders) {
    Application app;
    const std::size_t problems_before = sink.diagnostics().size();
    const std::string placements_file = (folder / "placements.csv").string();
    const LocatedCsv placements = LocatedCsv::parse(LocatedCsv::read_file(placements_file), placements_file, sink, ',');
    if (placements.require({"placement", "local_bsz", "step_time", "sync_time"}, sink))
      for (const LocatedCsvRow& row : placements.rows()) {
        auto where = placements.name(row, "placement", sink);
        // The artifact's placement: one digit per node, the replicas on it; any other key would never
        // be looked up, its rows silently unused.
        if (where && !std::all_of(where->begin(), where->end(), [](char c) { return c >= '1' && c <= '9'; })) {
          sink.error(placements.where(row, placements.optional_field(row, "placement")),
                     fmt::format("placement: expected the replicas on each node as digits 1-9 (e.g. 1422), "
                                 "found '{}'",
                                 *where));
          where.reset();
        }
        auto bsz = placements.number(row, "local_bsz", sink, 1.0);
        auto step = placements.number(row, "step_time", sink, 0.0);
        auto sync = placements.number(row, "sync_time", sink, 0.0);
        if (where && bsz && step && sync) {
          app.placements[*where].push_back({*bsz, *step, *sync});
          app.min_local_bsz = app.min_local_bsz > 0 ? std::min(app.min_local_bsz, *bsz) : *bsz;
          app.max_local_bsz = std::max(app.max_local_bsz, *bsz);
        }
      }
    const std::string scal_file = (folder / "scalability.csv").string();
    const LocatedCsv scal = LocatedCsv::parse(LocatedCsv::read_file(scal_file), scal_file, sink, ',');
    if (scal.require({"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}, sink))
      for (const LocatedCsvRow& row : scal.rows()) {
        auto nodes = scal.integer(row, "num_nodes", sink, 1);
        auto replicas = scal.integer(row, "num_replicas", sink, 1);
        auto bsz = scal.number(row, "local_bsz", sink, 1.0);
        auto step = scal.number(row, "step_time", sink, 0.0);
        auto sync = scal.number(row, "sync_time", sink, 0.0);
        if (nodes && replicas && bsz && step && sync)
          app.scalability[{static_cast<int>(*nodes), static_cast<int>(*replicas)}].push_back({*bsz, *step, *sync});
      }
    std::vector<fs::path> validations;
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.path().filename().string().rfind("validation-", 0) == 0) validations.push_back(entry.path());
    std::sort(validations.begin(), validations.end());
    for (const fs::path& file : validations) {
      // The batch size is the file name's: std::stod threw past every handler on "validation-.csv" or
      // "validation-1e999.csv" and read "validation-64x.csv" as 64 (found reading the reader for the
      // 2026-12-01 fuzz campaign; the fuzzer does not write files). A whole positive number or an error.
      const std::string stem = file.stem().string();
      const std::string digits = stem.substr(std::string("validation-").size());
      const double batch = parse_number<double>(digits).value_or(0);
      if (!(batch > 0)) {
        sink.error(SourceLocation{file.string()},
                   fmt::format("expected validation-BATCH.csv, BATCH the positive batch size it was measured at, "
                               "got '{}'",
                               file.filename().string()));
        continue;
      }
      const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(file.string()), file.string(), sink, ',');
      if (!table.require({"progress", "iteration", "grad_sqr", "grad_var"}, sink) || table.rows().empty()) continue;
      if (auto iterations = table.number(table.rows().back(), "iteration", sink, 1.0))
        app.target.emplace_back(batch, *iterations);
      PolluxSpeedModel::Validation epochs{batch, {}, {}, {}, {}};
      for (const LocatedCsvRow& row : table.rows()) {
        const auto progress = table.number(row, "progress", sink, 0.0);
        const auto iteration = table.number(row, "iteration", sink, 0.0);
        const auto sqr = table.number(row, "grad_sqr", sink, 0.0);
        const auto var = table.number(row, "grad_var", sink, 0.0);
        if (!progress || !iteration || !sqr || !var) continue;
        epochs.progress.push_back(*progress);
        epochs.iteration.push_back(*iteration);
        epochs.grad_sqr.push_back(*sqr);
        epochs.grad_var.push_back(*var);
      }
      app.validation.push_back(std::move(epochs));
    }
    std::sort(app.target.begin(), app.target.end());
    std::sort(app.validation.begin(), app.validation.end(),
              [](const auto& a, const auto& b) { return a.batch < b.batch; });
    auto by_batch = [](const Sample& a, const Sample& b) { return a.local_bsz < b.local_bsz; };
    for (auto& [key, samples] : app.placements) std::sort(samples.begin(), samples.end(), by_batch);
    for (auto& [key, samples] : app.scalability) std::sort(samples.begin(), samples.end(), by_batch);
    if (app.placements.empty() || app.target.empty()) {
      // Only when its files were read without a problem: otherwise those problems say why.
      if (sink.diagnostics().size() == problems_before)
        sink.error(SourceLocation{folder.string()}, "no placements.csv rows or validation-*.csv files");
      continue;
    }
    auto& stored = applications_.emplace(folder.filename().string(), std::move(app)).first->second;
    for (const auto& [name, samples] : stored.placements)
      stored.by_multiset.emplace(sorted_digits(name), &samples);  // map order: smallest first
  }
  if (applications_.empty() && sink.empty()) sink.error(SourceLocation{throughput_dir}, "no application folders");
  sink.throw_if_any();
}

std::vector<std::string> PolluxSpeedModel::models() const {
  std::vector<std::string> names;
  for (const auto& [name, app] : applications_) names.push_back(name);
  return names;
}

const PolluxSpeedModel::Application& PolluxSpeedModel::application(const JobRecord& job) const {
  auto it = applications_.find(job.model);
  if (it == applications_.end())
    throw InputError(job.model_location(), fmt::format("no Pollux throughput table for application '{}'{}", job.model,
                                                       suggestion_suffix(job.model, models())));
  return it->second;
}

std::optional<double> PolluxSpeedModel::iterations_to_target(const JobRecord& job) const {
  const Application& app = application(job);
  const double batch = job.batch_size > 0 ? job.batch_size : app.target.front().first;
  if (tuned_.progress_work) return app.epoch_end(app.epochs() - 1);
  const auto& target = app.target;
  if (batch <= target.front().first) return target.front().second;
  if (batch >= target.back().first) return target.back().second;
  auto hi = std::upper_bound(target.begin(), target.end(), std::pair<double, double>{batch, 1e300});
  auto lo = hi - 1;
  const double t = (std::log2(batch) - std::log2(lo->first)) / (std::log2(hi->first) - std::log2(lo->first));
  return lo->second + t * (hi->second - lo->second);
}

void PolluxSpeedModel::set_gradient_bytes(const std::string& application, Bytes bytes, const SourceLocation& where) {
  auto it = applications_.find(application);
  if (it == applications_.end())
    throw InputError(where, fmt::format("no Pollux table for application '{}'{}", application,
                                        suggestion_suffix(application, models())));
  it->second.gradient_bytes = bytes;
}

IterationCost PolluxSpeedModel::iteration(const JobRecord& job, const Placement& placement,
                                          const std::vector<ServerInfo>&) const {
  IterationCost cost = table_iteration(job, placement);
  const double s = placement.servers();
  if (s > 1) cost.sync_bytes = application(job).gradient_bytes * (2.0 * (s - 1.0) / s);
  return cost;
}

std::vector<ProgressSegment> PolluxSpeedModel::progress_curve(const JobRecord& job, const Placement& placement,
                                                              double progress) const {
  if (!tuned_.progress_work) return {};
  const Application& app = application(job);
  const double step = table_iteration(job, placement).total().value();
  // The gain of the batch as run, r·atomic·(accum + 1): below B when the atomic batch is capped
  // (bert's 384 on 6 GPUs runs as 6·10·6 = 360).
  double batch = job.batch_size > 0 ? job.batch_size : app.target.front().first;
  if (tuned_.artifact_steps) {
    const PolluxMicroSteps steps = app.fixed_batch_steps(batch, placement.gpus(), largest_local(job, tuned_.settings));
    batch = static_cast<double>(placement.gpus()) * std::max(1, steps.atomic) * (steps.accum + 1);
  }
  std::vector<ProgressSegment> curve;
  for (std::size_t e = 0; e < app.epochs(); ++e)
    if (app.epoch_end(e) > progress)
      curve.push_back(
          ProgressSegment{app.epoch_end(e), app.gain(batch, app.grad_stats(batch, static_cast<int>(e))) / step});
  return curve;
}

double PolluxSpeedModel::iterations_left(const JobRecord& job, double done, double total) const {
  if (!tuned_.progress_work) return total - done;
  // optimus.py: get_iteration(B, last epoch) − get_iteration(B, epochs completed), at least 1.
  const Application& app = application(job);
  const double batch = job.batch_size > 0 ? job.batch_size : app.target.front().first;
  std::size_t completed = 0;
  while (completed + 1 < app.epochs() && app.epoch_end(completed) <= done) ++completed;
  if (completed + 1 >= app.epochs()) return 1.0;
  return app.iterations_after(batch, app.epochs() - 1) - app.iterations_after(batch, completed);
}

IterationCost PolluxSpeedModel::table_iteration(const JobRecord& job, const Placement& placement) const {
  const double batch = job.batch_size > 0 ? job.batch_size : application(job).target.front().first;
  if (!tuned_.artifact_steps) return measured(job, placement, batch / placement.gpus());
  const PolluxMicroSteps steps =
      application(job).fixed_batch_steps(batch, placement.gpus(), largest_local(job, tuned_.settings));
  // At least one sample per replica: more replicas than the batch has samples is a configuration the
  // artifact never runs (its interpolation would fail).
  IterationCost cost = measured(job, placement, std::max(1, steps.atomic));
  cost.compute = cost.compute * (steps.accum + 1.0);
  return cost;
}

IterationCost PolluxSpeedModel::measured(const JobRecord& job, const Placement& placement, double local_bsz) const {
  const Application& app = application(job);
  const int replicas = placement.gpus();
  std::string digits;
  for (const auto& [server, count] : placement.slices) digits += count < 10 ? static_cast<char>('0' + count) : '9';
  if (const auto it = app.by_multiset.find(sorted_digits(digits)); it != app.by_multiset.end())
    return interpolate(*it->second, local_bsz);
  // scalability.csv, multilinear in (nodes, replicas, local batch).
  std::vector<int> nodes_measured;
  for (const auto& [key2, samples] : app.scalability)
    if (nodes_measured.empty() || nodes_measured.back() != key2.first) nodes_measured.push_back(key2.first);
  if (nodes_measured.empty())
    throw InputError(job.where, fmt::format("Pollux table of '{}' has no measurement for placement {}", job.model,
                                            placement.to_string()));
  auto at_nodes = [&](int nodes) {
    std::vector<int> replica_keys;
    for (const auto& [key2, samples] : app.scalability)
      if (key2.first == nodes) replica_keys.push_back(key2.second);
    auto [r0, r1, tr] = bracket(replica_keys, replicas);
    return mix(interpolate(app.scalability.at({nodes, r0}), local_bsz),
               interpolate(app.scalability.at({nodes, r1}), local_bsz), tr);
  };
  auto [n0, n1, tn] = bracket(nodes_measured, std::min(placement.servers(), 16));
  return mix(at_nodes(n0), at_nodes(n1), tn);
}

std::string gavel_gpu_type(const std::string& catalog_name) {
  std::string type = catalog_name.substr(0, catalog_name.find('-'));
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
  return type;
}

std::optional<GavelJobKey> parse_gavel_job_key(const std::string& key) {
  // Python's repr of the tuple (job type, scale factor): "('ResNet-50 (batch size 64)', 2)".
  const auto quote_end = key.rfind("', ");
  if (key.size() < 8 || key.compare(0, 2, "('") != 0 || key.back() != ')' || quote_end == std::string::npos ||
      quote_end < 3)
    return std::nullopt;
  const auto scale = parse_number<int>(std::string_view(key).substr(quote_end + 3, key.size() - quote_end - 4));
  if (!scale || *scale < 1) return std::nullopt;
  return GavelJobKey{key.substr(2, quote_end - 2), *scale};
}

namespace {
// A problem of the throughputs file at a path of keys (an array index as its digits).
struct GavelProblem {
  std::vector<std::string> path;
  std::string message;
};

std::vector<GavelProblem> gavel_problems(const nlohmann::json& root) {
  std::vector<GavelProblem> problems;
  if (!root.is_object()) return {{{}, "expected an object of Gavel's tables, one per GPU type"}};
  const auto rate_problem = [](const nlohmann::json& rate) -> std::optional<std::string> {
    if (!rate.is_number()) return fmt::format("expected a throughput in steps/s, found {}", rate.dump());
    if (!(rate.get<double>() >= 0.0))
      return fmt::format("expected a throughput >= 0 steps/s (0: did not fit), found {}", rate.dump());
    return std::nullopt;
  };
  const std::string key_form = "expected a job key ('JOB TYPE', SCALE FACTOR) such as ('ResNet-50 (batch size 64)', 2)";
  for (const auto& [table, jobs] : root.items()) {
    // gavel_gpu_type's form: a catalog GPU's name before its first '-', in lower case.
    const std::string_view suffix = "_unconsolidated";
    const std::string_view type = std::string_view(table).ends_with(suffix)
                                      ? std::string_view(table).substr(0, table.size() - suffix.size())
                                      : std::string_view(table);
    if (type.empty() ||
        !std::all_of(type.begin(), type.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }) ||
        !(type[0] >= 'a' && type[0] <= 'z'))
      problems.push_back({{table},
                          fmt::format("expected a GPU type in lower case such as v100 (v100_unconsolidated: "
                                      "its jobs spread over servers), found '{}'",
                                      table)});
    if (!jobs.is_object()) {
      problems.push_back({{table}, "expected an object of job types"});
      continue;
    }
    for (const auto& [key, entry] : jobs.items()) {
      if (!parse_gavel_job_key(key)) problems.push_back({{table, key}, fmt::format("{}, found '{}'", key_form, key)});
      if (!entry.is_object() || !entry.contains("null")) {
        problems.push_back({{table, key}, "expected an object with the job's own rate at \"null\""});
        continue;
      }
      for (const auto& [other, rates] : entry.items()) {
        if (other == "null") {
          if (auto problem = rate_problem(rates)) problems.push_back({{table, key, other}, *problem});
          continue;
        }
        if (!parse_gavel_job_key(other))
          problems.push_back({{table, key, other}, fmt::format("{}, found '{}'", key_form, other)});
        else if (!rates.is_array() || rates.size() != 2)
          problems.push_back({{table, key, other}, "expected the pair's two rates [this job's, the other's]"});
        else
          for (std::size_t i = 0; i < 2; ++i)
            if (auto problem = rate_problem(rates[i]))
              problems.push_back({{table, key, other, std::to_string(i)}, *problem});
      }
    }
  }
  return problems;
}
}  // namespace

nlohmann::json read_gavel_json(const std::string& throughputs_json) {
  const std::string text = read_input_file(throughputs_json);
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw InputError(SourceLocation{throughputs_json}, fmt::format("not valid JSON: {}", error.what()));
  }
  const std::vector<GavelProblem> problems = gavel_problems(root);
  if (problems.empty()) return root;
  // Read again as YAML (JSON is YAML) to put every problem at its line and column: nlohmann::json keeps
  // no positions, and yaml-cpp reads the shipped 42,841 lines in 190 ms against 16, a cost paid only here.
  DiagnosticSink sink;
  YamlReader reader(throughputs_json, sink);
  const YAML::Node tree = reader.load_text(text);
  for (const GavelProblem& problem : problems) {
    // reset, not =: assigning to a node of the tree would overwrite it. Const lookups add no keys.
    YAML::Node at = tree;
    for (const std::string& step : problem.path) {
      if (!at.IsDefined()) break;
      const YAML::Node parent = at;
      at.reset(parent.IsSequence() ? parent[std::stoul(step)] : parent[step]);
    }
    if (at.IsDefined())
      reader.error(at, problem.message);
    else
      sink.error(SourceLocation{throughputs_json}, problem.message);
  }
  sink.throw_if_any();
  return root;
}

// Gavel's file is read and checked by read_gavel_json: every key below parses and every rate is a number.
GavelSpeedModel::GavelSpeedModel(const std::string& throughputs_json) {
  const nlohmann::json root = read_gavel_json(throughputs_json);
  for (const auto& [table, jobs] : root.items())
    for (const auto& [key, entry] : jobs.items()) {
      const GavelJobKey victim = *parse_gavel_job_key(key);
      const double solo = entry["null"].get<double>();
      steps_per_second_[table][{victim.type, victim.scale}] = solo;
      // Beside another single-GPU job: [victim's steps/s, the other's]; 0 marks a pair that did not fit.
      for (const auto& [other, both] : entry.items()) {
        if (other == "null" || victim.scale != 1) continue;
        const GavelJobKey aggressor = *parse_gavel_job_key(other);
        if (aggressor.scale == 1 && both[0].get<double>() > 0 && solo > 0)
          packed_[table][{victim.type, aggressor.type}] = solo / both[0].get<double>();
      }
    }
}

std::optional<double> GavelSpeedModel::packed_slowdown(const JobRecord& victim, const JobRecord& aggressor,
                                                       const std::string& gpu_type) const {
  const auto table = packed_.find(gavel_gpu_type(gpu_type));
  if (table == packed_.end()) return std::nullopt;
  const auto it = table->second.find({victim.model, aggressor.model});
  if (it == table->second.end()) return std::nullopt;
  return it->second;
}

void GavelSpeedModel::use_fitted_colocation() {
  for (auto& [table, pairs] : packed_) {
    std::vector<ColocatedPair> measured;
    for (const auto& [key, slowdown] : pairs) measured.push_back(ColocatedPair{key.first, key.second, slowdown});
    if (measured.empty()) continue;
    const InterferenceModel model = InterferenceModel::fit(measured);
    for (auto& [key, slowdown] : pairs) slowdown = model.slowdown(key.first, {key.second});
  }
}

std::vector<std::string> GavelSpeedModel::models() const {
  std::vector<std::string> names;
  for (const auto& [key, rate] : steps_per_second_.begin()->second)
    if (names.empty() || names.back() != key.first) names.push_back(key.first);
  return names;
}

IterationCost GavelSpeedModel::iteration(const JobRecord& job, const Placement& placement,
                                         const std::vector<ServerInfo>& servers) const {
  // Slowest GPU type of the placement, by the job's own throughput on each.
  const std::string suffix = placement.servers() > 1 ? "_unconsolidated" : "";
  double rate = 1e300;
  for (const auto& [server, count] : placement.slices) {
    auto table = steps_per_second_.find(gavel_gpu_type(servers[server].gpu_type) + suffix);
    if (table == steps_per_second_.end())
      throw InputError(job.where, fmt::format("Gavel throughputs have no GPU type '{}' (k80, p100, v100)",
                                              servers[server].gpu_type));
    auto it = table->second.find({job.model, placement.gpus()});
    if (it == table->second.end())
      throw InputError(job.model_location(),
                       fmt::format("Gavel throughputs have no job type '{}' at scale {}{}", job.model, placement.gpus(),
                                   suggestion_suffix(job.model, models())));
    rate = std::min(rate, it->second);
  }
  return IterationCost{Seconds(1.0 / rate), Seconds(0.0), Bytes(0.0)};
}

}  // namespace dnnsim
