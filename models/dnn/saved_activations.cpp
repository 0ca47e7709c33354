#include "models/dnn/saved_activations.hpp"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <string>

#include "models/common/diagnostics.hpp"

namespace dnnsim {

Bytes transformer_block_saved_bytes(const TransformerShape& shape, int micro_batch, int element_bytes) {
  assert(element_bytes >= 1 && "an activation element takes at least one byte");
  const double s = shape.seq, b = micro_batch, h = shape.hidden, a = shape.heads, e = element_bytes;
  constexpr double kMaskBytes = 1.0;  // dropout masks, one byte per element (Korthikanti §4.1)
  return Bytes(s * b * h * (16.0 * e + 2.0 * kMaskBytes) + a * s * s * b * (2.0 * e + kMaskBytes));
}

int declare_zoo_blocks(LayerModel& profile, const LayerModel& zoo) {
  const auto shape = transformer_shape(zoo);
  if (!shape) throw InputError(SourceLocation{}, fmt::format("'{}' is not a transformer of the zoo", zoo.name));
  // One block's parameters: the zoo names a block's layers "block0.attn.qkv", "block0.mlp.fc1", …
  // (zoo.hpp); the first attention layer's "block…." prefix names its block.
  std::string prefix;
  for (const Layer& layer : zoo.layers)
    if (layer.kind == LayerKind::attention) {
      const auto at = layer.name.find("block");
      prefix = layer.name.substr(0, layer.name.find('.', at) + 1);
      break;
    }
  Bytes block_parameters{0};
  for (const Layer& layer : zoo.layers)
    if (layer.name.starts_with(prefix)) block_parameters += layer.parameter_bytes;

  int blocks = 0;
  for (const Layer& layer : profile.layers)
    if (layer.parameter_bytes == block_parameters) ++blocks;
  if (blocks != shape->blocks)
    throw InputError(SourceLocation{},
                     fmt::format("{} layers of '{}' have the parameters of one '{}' block ({:.0f} B), which has {} "
                                 "blocks: the profile's layers are not that model's blocks",
                                 blocks, profile.name, zoo.name, block_parameters.value(), shape->blocks));
  const double elements = static_cast<double>(shape->seq) * shape->hidden;  // s·h per sample
  int declared = 0;
  for (Layer& layer : profile.layers) {
    if (layer.parameter_bytes != block_parameters || layer.activation_source == ActivationSource::saved_bytes) continue;
    // The block's output is one s×h tensor: its bytes per element are the profile's activation
    // size. The DAPPLE BERT files record 4.125·s·h bytes per sequence, 3% over fp32's 4·s·h, so the
    // size is the nearest of fp8/fp16/fp32's 1, 2, 4 bytes within 10%; further off, the zoo model's
    // s or h is not the profile's.
    const double per_element = layer.activation_bytes.value() / elements;
    int element_bytes = 0;
    for (const int candidate : {1, 2, 4})
      if (std::abs(per_element - candidate) <= 0.1 * candidate) element_bytes = candidate;
    if (element_bytes == 0)
      throw InputError(
          SourceLocation{},
          fmt::format("layer '{}' outputs {:.0f} B per sample, {:.3g} B per element of {}'s s·h = {}·{}, "
                      "not 1, 2 or 4 (within 10%): another sequence length or hidden size (give seq)",
                      layer.name, layer.activation_bytes.value(), per_element, zoo.name, shape->seq, shape->hidden));
    layer.keep_activations(transformer_block_saved_bytes(*shape, 1, element_bytes), ActivationSource::zoo_block);
    ++declared;
  }
  profile.activation_zoo_model = zoo.name;
  return declared;
}

}  // namespace dnnsim
