// `--set` overrides (see overrides.hpp).
#include "sim/scenario/overrides.hpp"

#include <fmt/format.h>

#include <optional>

#include "models/common/parse_number.hpp"

namespace dnnsim {
namespace {

std::vector<std::string> split_key_path(const std::string& path) {
  std::vector<std::string> keys;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    keys.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return keys;
}

// A list index: digits only. std::stoul read "1abc" as 1, " 1" and "+1" as 1 and "-1" as 2^64 − 1, so
// `cluster.nodes.0x.count=4` set the first group's count silently (found reading the reader for the
// 2026-12-01 fuzz campaign).
std::optional<std::size_t> list_index(const std::string& key) { return parse_number<std::size_t>(key); }

// Removes the map key "~a.b.c" names (Hydra's deletion syntax), so that the scenario reads as if
// the file did not have it; a path that leads nowhere leaves the tree as it is (removing what is not
// there changes nothing).
void remove_key(YAML::Node root, const std::string& removal, DiagnosticSink& sink) {
  const SourceLocation where{"--set " + removal, 0, 0};
  const std::string path = removal.substr(1);
  if (path.empty() || path.find('=') != std::string::npos) {
    sink.error(where, "expected ~KEY.PATH (removes the key) or KEY.PATH=VALUE");
    return;
  }
  const std::vector<std::string> keys = split_key_path(path);
  YAML::Node current = root;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    // Read through a const handle: a missing key must not be created on the way.
    // (A missing key gives yaml-cpp's invalid node, which may be copied and asked IsDefined, not
    // assigned from.)
    const YAML::Node& here = current;
    if (!here.IsMap() && !here.IsSequence()) return;
    std::size_t index = 0;
    if (here.IsSequence()) {
      const std::optional<std::size_t> parsed = list_index(keys[i]);
      if (!parsed || *parsed >= here.size()) return;
      index = *parsed;
    }
    const YAML::Node next = here.IsSequence() ? here[index] : here[keys[i]];
    if (!next.IsDefined()) return;
    current.reset(next);
  }
  if (current.IsSequence()) {
    const std::string list = keys.size() > 1 ? keys[keys.size() - 2] : path;
    sink.error(where, fmt::format("'{}' is a list: ~ removes a map key; set the whole list instead", list));
    return;
  }
  if (current.IsMap()) current.remove(keys.back());
}

// Sets "a.b.0.c=value" in the tree; the value is read as YAML ("8", "\"25Gbps\"", "[1, 2]").
// Returns the value put into the tree, so that problems with it can be located at the assignment.
std::optional<YAML::Node> apply_override(YAML::Node root, const std::string& assignment, DiagnosticSink& sink) {
  const SourceLocation where{"--set " + assignment, 0, 0};
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    sink.error(where, "expected KEY.PATH=VALUE");
    return std::nullopt;
  }
  const std::string path = assignment.substr(0, equals);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(equals + 1));
  } catch (const YAML::Exception& e) {
    sink.error(where, fmt::format("the value is not valid YAML: {}", e.msg));
    return std::nullopt;
  }
  const std::vector<std::string> keys = split_key_path(path);
  // yaml-cpp nodes are handles: walk with reset() so that assignment replaces the leaf in place.
  YAML::Node current = root;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string parent = i == 0 ? std::string("the scenario") : "'" + keys[i - 1] + "'";
    const bool last = i + 1 == keys.size();
    YAML::Node next;
    if (current.IsSequence()) {
      const std::optional<std::size_t> parsed = list_index(keys[i]);
      if (!parsed) {
        sink.error(where, fmt::format("{} is a list; expected an index, got '{}'", parent, keys[i]));
        return std::nullopt;
      }
      const std::size_t index = *parsed;
      if (index >= current.size()) {
        sink.error(where, fmt::format("index {} is out of range ({} entries)", index, current.size()));
        return std::nullopt;
      }
      next = current[index];
    } else if (current.IsMap() || current.IsNull() || !current.IsDefined()) {  // undefined: a section to create
      next = current[keys[i]];
    } else {
      sink.error(where, fmt::format("cannot set '{}': {} is a scalar", path, parent));
      return std::nullopt;
    }
    if (last)
      next = value;
    else
      current.reset(next);
  }
  return value;
}

}  // namespace

std::vector<std::pair<YAML::Node, std::string>> apply_overrides(YAML::Node root,
                                                                const std::vector<std::string>& overrides,
                                                                DiagnosticSink& sink) {
  std::vector<std::pair<YAML::Node, std::string>> values;
  for (const std::string& assignment : overrides) {
    if (assignment.starts_with('~')) {
      remove_key(root, assignment, sink);
      continue;
    }
    if (auto value = apply_override(root, assignment, sink)) values.emplace_back(*value, "--set " + assignment);
  }
  return values;
}

}  // namespace dnnsim
