// The `network:` section of a scenario (docs/scenarios.md, "Network conditions"): link conditions
// (a constant bandwidth, a schedule, a trace, a preemption process), background flows between GPUs
// and failure windows of links or hosts. Every problem goes to the reader's sink, located at its key.
#pragma once

#include <yaml-cpp/yaml.h>

#include "models/common/yaml_reader.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

// Link patterns are checked against the links of `layout`; null when the cluster has errors of its
// own (reported already), and then they are not checked.
[[nodiscard]] NetworkConditions read_network(YamlReader& reader, const YAML::Node& node, const Cluster& cluster,
                                             const PlatformLayout* layout);

}  // namespace dnnsim
