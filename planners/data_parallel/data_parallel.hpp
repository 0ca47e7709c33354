// Data-parallel training as PyTorch DDP runs it (Li et al., "PyTorch Distributed: Experiences on
// Accelerating Data Parallel Training", VLDB 2020): every GPU holds the whole model and a share of
// the global batch; gradients are grouped into buckets (in backward order) and each bucket is
// all-reduced as soon as its last gradient is computed, overlapping communication with the rest of
// the backward pass; the optimizer step waits for the last bucket.
#pragma once

#include <string>
#include <vector>

#include "models/cost/memory_model.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/program/task_graph.hpp"
#include "planners/common/pipeline_plan.hpp"

namespace dnnsim {

inline constexpr Bytes kDdpBucketSize{25e6};  // DDP's bucket_cap_mb default (25 MB)

struct DataParallelConfig {
  LayerModel model;
  int global_batch = 1;  // split as evenly as possible: the first (global_batch mod GPUs) GPUs get one more sample
  Dtype dtype = Dtype::fp32;
  Bytes bucket_size = kDdpBucketSize;
  bool overlap = true;               // false: every all-reduce waits for the whole backward pass
  std::string collective_algorithm;  // empty: the default rule of collective_algorithms.hpp
  // Bytes per parameter of weights, gradients and optimizer state (models/cost/memory_model.hpp):
  // fp32 Adam is 4 + 4 + 8; mixed-precision Adam 2 + 2 + 12 (ZeRO's accounting). Gradients are
  // all-reduced at their stored size.
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::adam;
  // Devices 0 … replica_window − 1 get tasks and the others mirror them (device d mirrors
  // d mod replica_window, TaskGraph::set_mirror); each all-reduce runs over the window as a group
  // standing for devices / replica_window copies of itself (Collective::copies). Exact only on a
  // platform that this translation maps onto itself, with an even split of the batch (the caller's
  // check: sim/workloads/replica_window.hpp). 0: every device.
  int replica_window = 0;
};

// Streams: "compute" (forward, backward, optimizer) and "comm" (all-reduces), per device.
// Memory: weights + gradients + optimizer state (per the precision and optimizer) are taken by the
// first task of iteration 0 and kept;
// each forward task takes its activations (per-sample bytes × local batch), which the matching
// backward task frees.
[[nodiscard]] TaskGraph build_data_parallel(const DataParallelConfig& config, const std::vector<std::string>& devices,
                                            int iterations);

// Gradient buckets of the layers `layers` (default: the whole model) in backward order: consecutive
// layer ranges, the highest first. Walking down from the last layer, a bucket is closed once it holds
// at least `bucket_size` bytes of parameters; what is left at the bottom is the last bucket. The
// pipeline lowering buckets each stage's layers with it (pipeline_lowering.hpp), and the planners
// price the overlapped all-reduce with it (planners/parallel/stage_cost.hpp).
[[nodiscard]] std::vector<LayerRange> gradient_buckets(const LayerModel& model, Bytes bucket_size);
[[nodiscard]] std::vector<LayerRange> gradient_buckets(const LayerModel& model, Bytes bucket_size, LayerRange layers);

}  // namespace dnnsim
