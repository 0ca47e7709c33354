#include "planners/jobs/pollux_perf.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dnnsim {
namespace {

constexpr double kTiny = 1e-8;  // goodput.py: lower bounds and the unused link's terms
constexpr double kGammaMax = 10.0;
constexpr int kParams = 7;
using Vector = Eigen::Matrix<double, kParams, 1>;

enum : int { kAlphaC, kBetaC, kAlphaN, kBetaN, kAlphaR, kBetaR, kGamma };

PolluxPerfParams from_vector(const Vector& theta) {
  return {theta[kAlphaC], theta[kBetaC], theta[kAlphaN], theta[kBetaN], theta[kAlphaR], theta[kBetaR], theta[kGamma]};
}

// Which link bounds the all-reduce (goodput.py _predict_network_time's np.select) and the replicas
// beyond 2 its retrogression term multiplies.
struct Link {
  int alpha = -1, beta = -1;  // parameter indices; −1: one replica, both terms 10⁻⁸
  double extra = kTiny;
};
Link link_of(int nodes, int replicas) {
  Link link;
  if (nodes > 1)
    link = {kAlphaN, kBetaN, 0};
  else if (replicas > 1)
    link = {kAlphaR, kBetaR, 0};
  link.extra = std::max(replicas - 2.0, kTiny);
  return link;
}

double network(const Vector& theta, const Link& link) {
  if (link.alpha < 0) return kTiny + kTiny * link.extra;
  return theta[link.alpha] + theta[link.beta] * link.extra;
}

// log T_step and its partial derivatives in log T_acc, log T_net and γ: with
// s = T_acc^γ + T_net^γ, log T_step = log(s)/γ, ∂/∂log T_acc = T_acc^γ/s (w_a), ∂/∂log T_net = w_n,
// ∂/∂γ = (w_a·log T_acc + w_n·log T_net − log T_step)/γ.
struct LogStep {
  double value, d_log_acc, d_log_net, d_gamma;
};
LogStep log_step(double log_acc, double log_net, double gamma) {
  // Scaled by the larger term (no overflow at γ = 10), whose exp(γ·0) is exactly 1.
  const bool acc_top = !(log_acc < log_net);  // std::max(log_acc, log_net)
  const double top = acc_top ? log_acc : log_net;
  const double a = acc_top ? 1.0 : std::exp(gamma * (log_acc - top)),
               n = acc_top ? std::exp(gamma * (log_net - top)) : 1.0;
  const double value = top + std::log(a + n) / gamma;
  const double wa = a / (a + n), wn = n / (a + n);
  return {value, wa, wn, (wa * log_acc + wn * log_net - value) / gamma};
}

// An observation as the objective reads it: its link and the logarithms of its times (and of its
// network time when no parameter sets it: one replica), taken once per fit — the objective is evaluated
// hundreds of times in one.
struct Sample {
  double local_batch;
  Link link;
  double log_accum, log_step, log_fixed_net;
};
std::vector<Sample> samples_of(const std::vector<PolluxPerfObservation>& obs) {
  std::vector<Sample> samples;
  samples.reserve(obs.size());
  for (const PolluxPerfObservation& o : obs) {
    const Link link = link_of(o.nodes, o.replicas);
    const double fixed_net = link.alpha < 0 ? std::log(network(Vector::Zero(), link)) : 0.0;
    samples.push_back({o.local_batch, link, std::log(o.accum_time), std::log(o.step_time), fixed_net});
  }
  return samples;
}

// The objective at θ and its gradient in θ (goodput.py _obj_fn: autograd's in the artifact).
double objective(const Vector& theta, const std::vector<Sample>& samples, Vector* gradient) {
  const auto count = static_cast<double>(samples.size());
  double sq1 = 0, sq2 = 0;
  Vector g1 = Vector::Zero(), g2 = Vector::Zero();
  for (const Sample& o : samples) {
    const double acc = theta[kAlphaC] + theta[kBetaC] * o.local_batch;
    const Link& link = o.link;
    const double net = network(theta, link);
    const double log_acc = std::log(acc);
    const LogStep step = log_step(log_acc, link.alpha < 0 ? o.log_fixed_net : std::log(net), theta[kGamma]);
    const double e1 = log_acc - o.log_accum, e2 = step.value - o.log_step;
    sq1 += e1 * e1;
    sq2 += e2 * e2;
    // ∂ log T_acc / ∂α_c = 1/T_acc, / ∂β_c = b/T_acc; ∂ log T_net / ∂α = 1/T_net, / ∂β = extra/T_net.
    const double dacc[2] = {1.0 / acc, o.local_batch / acc};
    for (int k = 0; k < 2; ++k) {
      g1[k] += e1 * dacc[k];
      g2[k] += e2 * step.d_log_acc * dacc[k];
    }
    if (link.alpha >= 0) {
      g2[link.alpha] += e2 * step.d_log_net / net;
      g2[link.beta] += e2 * step.d_log_net * link.extra / net;
    }
    g2[kGamma] += e2 * step.d_gamma;
  }
  // RMSE = sqrt(Σe²/N); its gradient Σe·∂e / (N·RMSE), none at an exact fit (a kink: 0 is a subgradient).
  const double err1 = std::sqrt(sq1 / count), err2 = std::sqrt(sq2 / count);
  const double gamma = theta[kGamma];
  const double rn = theta[kBetaN] / theta[kAlphaN], rr = theta[kBetaR] / theta[kAlphaR];
  const double value = err1 + err2 + 1e-3 * (gamma - 1) * (gamma - 1) + 1e-2 * (rn * rn + rr * rr);
  if (gradient != nullptr) {
    Vector g = Vector::Zero();
    if (err1 > 0) g += g1 / (count * err1);
    if (err2 > 0) g += g2 / (count * err2);
    g[kGamma] += 2e-3 * (gamma - 1);
    g[kBetaN] += 2e-2 * rn / theta[kAlphaN];
    g[kAlphaN] -= 2e-2 * rn * rn / theta[kAlphaN];
    g[kBetaR] += 2e-2 * rr / theta[kAlphaR];
    g[kAlphaR] -= 2e-2 * rr * rr / theta[kAlphaR];
    *gradient = g;
  }
  return value;
}

// The search variable x: log θ for the six positive parameters, γ itself; a fixed parameter has
// equal bounds. x ↦ θ and the chain rule ∂F/∂x_k = θ_k·∂F/∂θ_k for the logarithms.
Vector to_theta(const Vector& x) {
  Vector theta = x;
  for (int k = 0; k < kGamma; ++k) theta[k] = std::exp(x[k]);
  return theta;
}

struct Box {
  Vector lower, upper;
  [[nodiscard]] Vector project(const Vector& x) const { return x.cwiseMax(lower).cwiseMin(upper); }
};

// Projected quasi-Newton (Bertsekas, SIAM J. Control Optim. 20(2) 1982, two-metric projection): BFGS's
// inverse-Hessian step on the variables off their bounds, none on those held at a bound by the gradient,
// the point projected on the box, Armijo backtracking along the projection arc; the approximation is
// reset to the identity when its step does not descend.
Vector minimise(Vector x, const Box& box, const std::vector<Sample>& obs) {
  using Matrix = Eigen::Matrix<double, kParams, kParams>;
  constexpr int kIterations = 1000, kBacktracks = 60;
  constexpr double kArmijo = 1e-4, kTolerance = 1e-12;
  const auto evaluate = [&](const Vector& at, Vector& gradient) {
    const Vector theta = to_theta(at);
    Vector g;
    const double value = objective(theta, obs, &g);
    for (int k = 0; k < kGamma; ++k) g[k] *= theta[k];
    gradient = g;
    return value;
  };
  x = box.project(x);
  Vector g;
  double f = evaluate(x, g);
  Matrix inverse = Matrix::Identity();
  for (int it = 0; it < kIterations; ++it) {
    if ((box.project(x - g) - x).lpNorm<Eigen::Infinity>() < kTolerance) break;  // stationary on the box
    Vector free;
    for (int k = 0; k < kParams; ++k) {
      const bool held =
          (x[k] <= box.lower[k] && g[k] > 0) || (x[k] >= box.upper[k] && g[k] < 0) || box.lower[k] == box.upper[k];
      free[k] = held ? 0.0 : 1.0;
    }
    const Matrix mask = free.asDiagonal();
    Vector d = -(mask * inverse * mask) * g;
    if (g.dot(d) >= 0) {
      inverse.setIdentity();
      d = -mask * g;
    }
    double t = 1.0, next_f = f;
    Vector next, next_g;
    int tries = 0;
    for (; tries < kBacktracks; ++tries, t *= 0.5) {
      next = box.project(x + t * d);
      next_f = evaluate(next, next_g);
      if (next_f <= f + kArmijo * g.dot(next - x)) break;
    }
    if (tries == kBacktracks || next == x) break;  // no decrease left
    const Vector s = next - x, y = next_g - g;
    const double sy = s.dot(y);
    if (sy > 1e-12 * s.norm() * y.norm()) {
      // BFGS update of the inverse Hessian (Nocedal & Wright, Numerical Optimization, eq. 6.17).
      const double rho = 1.0 / sy;
      const Matrix left = Matrix::Identity() - rho * s * y.transpose();
      inverse = left * inverse * left.transpose() + rho * s * s.transpose();
    }
    x = next;
    g = next_g;
    f = next_f;
  }
  return x;
}

}  // namespace

