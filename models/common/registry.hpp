// One named registry per extension point (planner, schedule, collective algorithm, …), modelled on
// SimGrid's module.hpp: entries are added explicitly from one `register_builtin_*` function (static
// self-registration is dropped by static libraries), each with a one-line description and the paper
// it comes from, and an unknown name is an error that lists the valid ones.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"

namespace dnnsim {

template <class Value>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string description;  // one line, states the model or formula
    std::string source;       // paper and section, or "dnnsim"
    Value value;
  };

  explicit Registry(std::string what) : what_(std::move(what)) {}

  void add(std::string name, std::string description, std::string source, Value value) {
    if (find(name) != nullptr) throw std::logic_error(fmt::format("{} '{}' registered twice", what_, name));
    entries_.push_back(Entry{std::move(name), std::move(description), std::move(source), std::move(value)});
  }

  [[nodiscard]] const Entry* find(const std::string& name) const {
    for (const Entry& entry : entries_)
      if (entry.name == name) return &entry;
    return nullptr;
  }

  // @throw InputError "unknown <what> 'x'; did you mean 'y'?" at `where`.
  [[nodiscard]] const Entry& at(const std::string& name, const SourceLocation& where = {}) const {
    if (const Entry* entry = find(name)) return *entry;
    throw InputError(where, fmt::format("unknown {} '{}'{}", what_, name, suggestion_suffix(name, names())));
  }

  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (const Entry& entry : entries_) result.push_back(entry.name);
    return result;
  }

  [[nodiscard]] const std::vector<Entry>& entries() const { return entries_; }
  [[nodiscard]] const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::vector<Entry> entries_;  // in registration order, so listings are deterministic
};

}  // namespace dnnsim
