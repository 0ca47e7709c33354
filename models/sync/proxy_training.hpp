// The proxy training run behind the statistical-efficiency model (models/sync/statistical_efficiency.hpp):
// a real, small training job on the CPU whose progress is measured in real updates, so that the
// parameters a, b, c, β, μ, λ are fitted to observed optimisation rather than chosen.
//
// Model (a ProxyModel): softmax regression (multinomial logistic regression) on the UCI optical digits
// (data/convergence/digits.csv: 1797 8×8 images, pixels 0..16 scaled to [0, 1], plus a bias input:
// 65 inputs → 10 classes), convex; or any other model behind ProxyModel — the non-convex one-hidden-
// layer network of libtorch (planners/torch/digits_mlp.cpp), on which stale gradients and drifting
// local models cost what they cost a deep network. "The global loss" is the mean cross-entropy over
// all 1797 samples.
// Optimiser: plain minibatch SGD, batch B drawn uniformly with replacement (the i.i.d. sampling that
// McCandlish et al.'s noise model assumes), constant learning rate η, parameters starting at zero
// (loss ln 10). Sampling uses std::mt19937_64 and an index draw of our own (rejection, then modulo):
// the engine's output is fixed by the standard, std::uniform_int_distribution's is not.
//
// Regimes, each run `replicas` times from independent seeds, the replicas' global losses averaged at
// the same update counts (after updates 1…16, then every ⌈u/16⌉, about 6 % apart) and the
// crossing of each loss level interpolated linearly between two evaluations:
//   sequential   one step on one batch per update → L(K), fitted with fit_loss_curve (x = steps);
//   synchronous  n workers, one batch each, gradients averaged, one step at η per update
//                (n = 2, 4, 8, 16) → worth per step w_n ≈ g(n) = (1 + β)/(1 + β/n);
//   local SGD    n = 4 workers each take m steps from the common parameters, which are then averaged
//                (m = 2, 4, 8, 16) → worth per round / (m·g(4)) ≈ φ_local(m) = 1/(1 + μ(m − 1));
//   asynchronous n workers in round robin, each commit applying at full η a gradient computed on the
//                global parameters as they were σ = n − 1 commits earlier (n = 2, 4, 8, 16)
//                → worth per commit ≈ φ_stale(σ) = 1/(1 + λσ).
// Loss levels: the averaged sequential loss after K_max/2, K_max/4, … K_max/2^levels steps, so that
// every regime is measured from the first steps to the flat end of the curve, and the levels lie
// where the sequential run has been (the regimes get at least K_max updates to reach them,
// asynchronous runs 2·K_max). The worth of a regime is the least-squares w in K(ℓ) = w·R(ℓ) over the
// levels it reached (K: sequential steps, R: its updates), which weights the long, late part of
// training most; a regime that reaches no level is worth 0 (it diverged or stalled: the tanh network's
// stale commits at a large η). β, μ, λ are each fitted by 1-D least squares on the worths (a grid, then golden
// section), clamped to ≥ 0.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/sync/loss_curve_fit.hpp"

