// Which of dnnsim's YAML inputs a file is, told by its top-level keys, so that a command taking any of
// them reads each as what it is (`dnnsim validate`, `dnnsim regress`): a comparison file has
// `comparison:` (docs/regress.md), a sweep `axes:` or `sweep:` (docs/sweeps.md), and anything else is
// a scenario (docs/scenarios.md) — also a file that does not parse, whose reader then says where.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace dnnsim {

enum class InputFileKind { scenario, comparison, sweep };

[[nodiscard]] InputFileKind input_file_kind(const YAML::Node& root);
[[nodiscard]] InputFileKind input_file_kind(const std::string& path);

}  // namespace dnnsim
