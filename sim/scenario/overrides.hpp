// `--set` overrides of a scenario (docs/scenarios.md, "Overrides"): "a.b.0.c=value" sets a key of the
// YAML tree before it is read, the value read as YAML ("8", "\"25Gbps\"", "[1, 2]"), creating the
// sections on the way; "~a.b.c" removes a map key (Hydra's deletion syntax).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>
#include <vector>

#include "models/common/diagnostics.hpp"

namespace dnnsim {

// Applies `overrides` to `root` in order. Returns each value put into the tree with its origin
// ("--set a.b=1"), so that problems the reader finds with it are located at the assignment.
// Malformed overrides go to `sink`, located at "--set ASSIGNMENT".
[[nodiscard]] std::vector<std::pair<YAML::Node, std::string>> apply_overrides(YAML::Node root,
                                                                              const std::vector<std::string>& overrides,
                                                                              DiagnosticSink& sink);

}  // namespace dnnsim
