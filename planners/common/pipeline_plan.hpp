// A pipeline-parallel plan: the model's layers cut into stages, each stage on a group of devices that
// replicate it, and the global batch split into micro-batches. It is what every planner returns
// (planners/parallel) and what every schedule lowers into a TaskGraph (planners/schedules).
//
// Replicated stages follow DAPPLE (Fan et al., PPoPP'21, §4.2 and Fig. 8a): a micro-batch is split
// evenly across the replicas of a stage (samples [0, b) in contiguous shares, the first b mod r
// replicas taking one more), activations move between stages of different replication as a
// split-concat of the overlapping sample ranges, and each stage's gradients are all-reduced among
// its replicas once per iteration. Megatron's "pipeline p × data d" is the special case where every
// stage has d replicas.
//
// Interleaved schedules (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", SC'21 §2.2.2) put v model chunks on each stage: chunk c of stage s is
// virtual stage c·p + s of the p·v-stage chain.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "models/program/task_graph.hpp"

namespace dnnsim {

// The names of a plan's devices. A plan device is `ranks` consecutive GPUs (a tensor × context
// parallel group; 1 without), so that a device is named by its GPUs' names and a run of devices by its
// first GPU and its last: the same text in `dnnsim plan`, the run's summary and its messages.
class DeviceNames {
 public:
  // Each GPU one device (implicit: a cluster's names are device names).
  DeviceNames(std::vector<std::string> gpus) : gpus_(std::move(gpus)) {}  // NOLINT(google-explicit-constructor)
  DeviceNames(std::vector<std::string> gpus, int ranks) : gpus_(std::move(gpus)), ranks_(ranks < 1 ? 1 : ranks) {}
  [[nodiscard]] std::size_t size() const { return gpus_.size() / static_cast<std::size_t>(ranks_); }
  // Device d's name: its GPU, or its group "first…last".
  [[nodiscard]] std::string name(DeviceId d) const;
  // Devices first to last (consecutive): "first GPU…last GPU".
  [[nodiscard]] std::string range(DeviceId first, DeviceId last) const;

 private:
  [[nodiscard]] std::string gpu(std::size_t g) const;
  std::vector<std::string> gpus_;
  int ranks_ = 1;
};

struct PipelineStage {
  std::vector<LayerRange> chunks;  // one per model chunk; chunk c is virtual stage c·p + s
  std::vector<DeviceId> devices;   // the replicas, indices into the cluster's GPUs (Cluster::gpu_names order)
  friend bool operator==(const PipelineStage&, const PipelineStage&) = default;
};

struct PipelinePlan {
  std::vector<PipelineStage> stages;
  int global_batch = 1;   // samples per iteration
  int micro_batches = 1;  // M; a micro-batch holds global_batch / M samples (global_batch % M == 0)
  friend bool operator==(const PipelinePlan&, const PipelinePlan&) = default;

  [[nodiscard]] int micro_batch_size() const { return global_batch / micro_batches; }
  [[nodiscard]] int chunks_per_stage() const {
    return stages.empty() ? 0 : static_cast<int>(stages.front().chunks.size());
  }
  // Virtual stages in pipeline order: (stage, chunk) for c in chunks, s in stages.
  [[nodiscard]] std::vector<LayerRange> virtual_stages() const;
  // Every problem with the plan against a model of `layer_count` layers and `device_count` GPUs: the
  // virtual stages must cover the layers in order without gaps, every stage needs a device, no device
  // may hold two stages, every stage the same number of chunks, global_batch % micro_batches == 0
  // and every replica at least one sample of a micro-batch. Empty when the plan is valid.
  [[nodiscard]] std::vector<std::string> problems(std::size_t layer_count, std::size_t device_count) const;
  // "2 stages: [0,23)×8 @ node0/gpu0…node0/gpu7 | [23,48)×8 @ node1/gpu0…node1/gpu7, M = 16 × 4" for
  // messages and `dnnsim plan`: runs of consecutive GPUs are written first…last.
  [[nodiscard]] std::string describe(const DeviceNames& device_names) const;
};

// Device names with runs of consecutive ids written "first…last", so that a 64-GPU stage stays one
// short line: "node0/gpu0…node7/gpu7,node9/gpu2".
[[nodiscard]] std::string describe_devices(const std::vector<DeviceId>& devices, const DeviceNames& device_names);

// The samples of a micro-batch of `micro_batch_size` samples held by replica `replica` of `replicas`:
// contiguous shares, the first (size mod replicas) replicas one more.
struct SampleShare {
  int begin = 0;
  int count = 0;
};
[[nodiscard]] SampleShare replica_share(int micro_batch_size, int replicas, int replica);

}  // namespace dnnsim
