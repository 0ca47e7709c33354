// Least-squares fit of the Optimus loss curve
//     l(x) = 1 / (a·x + b) + c
// (Peng et al., "Optimus: An Efficient Dynamic Resource Scheduler for Deep Learning Clusters",
// EuroSys'18, eq. 1, where x is the number of steps; ADSP, Hu et al., "Adaptive Synchronization
// Parameter Server", §6, fits the same form to loss against time) to points (x_i, l_i).
//
// Used twice: `dnnsim calibrate convergence` fits a, b, c of the statistical-efficiency model to a
// sequential training run (x = steps, models/sync/proxy_training.hpp), and the ADSP sync policy's
// parameter server fits loss against time while training.
//
// Method: Levenberg–Marquardt (Eigen's unsupported module, MINPACK's lmder) on the residuals
// r_i = 1/(a·x_i + b) + c − l_i with the analytic Jacobian, from a start that is already close:
// for each c₀ of a grid from 0 to just below the smallest loss, a₀, b₀ from the linear least-squares
// fit of 1/(l_i − c₀) against x_i (the curve is a straight line in those coordinates when c is
// right), and of those the start with the smallest residual in loss units. A loss never falls
// below zero, so when the unconstrained optimum has c < 0 the fit is redone with c = 0 (the
// constrained optimum then lies on that boundary).
#pragma once

#include <vector>

namespace dnnsim {

struct LossCurveFit {
  double a = 0.0, b = 1.0, c = 0.0;  // l(x) = 1/(a·x + b) + c
  double rms = 0.0;                  // root-mean-square residual, in loss units
  bool ok = false;  // LM converged to a finite curve with a > 0 and b > 0 (falling, defined at x ≥ 0)
};

// Fits the curve to (x[i], loss[i]), i < x.size(); needs at least 3 points (else ok = false).
// @throw std::invalid_argument when x and loss differ in size.
[[nodiscard]] LossCurveFit fit_loss_curve(const std::vector<double>& x, const std::vector<double>& loss);

}  // namespace dnnsim
