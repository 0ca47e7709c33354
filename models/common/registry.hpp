// One named registry per extension point (planner, schedule, collective algorithm, …), modelled on
// SimGrid's module.hpp: entries are added explicitly from one `register_builtin_*` function (static
// self-registration is dropped by static libraries), each with a one-line description and the paper
// it comes from, and an unknown name is an error that lists the valid ones. An entry may declare its
// options (options.hpp): option_reader.hpp reads and checks them for it, `dnnsim list KIND --options`
// prints them.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/options.hpp"

namespace dnnsim {

// An entry's name and option schema: what the option reader needs of a registry, whatever its values.
struct EntryOptions {
  std::string name;
  std::shared_ptr<const OptionSchema> schema;
};

template <class Value>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string description;  // one line, states the model or formula
    std::string source;       // paper and section, or "dnnsim"
    Value value;
    std::shared_ptr<const OptionSchema> options;  // never null: empty when the entry has none

    // Every option at its default, owned by this entry (messages name it: "schedule 'kfkb'").
    [[nodiscard]] Options defaults(const std::string& what) const {
      return Options(options, fmt::format("{} '{}'", what, name));
    }
  };

  explicit Registry(std::string what) : what_(std::move(what)) {}

  void add(std::string name, std::string description, std::string source, Value value, OptionSchema options = {}) {
    if (find(name) != nullptr) throw std::logic_error(fmt::format("{} '{}' registered twice", what_, name));
    entries_.push_back(Entry{std::move(name), std::move(description), std::move(source), std::move(value),
                             std::make_shared<const OptionSchema>(std::move(options))});
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
  [[nodiscard]] std::vector<EntryOptions> catalog() const {
    std::vector<EntryOptions> result;
    for (const Entry& entry : entries_) result.push_back(EntryOptions{entry.name, entry.options});
    return result;
  }
  // The named entry's options at their defaults. @throw InputError for an unknown name.
  [[nodiscard]] Options defaults(const std::string& name, const SourceLocation& where = {}) const {
    return at(name, where).defaults(what_);
  }
  [[nodiscard]] const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::vector<Entry> entries_;  // in registration order, so listings are deterministic
};

}  // namespace dnnsim
