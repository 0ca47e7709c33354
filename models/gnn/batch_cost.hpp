// What one mini-batch of sampled GNN training costs (docs/gnn.md, "What is simulated"): the counts
// replay_epoch gives a batch (epoch_trace.hpp) priced into CPU core-seconds on each server, bytes on
// each path (network requests and responses, NVLink from a peer GPU's cache, the host-to-device copy)
// and the GPU's forward and backward. The `gnn` workload kind (sim/workloads/gnn) runs these costs
// through its SimGrid pipeline; nothing here needs an engine.
//
// Bytes on the wire: a node id is 4 B (uint32, as DGL's int32 graphs); a sampled edge comes back as
// its two ids (8 B); a sampled block crosses PCIe as 8 B per edge and 4 B per source node.
// GPU work: forward + backward at 3× the forward FLOPs and bytes of layer_flops.hpp (the backward
// computes the gradients of both the inputs and the weights); the CPU dispatches 3× the layers'
// forward kernels plus 4 (the loss forward and backward, the optimizer step).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "models/common/units.hpp"
#include "models/gnn/epoch_trace.hpp"
#include "models/gnn/graph.hpp"
#include "models/gnn/layer_flops.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// CPU costs of the data path, per core. Defaults are measurements on this project's machine with
// gnn_bench on an ogbn-products-sized R-MAT graph (docs/performance.md, "GNN data path", quiet
// machine), except op_dispatch (a cited range).
struct GnnCpuCosts {
  // Sampling: 6.1 M sampled edges per CPU-second (node-wise 15,10,5, uniform order), the
  // memory-bound case of the large graphs BGL targets; a cache-resident graph such as PubMed samples
  // ~6× faster.
  Seconds sample_edge{1.0 / 6.1e6};
  // Feature gathering: the epoch's input-node rows (100 fp32, 400 B) from a 0.98 GB table into a
  // contiguous buffer, 2.5 GB/s.
  BytesPerSecond gather_bandwidth{2.5e9};
  // CPU work to dispatch one GPU kernel in eager PyTorch: 5–25 µs per op (Python, autograd and
  // ATen dispatch, cudaLaunchKernel); 10 µs taken.
  Seconds op_dispatch{10e-6};
};

// Work another server does for a mini-batch: a request, core-seconds on its CPU, a response.
struct GnnRemoteWork {
  std::uint32_t server = 0;
  double request_bytes = 0;
  double core_seconds = 0;
  double response_bytes = 0;
};

// One mini-batch's costs, priced from its sampled counts.
struct GnnBatchWork {
  std::uint32_t server = 0;
  std::uint32_t gpu = 0;    // within the server
  std::uint32_t index = 0;  // in the epoch's dealing order, for labels
  std::uint32_t epoch = 0;
  double sample_core_seconds = 0;
  std::vector<GnnRemoteWork> remote_sample;
  double gather_core_seconds = 0;
  std::vector<GnnRemoteWork> remote_gather;
  std::vector<std::pair<std::uint32_t, double>> peer_bytes;  // (GPU of the server, bytes over NVLink)
  double h2d_bytes = 0;
  double dispatch_core_seconds = 0;
  double gpu_seconds = 0;
  double gpu_flops = 0;  // for the reports' FLOP rates
};

namespace gnn {

inline constexpr double kIdBytes = 4;  // a node id on the wire (uint32, as DGL's int32 graphs)

// The trained model as its costs see it: the layer kind, the hidden width, the classes of the output
// layer (the input width is the features'), and the dtype the GPU computes in.
struct GnnModelShape {
  GnnLayerKind layer = GnnLayerKind::sage;
  std::uint32_t hidden = 256;
  std::uint32_t classes = 2;
  Dtype dtype = Dtype::fp32;
};

// The time of the batch's GPU work (a Compute of its FLOPs, bytes and dtype) on the GPU that trains
// it: the cost model's roofline or calibration tables.
using GpuTimeFn = std::function<Seconds(const Compute&)>;

// The costs of the batch `counts` (index `index` in the dealing order) for `model` on `features`.
[[nodiscard]] GnnBatchWork price_batch(const BatchCounts& counts, const FeatureSpec& features,
                                       const GnnModelShape& model, const GnnCpuCosts& costs, const GpuTimeFn& gpu_time,
                                       std::uint32_t index);

// Trainable parameters of `layers` layers (the gradients each round's all-reduce carries).
[[nodiscard]] double model_parameters(const GnnModelShape& model, const FeatureSpec& features, std::size_t layers);

}  // namespace gnn
}  // namespace dnnsim
