#include "models/dnn/layer_model.hpp"

#include <array>

namespace dnnsim {
namespace {
// Indexed by LayerKind, in declaration order.
constexpr std::array<std::string_view, 8> kLayerKindNames{"matmul",        "convolution", "attention", "elementwise",
                                                          "normalization", "embedding",   "pooling",   "other"};
}  // namespace

std::string_view layer_kind_name(LayerKind kind) { return kLayerKindNames.at(static_cast<std::size_t>(kind)); }

std::optional<LayerKind> layer_kind_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kLayerKindNames.size(); ++i)
    if (kLayerKindNames[i] == name) return static_cast<LayerKind>(i);
  return std::nullopt;
}

std::vector<std::string> layer_kind_names() { return {kLayerKindNames.begin(), kLayerKindNames.end()}; }

}  // namespace dnnsim
