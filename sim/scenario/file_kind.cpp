#include "sim/scenario/file_kind.hpp"

#include <string_view>

#include "models/common/diagnostics.hpp"
#include "models/common/input_file.hpp"

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
    return input_file_kind(YAML::Load(read_input_file(path)));
  } catch (const InputError&) {  // a directory, a file that cannot be read: the scenario reader says so
    return InputFileKind::scenario;
  } catch (const YAML::Exception&) {
    return InputFileKind::scenario;
  }
}

}  // namespace dnnsim
