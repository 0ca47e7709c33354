// Clusters and models for the planner tests (unit, component and slow): hierarchical V100 clusters
// built by hand (NVLink inside a node, a NIC between nodes), random chains of measured layers and a
// tiny LLM of the zoo's kind.
#pragma once

#include <fmt/format.h>

#include <random>
#include <string>

#include "models/dnn/zoo_llm.hpp"
#include "models/hardware/catalog.hpp"
#include "planners/parallel/planner.hpp"

namespace dnnsim::testing {

// `nodes` × `per_node` V100-16GB (or the catalog's `gpu`), 150 GB/s NVLink (1 µs) inside a node,
// 25 Gbps = 3.125 GB/s (5 µs) between nodes, as DAPPLE's Config-A.
inline ClusterView hierarchical_cluster(int nodes, int per_node, double intra_bandwidth = 150e9,
                                        double inter_bandwidth = 3.125e9, const std::string& gpu = "V100-16GB") {
  ClusterView cluster;
  const GpuSpec& v100 = *HardwareCatalog::builtin().find_gpu(gpu);
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < per_node; ++g)
      cluster.devices.push_back(ClusterDevice{fmt::format("node{}/gpu{}", n, g), v100, static_cast<std::uint32_t>(n)});
  const auto gpus_per_node = static_cast<DeviceId>(per_node);
  cluster.path_cost = [=](DeviceId a, DeviceId b) {
    return a / gpus_per_node == b / gpus_per_node ? PathCost{Seconds(1e-6), BytesPerSecond(intra_bandwidth)}
                                                  : PathCost{Seconds(5e-6), BytesPerSecond(inter_bandwidth)};
  };
  return cluster;
}

// Layers measured on V100-16GB for one sample, so layer_time is the measured time × batch.
inline Layer measured_layer(double forward_ms, double backward_ms, double parameter_mb, double activation_mb) {
  Layer layer;
  layer.name = "layer";
  layer.forward_time = Seconds(forward_ms * 1e-3);
  layer.backward_time = Seconds(backward_ms * 1e-3);
  layer.parameter_bytes = Bytes(parameter_mb * 1e6);
  layer.activation_bytes = Bytes(activation_mb * 1e6);
  return layer;
}

inline LayerModel random_model(std::mt19937& random, int layers) {
  std::uniform_real_distribution<double> time(1, 10), parameters(0, 400), activation(0.1, 20);
  LayerModel model;
  model.name = "random";
  model.measured_on = "V100-16GB";
  model.measured_batch = 1;
  for (int l = 0; l < layers; ++l) {
    const double forward = time(random);
    model.layers.push_back(measured_layer(forward, forward * 2, parameters(random), activation(random)));
  }
  return model;
}

// A 2-block mixture of experts: 4 heads (and 4 key/value heads) of 64, hidden 256, 4 routed experts,
// top-2, sequence `seq`.
inline LayerModel tiny_moe(int experts = 4, int seq = 64) {
  return llm_model(LlmConfig{.name = "tiny-moe",
                             .layers = 2,
                             .hidden = 256,
                             .heads = 4,
                             .kv_heads = 4,
                             .head_dim = 64,
                             .ffn = 512,
                             .vocab = 1024,
                             .seq = seq,
                             .experts = experts,
                             .top_k = 2,
                             .expert_ffn = 128},
                   ModelOptions{});
}

inline PlanRequest make_request(LayerModel model, ClusterView cluster, int global_batch, int micro_batches) {
  PlanRequest request;
  request.model = std::move(model);
  request.cluster = std::move(cluster);
  request.global_batch = global_batch;
  request.micro_batches = micro_batches;
  request.memory.precision = Precision::fp32;
  request.memory.optimizer = Optimizer::adam;
  return request;
}

}  // namespace dnnsim::testing
