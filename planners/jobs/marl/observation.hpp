// What one agent of the multi-agent scheduler sees when it decides on one queued job, as flat arrays
// for the policy network (planners/jobs/marl/policy.hpp), -like reconstruction of Zhao & Wu,
// "Large-scale Machine Learning Cluster Scheduling via Multi-agent Graph Reinforcement Learning",
// IEEE TNSM 2021 (arXiv 2112.13354; docs/research/papers-cluster.md §2 [D]):
//   • the server graphs: one node per GPU (its occupant's interference sensitivity and pressure,
//     remaining time, whether it is packed), grouped by server — the paper's level-1 graph;
//   • the data-centre graph: servers (free share, GPU speed, NIC) grouped by rack — level 2;
//   • the job: GPUs, remaining solo time, its own sensitivity and pressure, time waited;
//   • per server and action kind (place anchored there / pack beside a running job there): whether
//     the job fits alone, how many servers it would span, the predicted combined throughput of the
//     best packing partner there (the interference model as the agents' predictor);
//   • the mask of feasible actions: place on a server of the agent's partition, pack on one, defer
//     (only when nothing can be placed).
// Actions are indexed [0, S) place on server s, [S, 2S) pack on server s − S, 2S defer.
#pragma once

#include <cstdint>
#include <vector>

namespace dnnsim {

struct MarlObservation {
  static constexpr int kGpuFeatures = 6;
  static constexpr int kServerFeatures = 4;
  static constexpr int kJobFeatures = 6;
  static constexpr int kActionFeatures = 3;
  static constexpr int kQueueFeatures = 3;

  int servers = 0;
  int racks = 0;
  std::vector<float> gpu;                 // [G × kGpuFeatures]
  std::vector<std::int64_t> gpu_server;   // [G]: the server of each GPU node
  std::vector<float> server;              // [S × kServerFeatures]
  std::vector<std::int64_t> server_rack;  // [S]: dense rack index in [0, racks)
  std::vector<float> job;                 // [kJobFeatures]
  std::vector<float> place_action;        // [S × kActionFeatures]
  std::vector<float> pack_action;         // [S × kActionFeatures]
  std::vector<float> queue;               // [kQueueFeatures]: the critic's view of the whole queue
  std::vector<std::uint8_t> mask;         // [2S + 1]

  [[nodiscard]] int actions() const { return 2 * servers + 1; }
  [[nodiscard]] int defer_action() const { return 2 * servers; }
  // Feasible actions besides defer.
  [[nodiscard]] int feasible_moves() const {
    int n = 0;
    for (int a = 0; a < defer_action(); ++a) n += mask[static_cast<std::size_t>(a)];
    return n;
  }
};

}  // namespace dnnsim
