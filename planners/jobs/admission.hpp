// Admission and posted pricing at a job's arrival (issue 13 item 5; papers-cluster.md §7): the
// provider posts a price per GPU-hour that rises with utilisation and admits a job iff its value per
// GPU-hour covers the price; a rejected job leaves (status "rejected"). The plug-in point a learned
// pricing policy (Du, Huang, Wu, "Adversarial Deep Learning for Online Resource Allocation",
// arXiv:2111.10285) would be compared against, offline, on the same job streams.
//
// Baseline: the exponential threshold policy of online knapsack (Zhou, Chakrabarty, Lukose,
// "Budget Constrained Bidding in Keyword Auctions and Online Knapsack Problems", WINE'08, §3):
// with values per unit of capacity in [L, U] and the fraction y ∈ [0, 1] of capacity in use,
//     ψ(y) = (L/e) · (U·e/L)^y,
// admitting iff value ≥ ψ(y) is (1 + ln(U/L))-competitive against the offline optimum when every
// item is small against the capacity. Below y = 1/(1 + ln(U/L)) the price is under L: everything is
// admitted; at y = 1 it is U.
//
// Traces carry no values: each job draws its value per GPU-hour uniformly in [L, U] from the
// admission seed (AdmissionConfig), the same draws whatever the policy, so policies compare on one
// stream.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"

namespace dnnsim {

// The jobs' values (the section's keys, whatever the policy): what a policy prices against.
struct AdmissionConfig {
  double min_value = 1;   // L, per GPU-hour
  double max_value = 10;  // U
  std::uint64_t seed = 1;
};

class AdmissionPolicy {
 public:
  virtual ~AdmissionPolicy() = default;
  // The posted price per GPU-hour at utilisation y (allocated GPUs / GPUs, before the job).
  [[nodiscard]] virtual double price(double utilisation) const = 0;
  [[nodiscard]] bool admit(double value, double utilisation) const { return value >= price(utilisation); }
};

// Made from its declared options (Registry::Entry::options) and the jobs' value range.
using AdmissionFactory =
    std::function<std::unique_ptr<AdmissionPolicy>(const Options& options, const AdmissionConfig& values)>;
using AdmissionRegistry = Registry<AdmissionFactory>;

void register_builtin_admissions(AdmissionRegistry& registry);
[[nodiscard]] const AdmissionRegistry& builtin_admissions();

// Each of `jobs` jobs' value per GPU-hour, uniform in [L, U] from the seed (uniform_draw of mt19937_64,
// models/common/random.hpp: the same values on every platform).
[[nodiscard]] std::vector<double> draw_job_values(std::size_t jobs, const AdmissionConfig& config);

}  // namespace dnnsim
