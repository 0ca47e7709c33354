#include "planners/jobs/job_scheduler.hpp"

#include <fmt/format.h>

namespace dnnsim {

void SchedulerParams::set(const std::string& key, std::vector<double> values, SourceLocation where) {
  values_[key] = Value{std::move(values), std::nullopt, std::move(where)};
}

void SchedulerParams::set_file(const std::string& key, std::string path, SourceLocation where) {
  values_[key] = Value{{}, std::move(path), std::move(where)};
}

std::optional<std::string> SchedulerParams::file(const std::string& key) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  if (!it->second.file) throw InputError(it->second.where, fmt::format("scheduler option '{}' expects a file path", key));
  return it->second.file;
}

double SchedulerParams::number(const std::string& key, double fallback, double min, double max) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (it->second.file || it->second.numbers.size() != 1)
    throw InputError(it->second.where, fmt::format("scheduler option '{}' expects one number", key));
  const double value = it->second.numbers.front();
  if (value < min || value > max)
    throw InputError(it->second.where, fmt::format("scheduler option '{}' = {} is outside [{}, {}]", key, value, min, max));
  return value;
}

std::vector<double> SchedulerParams::list(const std::string& key, std::vector<double> fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (it->second.file) throw InputError(it->second.where, fmt::format("scheduler option '{}' expects numbers", key));
  return it->second.numbers;
}

std::vector<std::string> SchedulerParams::unused() const {
  std::vector<std::string> result;
  for (const auto& [key, value] : values_)
    if (!read_.count(key)) result.push_back(key);
  return result;
}

SourceLocation SchedulerParams::where(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? SourceLocation{} : it->second.where;
}

const SchedulerRegistry& builtin_schedulers() {
  static const SchedulerRegistry registry = [] {
    SchedulerRegistry result("scheduler");
    register_builtin_schedulers(result);
    return result;
  }();
  return registry;
}

}  // namespace dnnsim
