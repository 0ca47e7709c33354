#include "models/sync/loss_curve_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unsupported/Eigen/LevenbergMarquardt>

namespace dnnsim {
namespace {

// Residuals of the curve in scaled time t = x / x_scale (so that a·t is of the order of b whatever
// the unit of x), over the parameters (a, b[, c]); with `fixed_c` c is not a parameter.
struct CurveResiduals : Eigen::DenseFunctor<double> {
  CurveResiduals(const Eigen::VectorXd& t, const Eigen::VectorXd& loss, bool fit_c, double fixed_c)
      : DenseFunctor<double>(fit_c ? 3 : 2, static_cast<int>(t.size())),
        t(t),
        loss(loss),
        fit_c(fit_c),
        fixed_c(fixed_c) {}

  int operator()(const InputType& p, ValueType& r) const {
    const double c = fit_c ? p[2] : fixed_c;
    r = (1.0 / (p[0] * t.array() + p[1]) + c - loss.array()).matrix();
    return 0;
  }
  // ∂r/∂a = −t/(a·t + b)², ∂r/∂b = −1/(a·t + b)², ∂r/∂c = 1.
  int df(const InputType& p, JacobianType& jacobian) const {
    const Eigen::ArrayXd inv_sq = (p[0] * t.array() + p[1]).square().inverse();
    jacobian.col(0) = (-t.array() * inv_sq).matrix();
    jacobian.col(1) = (-inv_sq).matrix();
    if (fit_c) jacobian.col(2).setOnes();
    return 0;
  }

  Eigen::VectorXd t, loss;
  bool fit_c;
  double fixed_c;
};

// MINPACK's stopping reasons: 1–4 are convergence tests met; 6–8 say the tolerances cannot be met
// in double precision, i.e. no further step improves the fit, which is convergence as well.
bool converged(Eigen::LevenbergMarquardtSpace::Status status) {
  using namespace Eigen::LevenbergMarquardtSpace;
  switch (status) {
    case RelativeReductionTooSmall:
    case RelativeErrorTooSmall:
    case RelativeErrorAndReductionTooSmall:
    case CosinusTooSmall:
    case FtolTooSmall:
    case XtolTooSmall:
    case GtolTooSmall:
      return true;
    default:
      return false;
  }
}

struct Attempt {
  Eigen::VectorXd p;
  bool converged = false;
};

// Eigen's LM holds a non-const reference to its functor, hence the copy.
Attempt minimize(CurveResiduals residuals, Eigen::VectorXd start) {
  Eigen::LevenbergMarquardt<CurveResiduals> lm(residuals);
  lm.setMaxfev(2000);
  const auto status = lm.minimize(start);
  return {start, converged(status)};
}

}  // namespace

LossCurveFit fit_loss_curve(const std::vector<double>& x, const std::vector<double>& loss) {
  if (x.size() != loss.size()) throw std::invalid_argument("fit_loss_curve: x and loss differ in size");
  LossCurveFit fit;
  const std::size_t n = x.size();
  if (n < 3) return fit;

  double x_scale = 0.0;
  for (double v : x) x_scale = std::max(x_scale, std::abs(v));
  if (x_scale == 0.0) x_scale = 1.0;
  Eigen::VectorXd t(n), l(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[static_cast<Eigen::Index>(i)] = x[i] / x_scale;
    l[static_cast<Eigen::Index>(i)] = loss[i];
  }
  const double l_min = l.minCoeff(), l_max = l.maxCoeff();
  if (!(l_max > l_min)) return fit;  // a flat (or non-finite) series has no falling curve

  // The start: for c₀ on a grid below the smallest loss, 1/(l − c₀) = a·t + b by linear least
  // squares; the c₀ whose line gives the smallest squared residual in loss units wins. (c₀ just
  // below the smallest loss alone is a poor start when the run stopped before the curve flattened.)
  Eigen::Vector3d start(0.0, 1.0 / (l_max - l_min), l_min);
  double start_sse = std::numeric_limits<double>::infinity();
  constexpr int kStartGrid = 40;
  for (int i = 0; i < kStartGrid; ++i) {
    const double c0 = std::max(0.0, l_min - (l_max - l_min) / 64.0) * i / (kStartGrid - 1);
    const Eigen::ArrayXd y = (l.array() - c0).inverse();
    const double t_mean = t.mean(), y_mean = y.mean();
    const double sxx = (t.array() - t_mean).square().sum();
    const double a0 = sxx > 0.0 ? ((t.array() - t_mean) * (y - y_mean)).sum() / sxx : 0.0;
    const double b0 = y_mean - a0 * t_mean;
    const Eigen::ArrayXd line = a0 * t.array() + b0;
    if ((line <= 0.0).any()) continue;
    const double sse = (line.inverse() + c0 - l.array()).square().sum();
    if (sse < start_sse) start_sse = sse, start = Eigen::Vector3d(a0, b0, c0);
  }

  Attempt best = minimize(CurveResiduals(t, l, true, 0.0), start);
  double c = best.p[2];
  if (c < 0.0) {
    best = minimize(CurveResiduals(t, l, false, 0.0), Eigen::Vector2d(best.p[0], best.p[1]));
    c = 0.0;
  }
  fit.a = best.p[0] / x_scale;
  fit.b = best.p[1];
  fit.c = c;
  double sum_sq = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = 1.0 / (fit.a * x[i] + fit.b) + fit.c - loss[i];
    sum_sq += r * r;
  }
  fit.rms = std::sqrt(sum_sq / static_cast<double>(n));
  fit.ok = best.converged && std::isfinite(fit.a) && std::isfinite(fit.b) && std::isfinite(fit.rms) && fit.a > 0.0 &&
           fit.b > 0.0;
  return fit;
}

}  // namespace dnnsim
