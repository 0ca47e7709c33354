#include "models/dnn/layer_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "models/common/enum_names.hpp"
#include "models/common/units.hpp"

namespace dnnsim {
namespace {
// Indexed by LayerKind, in declaration order.
constexpr std::array<std::string_view, 9> kLayerKindNames{
    "matmul", "convolution", "attention", "elementwise", "normalization", "embedding", "pooling", "loss", "other"};
// Indexed by WeightLayout.
constexpr std::array<std::string_view, 2> kWeightLayoutNames{"in_out", "out_in"};

}  // namespace

std::string_view layer_kind_name(LayerKind kind) { return kLayerKindNames.at(static_cast<std::size_t>(kind)); }
std::optional<LayerKind> layer_kind_from_name(std::string_view name) {
  return enum_from_name<LayerKind>(kLayerKindNames, name);
}
std::vector<std::string> layer_kind_names() { return enum_names(kLayerKindNames); }

std::optional<WeightLayout> weight_layout_from_name(std::string_view name) {
  return enum_from_name<WeightLayout>(kWeightLayoutNames, name);
}
std::vector<std::string> weight_layout_names() { return enum_names(kWeightLayoutNames); }

std::string describe_activation_sources(const LayerModel& model) {
  std::array<std::size_t, 5> counts{};  // by ActivationSource, in declaration order
  for (const Layer& layer : model.layers) ++counts.at(static_cast<std::size_t>(layer.activation_source));
  const auto name = [&](ActivationSource source) -> std::string {
    switch (source) {
      case ActivationSource::given:
        return "activation_bytes as given";
      case ActivationSource::zoo:
        return "the zoo's kept tensors";
      case ActivationSource::profile_output:
        return "profile outputs only (activation_size; tensors kept inside a layer not counted)";
      case ActivationSource::saved_bytes:
        return "profile saved_bytes";
      case ActivationSource::zoo_block:
        return fmt::format("zoo {} blocks (Korthikanti et al. MLSys'23)", model.activation_zoo_model);
    }
    return "";
  };
  std::string text;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    if (counts[s] == 0) continue;
    if (!text.empty()) text += "; ";
    text += fmt::format("{}: {}", name(static_cast<ActivationSource>(s)), counted(counts[s], "layer"));
  }
  return text.empty() ? "no layers" : text;
}

std::vector<LayerRange> model_blocks(const LayerModel& model) {
  // The name up to its first component "block<digits>" ("decoder.block3" of "decoder.block3.attn.q"),
  // or empty: "encoder.lstm2" or "conv3_1" are units of their own.
  const auto block_of = [](const std::string& name) {
    std::size_t start = 0;
    while (start < name.size()) {
      const std::size_t end = std::min(name.find('.', start), name.size());
      const std::string_view part = std::string_view(name).substr(start, end - start);
      if (part.size() > 5 && part.starts_with("block") &&
          std::all_of(part.begin() + 5, part.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return end < name.size() ? std::string_view(name).substr(0, end) : std::string_view();
      start = end + 1;
    }
    return std::string_view();
  };
  std::vector<LayerRange> blocks;
  std::string_view open;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const std::string_view block = block_of(model.layers[l].name);
    if (!block.empty() && block == open)
      blocks.back().end = l + 1;
    else if (!block.empty())
      blocks.push_back(LayerRange{l, l + 1});
    open = block;
  }
  return blocks;
}

}  // namespace dnnsim