double pollux_accum_time(const PolluxPerfParams& p, double local_batch) { return p.alpha_c + p.beta_c * local_batch; }

double pollux_network_time(const PolluxPerfParams& p, int nodes, int replicas) {
  const Vector theta{p.alpha_c, p.beta_c, p.alpha_n, p.beta_n, p.alpha_r, p.beta_r, p.gamma};
  return network(theta, link_of(nodes, replicas));
}

double pollux_step_time(const PolluxPerfParams& p, int nodes, int replicas, double local_batch) {
  return std::exp(
      log_step(std::log(pollux_accum_time(p, local_batch)), std::log(pollux_network_time(p, nodes, replicas)), p.gamma)
          .value);
}

double pollux_perf_objective(const PolluxPerfParams& p, const std::vector<PolluxPerfObservation>& observations) {
  const Vector theta{p.alpha_c, p.beta_c, p.alpha_n, p.beta_n, p.alpha_r, p.beta_r, p.gamma};
  return objective(theta, samples_of(observations), nullptr);
}

PolluxPerfParams fit_pollux_perf_params(const std::vector<PolluxPerfObservation>& obs) {
  if (obs.empty()) throw std::invalid_argument("fit_pollux_perf_params: no observations");
  Vector start{0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.0 + 1e-3};
  Vector lower, upper;
  lower.fill(kTiny);
  upper.fill(std::numeric_limits<double>::infinity());
  lower[kGamma] = 1.0;
  upper[kGamma] = kGammaMax;
  const auto fix = [&](int k, double value) { start[k] = lower[k] = upper[k] = value; };
  const auto any = [&](auto&& predicate) { return std::any_of(obs.begin(), obs.end(), predicate); };
  if (std::all_of(obs.begin(), obs.end(), [&](const auto& o) { return o.local_batch == obs.front().local_batch; })) {
    double mean = 0;
    for (const auto& o : obs) mean += o.accum_time / static_cast<double>(obs.size());
    fix(kAlphaC, mean / 2);
  }
  const bool multi_node = any([](const auto& o) { return o.nodes > 1; });
  if (!multi_node) {
    fix(kAlphaN, kTiny);
    fix(kBetaN, kTiny);
  }
  if (!any([](const auto& o) { return o.nodes == 1 && o.replicas > 1; })) {
    fix(kAlphaR, kTiny);
    fix(kBetaR, kTiny);
  }
  if (!any([](const auto& o) { return o.replicas > 2; })) {
    fix(kBetaN, kTiny);
    fix(kBetaR, kTiny);
  }
  Box box{lower, upper};
  for (int k = 0; k < kGamma; ++k) {
    box.lower[k] = std::log(lower[k]);
    box.upper[k] = std::log(upper[k]);  // log ∞ = ∞
    start[k] = std::log(start[k]);
  }
  Vector theta = to_theta(minimise(start, box, samples_of(obs)));
  for (int k = 0; k < kGamma; ++k)
    if (lower[k] == upper[k]) theta[k] = lower[k];  // exactly, not exp(log(·))
  PolluxPerfParams p = from_vector(theta);
  if (!multi_node) {
    p.alpha_n = std::max(p.alpha_n, p.alpha_r * 1.1);
    p.beta_n = std::max(p.beta_n, p.beta_r * 1.1);
  }
  return p;
}

}  // namespace dnnsim
