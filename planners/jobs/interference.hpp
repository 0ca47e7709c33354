// Job interference model of the interference-aware multi-agent RL scheduler, -like reconstruction
// (Zhao & Wu, "Large-scale Machine Learning Cluster Scheduling via Multi-agent Graph Reinforcement
// Learning", IEEE TNSM 2021, arXiv 2112.13354; docs/research/papers-cluster.md §2 [D]).
// The paper predicts the slowdown of a job under a co-location it never profiled. Gavel publishes
// real profiled pairs (OSDI'20 scheduler/simulation_throughputs.json: the solo steps/s of job type i
// and its steps/s while sharing a GPU with job type j) but no per-job resource-usage vectors, so the
// usage vector is learned instead of measured: each job type gets a sensitivity a_i and a pressure b_j,
//     log s_ij = a_i + b_j,          s_ij = T_i(solo) / T_i(with j),
// fitted by linear least squares (Eigen, minimum-norm solution: a and b share one gauge freedom).
// Several co-runners add their excess slowdowns, the paper's form s_i = 1 + Σ_{j∈C_i} (s_ij − 1)
// (s_i = 1 when C_i = ∅); each s_ij is gauge-free, a product exp(a_i + Σ_j b_j) would not be.
// Error on held-out pairs: docs/cluster.md "Job interference model".
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace dnnsim {

// One profiled co-location: job type `victim` ran at `slowdown` = solo / co-located throughput
// while sharing its GPU with `aggressor`.
struct ColocatedPair {
  std::string victim;
  std::string aggressor;
  double slowdown;
};

// Every co-located pair of single-GPU jobs in one Gavel table ("v100", "p100", "k80"), job types named as
// traces name them ("ResNet-18 (batch size 16)", Gavel's key without its scale factor), sorted by
// (victim, aggressor).
// @throw InputError at the file when it is unreadable, not JSON or has no such table.
std::vector<ColocatedPair> read_gavel_colocated_pairs(const std::string& throughputs_json, const std::string& gpu_type);
// The same for every consolidated table of the file ("k80", "p100", "v100"), read once.
std::map<std::string, std::vector<ColocatedPair>> read_gavel_colocated_tables(const std::string& throughputs_json);

// What predicts a co-location's slowdown: the additive model below, or its MLP variant
// (interference_mlp.hpp).
class InterferencePredictor {
 public:
  virtual ~InterferencePredictor() = default;
  [[nodiscard]] virtual bool knows(const std::string& job_type) const = 0;
  // Slowdown of `victim` sharing with every job type in `co_runners`: 1 + Σ_j (ŝ_ij − 1), 1 when empty.
  [[nodiscard]] virtual double slowdown(const std::string& victim,
                                        const std::vector<std::string>& co_runners) const = 0;
};

class InterferenceModel final : public InterferencePredictor {
 public:
  // Least-squares fit of log s_ij = a_i + b_j on `pairs` (at least one).
  static InterferenceModel fit(const std::vector<ColocatedPair>& pairs);

  [[nodiscard]] bool knows(const std::string& job_type) const override;
  // Unknown job types contribute the mean sensitivity / pressure of the fitted ones.
  [[nodiscard]] double slowdown(const std::string& victim, const std::vector<std::string>& co_runners) const override;
  // Gauge-free summaries of a job type (the MARL agents' features): its excess slowdown beside a
  // co-runner of mean pressure, exp(a_i + mean b) − 1, and the excess it causes a victim of mean
  // sensitivity, exp(mean a + b_j) − 1.
  [[nodiscard]] double sensitivity(const std::string& job_type) const;
  [[nodiscard]] double pressure(const std::string& job_type) const;

 private:
  std::map<std::string, double> sensitivity_;
  std::map<std::string, double> pressure_;
  double mean_sensitivity_ = 0.0;
  double mean_pressure_ = 0.0;
};

// Deterministic split of profiled pairs: every `stride`-th pair (in sorted order) is held out.
struct PairSplit {
  std::vector<ColocatedPair> train;
  std::vector<ColocatedPair> held_out;
};
PairSplit split_pairs(const std::vector<ColocatedPair>& pairs, std::size_t stride);

// Prediction error on pairs whose two job types the model knows.
struct InterferenceError {
  std::size_t pairs = 0;
  double mean_abs_relative = 0.0;  // mean |ŝ − s| / s
  double rmse = 0.0;               // of s
};
InterferenceError evaluate(const InterferencePredictor& model, const std::vector<ColocatedPair>& pairs);

}  // namespace dnnsim
