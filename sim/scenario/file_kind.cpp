#include "sim/scenario/file_kind.hpp"

#include <string_view>

namespace dnnsim {
namespace {

bool has_key(const YAML::Node& map, std::string_view key) {
  for (const auto& item : map)
    if (item.first.IsScalar() && item.first.Scalar() == key) return true;
  return false;
}

}  // namespace

InputFileKind input_file_kind(const YAML::Node& root) {
  if (!root.IsMap()) return InputFileKind::scenario;
  if (has_key(root, "comparison")) return InputFileKind::comparison;
  if (has_key(root, "axes") || has_key(root, "sweep")) return InputFileKind::sweep;
  return InputFileKind::scenario;
}

InputFileKind input_file_kind(const std::string& path) {
  try {
    return input_file_kind(YAML::LoadFile(path));
  } catch (const YAML::Exception&) {
    return InputFileKind::scenario;
  }
}

}  // namespace dnnsim
