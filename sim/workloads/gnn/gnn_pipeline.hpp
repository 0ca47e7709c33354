// Sampled GNN training as a pipeline of SimGrid actors (workload kind gnn, docs/gnn.md), after the
// data path of DistDGL (Zheng et al., IA3'20) and BGL (Liu et al., NSDI'23 §3, Fig. 3):
//
//   sample ──queue── gather ──queue── copy ──queue per GPU── train ── gradient all-reduce
//
// Per graph-store server (a node: its CPU host holds its partition, its GPUs are trainers):
// - sample: a pool of threads on the node's CPU; a mini-batch's local expansions cost core-seconds
//   there, each remote server's share is a request flow, core-seconds on that server's CPU and a
//   response flow back (so remote sampling contends with the remote server's own pipeline);
// - gather: host-resident features are gathered on the CPU (core-seconds), remote ones are
//   gathered on their owner's CPU and sent over the network, peer-GPU cache hits cross NVLink
//   (GPU to GPU); local cache hits move nothing;
// - copy: the host-to-device transfer of what the CPU gathered and the sampled blocks, over the
//   GPU's PCIe link (the thread is held until the DMA ends);
// - train: one thread per GPU dispatches the batch's kernels (core-seconds on the CPU) while the
//   GPU computes (asynchronous launch: the step takes the longer of the two), then every trainer
//   joins a ring all-reduce of the model's gradients (synchronous data parallelism).
// Each trainer may have at most `queue_depth` batches in flight (claimed by sampling, not yet
// trained: DGL's prefetching window); sampling takes the earliest batch of a trainer with room, and
// the queues between stages never block a push, so a stage cannot hold up another trainer's batch
// (which a full per-trainer queue would, with every trainer meeting at each round's all-reduce). Each CPU role (the
// three pools and the trainers' dispatch threads) runs on a CPU host of the node (SimGrid's multi-core host): isolated,
// each role has its own host with its own cores, a pool having a thread per core; shared, every role is on one host of
// all the cores with a pool per stage sized to the machine, so runnable threads share the cores equally and a starved
// role — the trainers' dispatch above all — slows down. Optionally the stages also interfere through the node's memory
// bandwidth and, time-sliced, its caches (GnnInterferenceInput).
#pragma once

#include <array>
#include <cstdint>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "models/gnn/batch_cost.hpp"
#include "models/gnn/cpu_interference.hpp"

namespace dnnsim {

enum class GnnStage { sample, gather, copy, dispatch, train, allreduce };
inline constexpr int kGnnCpuStages = 3;  // sample, gather, copy: the thread pools
inline constexpr int kGnnCpuRoles = gnn::kCpuRoles;  // the pools and the dispatch threads: what runs on CPU cores

// CPU interference (models/gnn/cpu_interference.hpp), off by default. Memory bandwidth: each server's
// CPU memory as a one-core host whose speed is its bandwidth; every stage's CPU work runs beside an
// execution there of its traffic, bounded by the rate it draws alone and weighted by it (so streams
// share in proportion to demand), and ends with both. Cache pollution: CPU work starting on a host
// whose running executions, with it, outnumber its cores while another role has work there, takes
// its core-seconds / time_sliced[role].
struct GnnInterferenceInput {
  std::vector<simgrid::s4u::Host*> memory;     // per server; empty: no bandwidth limit
  std::array<double, kGnnCpuRoles> traffic{};  // bytes per core-second of each role (the copy: per byte copied)
  double h2d_bandwidth = 0;                    // a copy's DMA rate alone: its stream's demand
  std::array<double, kGnnCpuRoles> time_sliced{1, 1, 1, 1};
};

struct GnnPipelineInput {
  // Per server, the CPU host of each role (sample, gather, copy, dispatch): one host four times when
  // shared. Remote sampling and gathering run on the owner's sample and gather hosts.
  std::vector<std::array<simgrid::s4u::Host*, kGnnCpuRoles>> cpus;
  std::vector<std::vector<simgrid::s4u::Host*>> gpus;  // per server, its trainers
  std::vector<std::vector<GnnBatchWork>> batches;      // per server, in dealing order
  std::vector<std::vector<std::uint32_t>> threads;     // per server, per CPU stage
  std::uint32_t queue_depth = 4;                       // batches in flight per trainer
  double allreduce_bytes = 0;                          // the model's gradients
  GnnInterferenceInput interference;
  bool progress = false;
};

struct GnnActivity {
  std::uint32_t server = 0;
  GnnStage stage = GnnStage::sample;
  std::uint32_t thread = 0;  // within the stage's pool; the GPU for dispatch, train and allreduce
  std::uint32_t batch = 0;   // GnnBatchWork::index (the round for an all-reduce)
  std::uint32_t epoch = 0;
  double start = 0, end = 0;
  double flops = 0;
};

struct GnnPipelineResult {
  double makespan = 0;
  bool interrupted = false;
  // Per server, per stage (sample, gather, copy): thread-seconds holding a batch (waiting for
  // remote work or a transfer included), summed over the pool.
  std::vector<std::vector<double>> stage_busy;
  std::vector<std::vector<double>> gpu_busy;      // per server, per GPU: compute time
  std::vector<std::vector<double>> trainer_busy;  // per server, per GPU: train steps (dispatch or compute)
  std::vector<std::vector<double>>
      sync_wait;  // per server, per GPU: waiting for the other trainers to join the all-reduce
  std::vector<std::vector<double>> allreduce_time;  // per server, per GPU: the ring, from the last trainer's arrival
  long flows = 0;
  long executions = 0;
  long cpu_works = 0, time_sliced_works = 0;  // CPU work started, and started time-sliced (paying its factor)
  double remote_bytes = 0;  // sampling requests/responses and remote features over the network
  double nvlink_bytes = 0;
  double h2d_bytes = 0;
  // Every stage activity, a few per batch: the device table, tasks.csv and the trace are built from them.
  std::vector<GnnActivity> activities;
};

// The engine and platform must exist. @return when every batch is trained (or on interruption).
[[nodiscard]] GnnPipelineResult simulate_gnn_pipeline(const GnnPipelineInput& input);

}  // namespace dnnsim
