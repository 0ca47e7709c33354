// How much a parameter update is worth: the statistical-efficiency model of parameter-server training
// (workload kind parameter_server, docs/parameter-server.md), so that a run ends at a target loss and
// sync policies are compared by time to convergence, not by steps per second.
//
// Progress K is counted in sequential SGD steps at the workload's batch size B (one worker, no
// staleness, no local drift). The global model's loss after progress K is the Optimus/ADSP curve
//     L(K) = 1 / (a·K + b) + c                     (Peng et al., Optimus, EuroSys'18, eq. 1; ADSP's fit, §6)
// and an applied update adds to K:
//   a synchronous round (BSP: m = 1; periodic averaging, ADACOMM: m = τ) of n workers, each doing m
//   local steps on its own batch, then averaged:
//     ΔK = m · φ_local(m) · g(n),    g(n) = (1 + β) / (1 + β/n)
//   g is McCandlish et al.'s large-batch model ("An Empirical Model of Large-Batch Training",
//   arXiv:1812.06162, eq. 2.11: steps S(B) = S_min·(1 + B_noise/B)), with β = B_noise / B: averaging n
//   gradients is worth up to n steps when gradient noise dominates (β ≫ n), one step when it does not;
//   an asynchronous commit (ASP, SSP, ADSP) of m local steps accumulated since the worker's last pull,
//   applied when σ other commits have reached the global model since that pull (its staleness):
//     ΔK = m · φ_local(m) · φ_stale(σ)
//   with φ_local(m) = 1 / (1 + μ·(m − 1))  — local models drift apart between averagings (Wang & Joshi,
//   ADACOMM, SysML'19, Theorem 1: the error floor grows with τ − 1) —
//   and  φ_stale(σ) = 1 / (1 + λ·σ)        — a gradient computed σ updates ago is worth less (Zhang et
//   al., staleness-aware async SGD, IJCAI'16, scales the learning rate by 1/σ).
// The parameters (a, b, c, β, μ, λ) are fitted to a real training run that dnnsim performs on the CPU
// (`dnnsim calibrate convergence`: softmax regression, or a non-convex tanh network, on the UCI digits,
// models/sync/proxy_training.hpp) and shipped in data/convergence/; the loss axis is that proxy's
// (docs/parameter-server.md says why).
#pragma once

#include <string>

namespace dnnsim {

struct StatisticalEfficiency {
  double a = 0.0, b = 1.0, c = 0.0;  // L(K) = 1/(a·K + b) + c; a > 0, b > 0, c ≥ 0
  double beta = 0.0;                 // B_noise / B: gain of averaging n gradients, g(n) = (1 + β)/(1 + β/n)
  double mu = 0.0;                   // local-step drift: φ_local(m) = 1/(1 + μ(m − 1))
  double lambda = 0.0;               // staleness penalty: φ_stale(σ) = 1/(1 + λσ)
  std::string source;                // what the parameters were fitted to, for reports

  [[nodiscard]] double loss(double progress) const;
  // The progress at which the loss reaches `loss`; +∞ when loss ≤ c (never reached).
  [[nodiscard]] double progress_for_loss(double loss) const;
  [[nodiscard]] double averaging_gain(int workers) const;
  [[nodiscard]] double local_factor(double local_steps) const;
  [[nodiscard]] double staleness_factor(double staleness) const;
  // ΔK of a synchronous round of `workers` workers with `local_steps` local steps each.
  [[nodiscard]] double synchronous_round(int workers, double local_steps) const;
  // ΔK of an asynchronous commit of `local_steps` steps with staleness `staleness`.
  [[nodiscard]] double asynchronous_commit(double local_steps, double staleness) const;
};

// The parameters of a file written by `dnnsim calibrate convergence` (keys a, b, c, beta, mu, lambda,
// source). @throw InputError located in the file.
[[nodiscard]] StatisticalEfficiency load_statistical_efficiency(const std::string& path);

// The file shipped with dnnsim, fitted by `dnnsim calibrate convergence` (data/convergence/digits-softmax.yaml).
[[nodiscard]] std::string shipped_statistical_efficiency_path();

}  // namespace dnnsim
