#include "planners/jobs/interference.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "models/common/diagnostics.hpp"
#include "planners/jobs/measured_speed.hpp"

namespace dnnsim {

namespace {
// The one-GPU job type a key of Gavel's names, as traces and the speed model name it, or nothing for
// another scale.
std::optional<std::string> single_gpu_type(const std::string& key) {
  const std::optional<GavelJobKey> job = parse_gavel_job_key(key);
  if (!job || job->scale != 1) return std::nullopt;
  return job->type;
}

std::vector<ColocatedPair> pairs_of(const nlohmann::json& table) {
  std::vector<ColocatedPair> pairs;
  for (const auto& [victim_key, row] : table.items()) {
    const auto victim = single_gpu_type(victim_key);
    if (!victim) continue;  // read_gavel_json checked the rest: a row is an object with a rate at "null"
    const double solo = row["null"].get<double>();
    if (!(solo > 0.0)) continue;
    for (const auto& [aggressor_key, both] : row.items()) {
      const auto aggressor = single_gpu_type(aggressor_key);
      if (!aggressor) continue;
      const double shared = both[0].get<double>();
      // A zero co-located rate is Gavel's marker for a pair that did not fit together, not a slowdown.
      if (shared > 0.0) pairs.push_back({*victim, *aggressor, solo / shared});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const ColocatedPair& a, const ColocatedPair& b) {
    return std::tie(a.victim, a.aggressor) < std::tie(b.victim, b.aggressor);
  });
  return pairs;
}
}  // namespace

std::vector<ColocatedPair> read_gavel_colocated_pairs(const std::string& throughputs_json,
                                                      const std::string& gpu_type) {
  const nlohmann::json root = read_gavel_json(throughputs_json);
  if (!root.contains(gpu_type))
    throw InputError(SourceLocation{throughputs_json}, fmt::format("no table '{}' of job types", gpu_type));
  return pairs_of(root[gpu_type]);
}

std::map<std::string, std::vector<ColocatedPair>> read_gavel_colocated_tables(const std::string& throughputs_json) {
  const nlohmann::json root = read_gavel_json(throughputs_json);
  std::map<std::string, std::vector<ColocatedPair>> tables;
  for (const auto& [name, table] : root.items())
    if (name.find("_unconsolidated") == std::string::npos) tables.emplace(name, pairs_of(table));
  return tables;
}

InterferenceModel InterferenceModel::fit(const std::vector<ColocatedPair>& pairs) {
  if (pairs.empty()) throw std::invalid_argument("InterferenceModel::fit needs at least one pair");
  std::map<std::string, int> victims, aggressors;
  for (const auto& pair : pairs) {
    victims.emplace(pair.victim, 0);
    aggressors.emplace(pair.aggressor, 0);
  }
  int column = 0;
  for (auto& entry : victims) entry.second = column++;
  for (auto& entry : aggressors) entry.second = column++;
  Eigen::MatrixXd design = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(pairs.size()), column);
  Eigen::VectorXd target(static_cast<Eigen::Index>(pairs.size()));
  for (std::size_t row = 0; row < pairs.size(); ++row) {
    const auto r = static_cast<Eigen::Index>(row);
    design(r, victims.at(pairs[row].victim)) = 1.0;
    design(r, aggressors.at(pairs[row].aggressor)) = 1.0;
    target(r) = std::log(pairs[row].slowdown);
  }
  const Eigen::VectorXd solution = design.completeOrthogonalDecomposition().solve(target);
  InterferenceModel model;
  for (const auto& [name, index] : victims) model.sensitivity_[name] = solution(index);
  for (const auto& [name, index] : aggressors) model.pressure_[name] = solution(index);
  for (const auto& entry : model.sensitivity_)
    model.mean_sensitivity_ += entry.second / static_cast<double>(victims.size());
  for (const auto& entry : model.pressure_)
    model.mean_pressure_ += entry.second / static_cast<double>(aggressors.size());
  return model;
}

bool InterferenceModel::knows(const std::string& job_type) const {
  return sensitivity_.count(job_type) > 0 && pressure_.count(job_type) > 0;
}

double InterferenceModel::slowdown(const std::string& victim, const std::vector<std::string>& co_runners) const {
  const auto found = sensitivity_.find(victim);
  const double sensitivity = found == sensitivity_.end() ? mean_sensitivity_ : found->second;
  double slowdown = 1.0;
  for (const auto& other : co_runners) {
    const auto pressure = pressure_.find(other);
    slowdown += std::exp(sensitivity + (pressure == pressure_.end() ? mean_pressure_ : pressure->second)) - 1.0;
  }
  return slowdown;
}

double InterferenceModel::sensitivity(const std::string& job_type) const {
  const auto found = sensitivity_.find(job_type);
  return std::exp((found == sensitivity_.end() ? mean_sensitivity_ : found->second) + mean_pressure_) - 1.0;
}

double InterferenceModel::pressure(const std::string& job_type) const {
  const auto found = pressure_.find(job_type);
  return std::exp(mean_sensitivity_ + (found == pressure_.end() ? mean_pressure_ : found->second)) - 1.0;
}

PairSplit split_pairs(const std::vector<ColocatedPair>& pairs, std::size_t stride) {
  PairSplit split;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    (stride > 0 && i % stride == stride - 1 ? split.held_out : split.train).push_back(pairs[i]);
  return split;
}

InterferenceError evaluate(const InterferencePredictor& model, const std::vector<ColocatedPair>& pairs) {
  InterferenceError error;
  double squared = 0.0;
  for (const auto& pair : pairs) {
    if (!model.knows(pair.victim) || !model.knows(pair.aggressor)) continue;
    const double predicted = model.slowdown(pair.victim, {pair.aggressor});
    error.mean_abs_relative += std::abs(predicted - pair.slowdown) / pair.slowdown;
    squared += (predicted - pair.slowdown) * (predicted - pair.slowdown);
    ++error.pairs;
  }
  if (error.pairs > 0) {
    error.mean_abs_relative /= static_cast<double>(error.pairs);
    error.rmse = std::sqrt(squared / static_cast<double>(error.pairs));
  }
  return error;
}

}  // namespace dnnsim
