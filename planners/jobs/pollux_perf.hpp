// Pollux's fitted throughput model, -like reconstruction of Qiao et al., "Pollux: Co-adaptive Cluster
// Scheduling for Goodput-Optimized Deep Learning", OSDI'21 §3.2 (eq. 2–4), from its artifact
// (petuum/adaptdl, branch osdi21-artifact, commit c793c70, simulator/goodput.py: PerfParams,
// fit_perf_params, _obj_fn, _predict_*; simulator/simulator.py Job.update_params):
//   accum time   T_acc(b) = α_c + β_c·b (one forward/backward pass at local batch b);
//   network      T_net = α_n + β_n·max(r − 2, 10⁻⁸) across nodes, α_r + β_r·max(r − 2, 10⁻⁸) within one
//                node with r > 1 replicas, 10⁻⁸ + 10⁻⁸·max(r − 2, 10⁻⁸) for one replica;
//   step time    T_step = (T_acc^γ + T_net^γ)^{1/γ} (γ in [1, 10]: 1 no overlap, 10 about max);
//   fit          minimise RMSLE(T_acc) + RMSLE(T_step) + 10⁻³(γ − 1)² + 10⁻²((β_n/α_n)² + (β_r/α_r)²)
//                over the job's observations (one per (nodes, replicas, local batch) it has run, the
//                first measured kept), from (0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001), within
//                [10⁻⁸, ∞) × 6 and γ in [1, 10]; parameters the observations cannot identify are
//                fixed: α_c at the mean accum time / 2 with one local batch observed, (α_n, β_n) at
//                10⁻⁸ without a multi-node observation, (α_r, β_r) without a one-node multi-replica
//                one, (β_n, β_r) without one of more than 2 replicas; after the fit, without a
//                multi-node observation α_n ≥ 1.1·α_r and β_n ≥ 1.1·β_r (the artifact's prior).
// The artifact minimises with scipy's L-BFGS-B and autograd's gradient; dnnsim with a projected BFGS
// (Bertsekas 1982's two-metric projection, 7 parameters: a dense inverse Hessian) on the analytic gradient, the six
// positive parameters in logarithms so that they share one scale. Both stop at a local minimum of the same objective;
// they may stop at different points of a flat valley.
#pragma once

#include <vector>

namespace dnnsim {

struct PolluxPerfParams {
  double alpha_c = 0, beta_c = 0, alpha_n = 0, beta_n = 0, alpha_r = 0, beta_r = 0, gamma = 1;
};

// One configuration a job has run: its measured accum (compute) and whole-step times, seconds.
struct PolluxPerfObservation {
  int nodes = 1;
  int replicas = 1;
  double local_batch = 0;  // samples per replica per micro-step (the artifact's atomic_bsz)
  double accum_time = 0;   // step time − sync time
  double step_time = 0;
};

[[nodiscard]] double pollux_accum_time(const PolluxPerfParams& params, double local_batch);
[[nodiscard]] double pollux_network_time(const PolluxPerfParams& params, int nodes, int replicas);
// T_step for one synchronised step (the artifact's optim time).
[[nodiscard]] double pollux_step_time(const PolluxPerfParams& params, int nodes, int replicas, double local_batch);
// The fitted parameters; `observations` must not be empty (a job without any has no model: the
// artifact's speedup is then r / fair share).
[[nodiscard]] PolluxPerfParams fit_pollux_perf_params(const std::vector<PolluxPerfObservation>& observations);
// The fit's objective (for tests: the fit is a local minimum of it).
[[nodiscard]] double pollux_perf_objective(const PolluxPerfParams& params,
                                           const std::vector<PolluxPerfObservation>& observations);

}  // namespace dnnsim
