// Prices a mini-batch's counts (see batch_cost.hpp and docs/gnn.md).
#include "models/gnn/batch_cost.hpp"

namespace dnnsim::gnn {

GnnBatchWork price_batch(const BatchCounts& counts, const FeatureSpec& features, const GnnModelShape& model,
                         const GnnCpuCosts& costs, const GpuTimeFn& gpu_time, std::uint32_t index) {
  const double feature = features.per_node().value();
  GnnBatchWork w;
  w.server = counts.server;
  w.gpu = counts.gpu;
  w.index = index;
  w.epoch = counts.epoch;
  std::uint64_t edges = 0;
  double structure = 0;
  for (const LayerCounts& layer : counts.layers) {
    edges += layer.edges;
    structure += 2 * kIdBytes * static_cast<double>(layer.edges) + kIdBytes * layer.num_src;
  }
  w.sample_core_seconds = static_cast<double>(edges - counts.remote_edges) * costs.sample_edge.value();
  w.gather_core_seconds = static_cast<double>(counts.features.count[static_cast<int>(FeatureSource::host)]) * feature /
                          costs.gather_bandwidth.value();
  for (std::uint32_t r = 0; r < counts.from_server.size(); ++r) {
    const auto& from = counts.from_server[r];
    if (from.expansions > 0)
      w.remote_sample.push_back({r, kIdBytes * static_cast<double>(from.expansions),
                                 static_cast<double>(from.edges) * costs.sample_edge.value(),
                                 2 * kIdBytes * static_cast<double>(from.edges)});
    if (from.features > 0)
      w.remote_gather.push_back({r, kIdBytes * static_cast<double>(from.features),
                                 static_cast<double>(from.features) * feature / costs.gather_bandwidth.value(),
                                 static_cast<double>(from.features) * feature});
  }
  for (std::uint32_t g = 0; g < counts.from_peer_gpu.size(); ++g)
    if (counts.from_peer_gpu[g] > 0)
      w.peer_bytes.emplace_back(g, static_cast<double>(counts.from_peer_gpu[g]) * feature);
  const auto& f = counts.features.count;
  w.h2d_bytes =
      static_cast<double>(f[static_cast<int>(FeatureSource::host)] + f[static_cast<int>(FeatureSource::remote)]) *
          feature +
      structure;
  // Forward, then backward at twice the forward (layer_flops.hpp); layers[0] is the output layer.
  const auto layers = counts.layers.size();
  double flops = 0, bytes = 0;
  int kernels = 0;
  for (std::size_t i = 0; i < layers; ++i) {
    const std::uint32_t in = i + 1 == layers ? features.dimension : model.hidden;
    const std::uint32_t out = i == 0 ? model.classes : model.hidden;
    flops += 3 * gnn_layer_forward_flops(model.layer, counts.layers[i], in, out).value();
    bytes +=
        3 * gnn_layer_forward_bytes(counts.layers[i], in, out, static_cast<std::uint32_t>(dtype_bytes(model.dtype)))
                .value();
    kernels += 3 * gnn_layer_forward_kernels(model.layer);
  }
  // The loss forward and backward, and the optimizer step: a few kernels more.
  kernels += 4;
  Compute compute;
  compute.flops = Flop(flops);
  compute.bytes_accessed = Bytes(bytes);
  compute.dtype = model.dtype;
  w.gpu_seconds = gpu_time(compute).value();
  w.gpu_flops = flops;
  w.dispatch_core_seconds = kernels * costs.op_dispatch.value();
  return w;
}

double model_parameters(const GnnModelShape& model, const FeatureSpec& features, std::size_t layers) {
  double parameters = 0;
  for (std::size_t i = 0; i < layers; ++i)
    parameters += gnn_layer_parameters(model.layer, i + 1 == layers ? features.dimension : model.hidden,
                                       i == 0 ? model.classes : model.hidden);
  return parameters;
}

}  // namespace dnnsim::gnn
