#include "planners/jobs/job_scheduler.hpp"

#include <fmt/format.h>

namespace dnnsim {

void SchedulerParams::set(const std::string& key, std::vector<double> values, SourceLocation where) {
  values_[key] = Value{std::move(values), std::move(where)};
}

double SchedulerParams::number(const std::string& key, double fallback, double min, double max) const {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (it->second.numbers.size() != 1)
    throw InputError(it->second.where, fmt::format("scheduler option '{}' expects one number", key));
  const double value = it->second.numbers.front();
  if (value < min || value > max)
    throw InputError(it->second.where, fmt::format("scheduler option '{}' = {} is outside [{}, {}]", key, value, min, max));
  return value;
}

std::vector<double> SchedulerParams::list(const std::string& key, std::vector<double> fallback) const {
  read_.insert(key);
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second.numbers;
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
