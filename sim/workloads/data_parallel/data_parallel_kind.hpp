// The data-parallel workload kind (`workload.kind: data_parallel`, docs/scenarios.md): every GPU
// holds the whole model and trains on its share of the batch; gradients are all-reduced in buckets,
// overlapped with the backward pass as PyTorch DDP does (planners/data_parallel).
#pragma once

#include <memory>
#include <string>

#include "planners/data_parallel/data_parallel.hpp"
#include "sim/workloads/replica_window.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

struct DataParallelWorkload : WorkloadSpec {
  DataParallelConfig config;  // config.replica_window: 0 here; the window is decided when lowered
  // `data_parallel_fidelity` (sim/workloads/replica_window.hpp): every GPU, a window of whole nodes
  // whose GPUs the others mirror, or a window where that is exact.
  ReplicaFidelity replica_fidelity = ReplicaFidelity::replicas;
  [[nodiscard]] std::string network_unsupported() const override {
    if (replica_fidelity != ReplicaFidelity::window) return {};
    return std::string(kWindowRefusesNetwork);
  }
  [[nodiscard]] std::optional<int> samples_per_iteration() const override { return config.global_batch; }
  [[nodiscard]] std::optional<int> tokens_per_sample() const override {
    if (config.model.tokens_per_sample <= 0) return std::nullopt;
    return config.model.tokens_per_sample;
  }
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_data_parallel_kind();

// The window `scenario`'s data-parallel workload runs with (replicas 0: every GPU), and the reasons a
// window would not be exact (ReplicaFidelity::replicas asked: none, and no window).
[[nodiscard]] ReplicaWindow data_parallel_window(const Scenario& scenario);

}  // namespace dnnsim
