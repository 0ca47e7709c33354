// The data-parallel workload kind (`workload.kind: data_parallel`, docs/scenarios.md): every GPU
// holds the whole model and trains on its share of the batch; gradients are all-reduced in buckets,
// overlapped with the backward pass as PyTorch DDP does (planners/data_parallel).
#pragma once

#include <memory>

#include "planners/data_parallel/data_parallel.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

struct DataParallelWorkload : WorkloadSpec {
  DataParallelConfig config;
  [[nodiscard]] std::optional<int> samples_per_iteration() const override { return config.global_batch; }
  [[nodiscard]] std::optional<int> tokens_per_sample() const override {
    if (config.model.tokens_per_sample <= 0) return std::nullopt;
    return config.model.tokens_per_sample;
  }
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_data_parallel_kind();

}  // namespace dnnsim
