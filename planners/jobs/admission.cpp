#include "planners/jobs/admission.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "models/common/builtin_registry.hpp"
#include "models/common/random.hpp"

namespace dnnsim {
namespace {

class AdmitAll final : public AdmissionPolicy {
 public:
  double price(double) const override { return 0.0; }
};

class ThresholdPrice final : public AdmissionPolicy {
 public:
  explicit ThresholdPrice(const AdmissionConfig& config) : low_(config.min_value), high_(config.max_value) {}
  double price(double utilisation) const override {
    const double y = std::clamp(utilisation, 0.0, 1.0);
    return low_ / std::exp(1.0) * std::pow(high_ * std::exp(1.0) / low_, y);
  }

 private:
  double low_, high_;
};

}  // namespace

void register_builtin_admissions(AdmissionRegistry& registry) {
  registry.add("admit-all", "every job is admitted (price 0): the cluster as the schedulers see it", "dnnsim",
               [](const Options&, const AdmissionConfig&) { return std::make_unique<AdmitAll>(); });
  registry.add("threshold-price",
               "posted price ψ(y) = (L/e)(Ue/L)^y per GPU-hour at utilisation y; admit iff value ≥ ψ",
               "Zhou, Chakrabarty, Lukose, WINE'08 §3 (baseline of Du, Huang, Wu, arXiv:2111.10285)",
               [](const Options&, const AdmissionConfig& config) { return std::make_unique<ThresholdPrice>(config); });
}

const AdmissionRegistry& builtin_admissions() {
  return builtin_registry<AdmissionRegistry, register_builtin_admissions>("admission policy");
}

std::vector<double> draw_job_values(std::size_t jobs, const AdmissionConfig& config) {
  std::mt19937_64 engine(config.seed);
  std::vector<double> values(jobs);
  for (double& value : values) {
    const double u = uniform_draw(engine);
    value = config.min_value + u * (config.max_value - config.min_value);
  }
  return values;
}

}  // namespace dnnsim
