#include "models/gnn/layer_flops.hpp"

#include <stdexcept>
#include <string>

namespace dnnsim::gnn {

GnnLayerKind gnn_layer_kind(std::string_view name) {
  if (name == "gcn") return GnnLayerKind::gcn;
  if (name == "sage") return GnnLayerKind::sage;
  if (name == "gat") return GnnLayerKind::gat;
  throw std::invalid_argument("unknown GNN layer '" + std::string(name) + "'; expected gcn, sage or gat");
}

Flop gnn_layer_forward_flops(GnnLayerKind kind, const LayerCounts& layer, std::uint32_t in_features,
                             std::uint32_t out_features) {
  const double d = layer.num_dst, s = layer.num_src, e = static_cast<double>(layer.edges);
  const double in = in_features, out = out_features;
  switch (kind) {
    case GnnLayerKind::gcn:
      return Flop(2 * e * in + 2 * d * in * out);
    case GnnLayerKind::sage:
      return Flop(e * in + d * in + 2 * d * (2 * in) * out);
    case GnnLayerKind::gat:
      return Flop(2 * s * in * out + 4 * s * out + e * (4 + 2 * out));
  }
  return Flop(0);
}

Bytes gnn_layer_forward_bytes(const LayerCounts& layer, std::uint32_t in_features, std::uint32_t out_features,
                              std::uint32_t dtype_bytes) {
  const double in = static_cast<double>(layer.edges + layer.num_src) * in_features;
  const double out = static_cast<double>(layer.num_dst) * out_features;
  return Bytes((in + out) * dtype_bytes);
}

double gnn_layer_parameters(GnnLayerKind kind, std::uint32_t in_features, std::uint32_t out_features) {
  const double in = in_features, out = out_features;
  switch (kind) {
    case GnnLayerKind::gcn:
      return in * out + out;
    case GnnLayerKind::sage:
      return 2 * in * out + out;
    case GnnLayerKind::gat:
      return in * out + 2 * out + out;
  }
  return 0;
}

int gnn_layer_forward_kernels(GnnLayerKind kind) {
  switch (kind) {
    case GnnLayerKind::gcn:
      return 4;
    case GnnLayerKind::sage:
      return 6;
    case GnnLayerKind::gat:
      return 10;
  }
  return 0;
}

}  // namespace dnnsim::gnn
