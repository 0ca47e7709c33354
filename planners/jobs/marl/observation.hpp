// What one agent of the multi-agent scheduler sees when it chooses which of its waiting jobs to
// serve next and where, as flat arrays for the policy network (planners/jobs/marl/policy.hpp), -like
// reconstruction of Zhao & Wu, "Large-scale Machine Learning Cluster Scheduling via Multi-agent Graph
// Reinforcement Learning", IEEE TNSM 2021 (arXiv 2112.13354; docs/research/papers-cluster.md §2 [D]):
//   • the server graphs: one node per GPU (its occupant's interference sensitivity and pressure,
//     remaining time, whether it is packed), grouped by server — the paper's level-1 graph;
//   • the data-centre graph: servers (free share, GPU speed, NIC) grouped by rack — level 2;
//   • the candidates: up to `window` waiting jobs of the agent's sub-queue, each with its GPUs,
//     remaining solo time, sensitivity and pressure, time waited and position in the sub-queue;
//   • per candidate, server and action kind (place anchored there / pack beside a running job there):
//     whether the job fits on that server alone, how many servers it would span, the speed of that
//     placement relative to the job's solo speed, the predicted combined throughput of the best
//     packing partner there (the interference model as the agents' predictor);
//   • the mask of feasible actions: place a candidate on a server of the agent's partition (or on
//     any server, as the scheduler's `remote` option allows), pack it on one, or stop (only when no candidate can be
//     placed: the scheduler is work-conserving).
// Actions are indexed by candidate c and server s: c·2S + s place, c·2S + S + s pack, and
// candidates·2S stop.
#pragma once

#include <cstdint>
#include <vector>

namespace dnnsim {

struct MarlObservation {
  static constexpr int kGpuFeatures = 6;
  static constexpr int kServerFeatures = 4;
  static constexpr int kJobFeatures = 6;
  static constexpr int kActionFeatures = 4;
  static constexpr int kQueueFeatures = 3;

  int servers = 0;
  int racks = 0;
  int candidates = 0;
  std::vector<float> gpu;                 // [G × kGpuFeatures]
  std::vector<std::int64_t> gpu_server;   // [G]: the server of each GPU node
  std::vector<float> server;              // [S × kServerFeatures]
  std::vector<std::int64_t> server_rack;  // [S]: dense rack index in [0, racks)
  std::vector<float> job;                 // [C × kJobFeatures]
  std::vector<float> place_action;        // [C × S × kActionFeatures]
  std::vector<float> pack_action;         // [C × S × kActionFeatures]
  std::vector<float> queue;               // [kQueueFeatures]: the critic's view of the whole queue
  std::vector<std::uint8_t> mask;         // [C × 2S + 1]

  [[nodiscard]] int actions() const { return candidates * 2 * servers + 1; }
  [[nodiscard]] int stop_action() const { return candidates * 2 * servers; }
  [[nodiscard]] int place_action_of(int candidate, int server) const { return candidate * 2 * servers + server; }
  [[nodiscard]] int pack_action_of(int candidate, int server) const {
    return candidate * 2 * servers + servers + server;
  }
  // Feasible actions besides stop.
  [[nodiscard]] int feasible_moves() const {
    int n = 0;
    for (int a = 0; a < stop_action(); ++a) n += mask[static_cast<std::size_t>(a)];
    return n;
  }
};

}  // namespace dnnsim