namespace dnnsim {

struct DigitsData {
  Eigen::MatrixXd inputs;   // samples × 65: pixel / 16, then 1 (the bias input)
  std::vector<int> labels;  // 0..9
};

// Reads the digits CSV (64 pixels 0..16, then the label 0..9, one sample a line, no header).
// @throw InputError located at the offending field.
[[nodiscard]] DigitsData load_digits(const std::string& path);
// The shipped copy, data/convergence/digits.csv.
[[nodiscard]] const DigitsData& shipped_digits();

// A model the calibration trains: its parameters are one flat vector, its gradients are taken on the
// samples the regime draws (so that sampling, and with it every regime's random stream, is the
// calibration's and not the model's).
class ProxyModel {
 public:
  virtual ~ProxyModel() = default;
  // θ₀, the same for every regime and replica (a common start, as W = 0 is for the softmax).
  [[nodiscard]] virtual Eigen::VectorXd initial_parameters() const = 0;
  // Mean cross-entropy over every sample.
  [[nodiscard]] virtual double loss(const Eigen::VectorXd& w) const = 0;
  // The mean gradient over `samples` (indices into the data, repeats allowed) into `out`.
  virtual void gradient(const Eigen::VectorXd& w, const std::vector<std::size_t>& samples, Eigen::VectorXd& out) = 0;
  // McCandlish et al.'s simple noise scale B_simple = tr(Σ)/|G|² (arXiv:1812.06162, eq. 2.9) from the
  // per-sample gradients g_i: tr(Σ) = mean |g_i|² − |G|². This default takes one gradient per sample.
  // (Inline, as every member here: the libtorch plugin derives from this class without linking models.)
  [[nodiscard]] virtual double noise_scale(const Eigen::VectorXd& w) {
    Eigen::VectorXd mean = Eigen::VectorXd::Zero(w.size()), g;
    double mean_sq = 0.0;
    const double n = static_cast<double>(sample_count());
    std::vector<std::size_t> one(1);
    for (std::size_t i = 0; i < sample_count(); ++i) {
      one[0] = i;
      gradient(w, one, g);
      mean += g / n;
      mean_sq += g.squaredNorm() / n;
    }
    return (mean_sq - mean.squaredNorm()) / mean.squaredNorm();
  }
  // Samples in the data (indices 0 … count − 1).
  [[nodiscard]] virtual std::size_t sample_count() const = 0;
  // The model, for the calibration's `source` sentence.
  [[nodiscard]] virtual std::string description() const = 0;
};

// Makes one model per replica (a model may keep buffers); empty in ProxyOptions: softmax regression.
using ProxyModelFactory = std::function<std::unique_ptr<ProxyModel>(const DigitsData& data)>;
[[nodiscard]] std::unique_ptr<ProxyModel> softmax_proxy(const DigitsData& data);

struct ProxyOptions {
  int batch = 16;  // B
  // η about half the textbook 1/L step at the start, L₀ = λ_max(∇²loss at W = 0) = 1.14 on these data
  // (docs/calibration.md says why and what smaller and larger η give).
  double learning_rate = 0.5;
  std::uint64_t seed = 1;
  int sequential_steps = 3000;  // K_max
  int replicas = 16;            // independent runs averaged per regime
  int levels = 8;
  std::vector<int> sync_workers{2, 4, 8, 16};
  int local_workers = 4;
  std::vector<int> local_steps{2, 4, 8, 16};
  std::vector<int> async_workers{2, 4, 8, 16};
  // Non-i.i.d. workers: the share of each worker's samples drawn from its own labels (McMahan et
  // al.'s partition by label, FedAvg AISTATS'17); 0 = i.i.d. (the shipped digits-softmax.yaml), 1 =
  // each worker sees only its labels (digits-softmax-noniid.yaml). The sequential run is unaffected.
  double label_skew = 0.0;
  bool quick = false;       // marks the source sentence only; quick_options() sets the sizes
  ProxyModelFactory model;  // empty: softmax_proxy

  // Seconds, not a minute: fewer steps, levels and replicas.
  [[nodiscard]] static ProxyOptions quick_options();
};

// A regime's measured worth: per update, in sequential steps.
struct WorthPoint {
  int x = 0;                        // n (synchronous), m (local), σ (asynchronous)
  double worth = 0.0;               // least-squares K/R over the levels reached
  double factor = 0.0;              // what the 1-D model is fitted to: g(n), φ_local(m) or φ_stale(σ)
  std::vector<double> level_worth;  // K(ℓ)/R(ℓ) per level reached, highest loss first
  int levels_reached = 0;
};

struct OneParameterFit {
  double value = 0.0;  // β, μ or λ (≥ 0)
  double rms = 0.0;    // root-mean-square residual of the factor
  std::vector<WorthPoint> points;
};

struct ConvergenceCalibration {
  ProxyOptions options;
  LossCurveFit curve;                           // L(K) of the sequential run
  std::vector<double> levels;                   // loss levels, highest first
  std::vector<double> level_steps;              // K(ℓ): sequential steps to reach each level
  std::vector<double> level_steps_fitted;       // the same read off the fitted L(K), as the simulator will
  double initial_loss = 0.0, final_loss = 0.0;  // sequential, at 0 and K_max steps
  // McCandlish et al.'s B_simple at the start and after K_max sequential steps: with a learning rate
  // tuned per batch size, β would be B_simple/B; beside the measured β for comparison.
  double initial_noise_scale = 0.0, final_noise_scale = 0.0;
  OneParameterFit beta, mu, lambda;
  std::string source;
};

// Runs every regime and fits the model; `progress` receives one line per regime.
[[nodiscard]] ConvergenceCalibration calibrate_convergence(
    const DigitsData& data, const ProxyOptions& options, const std::function<void(const std::string&)>& progress = {});

// The YAML file read by load_statistical_efficiency: a, b, c, beta, mu, lambda, source, and a `fit:`
// map with residuals and the measured worths. Deterministic text (fixed key order and precision).
[[nodiscard]] std::string dump_convergence_calibration(const ConvergenceCalibration& calibration);

}  // namespace dnnsim
