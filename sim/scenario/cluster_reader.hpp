// The `cluster:` and `calibration:` sections of a scenario (docs/scenarios.md, docs/hardware.md):
// node types from the hardware catalog with their overrides, the nodes, the interconnect (one
// switch, a leaf-spine, or explicit links and routes), and calibration tables for the node types'
// GPUs. Every problem goes to the reader's sink, located at its key.
#pragma once

#include <yaml-cpp/yaml.h>

#include "models/common/yaml_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

[[nodiscard]] Cluster read_cluster(YamlReader& reader, const YAML::Node& node);

// `calibration: shipped` (the tables of data/calibration/ for the GPUs that have one), a table file,
// or a list of them; each table applies to the node types whose GPU it names.
void read_calibration(YamlReader& reader, const YAML::Node& node, Cluster& cluster);

}  // namespace dnnsim
