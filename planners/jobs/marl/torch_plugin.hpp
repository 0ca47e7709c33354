// The libtorch side of the learned scheduler, behind interfaces without torch types: libtorch (and
// the 290 libraries it pulls in) takes seconds to load, so it lives in a plugin, libdnnsim_torch.so
// (planners/torch/), that dnnsim opens (dlopen) the first time a `marl` scheduler, its training,
// the MLP interference predictor or the convergence calibration's network is used — every other run
// and test starts without it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "models/sync/proxy_training.hpp"
#include "planners/jobs/interference.hpp"
#include "planners/jobs/marl/observation.hpp"

namespace dnnsim {

// One training episode's autograd record: each chosen step's log-probability, entropy and value.
class PolicyTape {
 public:
  virtual ~PolicyTape() = default;
  // The policy's action probabilities for `observation` (masked actions 0); keeps the graph until
  // choose() records the step.
  virtual std::vector<double> probabilities(const MarlObservation& observation) = 0;
  virtual void choose(int action) = 0;
  // A teacher's action in the step's state (before choose()), for backward()'s imitation term and
  // its cross-entropy.
  virtual void label(int action) = 0;
  struct Loss {
    std::vector<float> gradient;  // flattened in parameter order
    double loss = 0.0;
    double entropy = 0.0;        // mean over the steps
    double cross_entropy = 0.0;  // imitate(): −mean log π(chosen action)
  };
  // The actor-critic loss of the recorded steps given their returns (policy.hpp); at least one step.
  // With labels (one per step), their cross-entropy is reported and, times `imitation_weight` when it
  // is positive, added to the loss.
  virtual Loss backward(const std::vector<double>& returns, double entropy_weight, double value_weight,
                        double imitation_weight) = 0;
  // Behaviour cloning of the recorded (teacher's) actions: −mean log π(a_k) + c·mean((G_k − V_k)²), the
  // critic learning the teacher's returns alongside (policy.hpp); at least one step.
  virtual Loss imitate(const std::vector<double>& returns, double value_weight) = 0;
};

class PolicyOptimizer {
 public:
  virtual ~PolicyOptimizer() = default;
  virtual void apply(const std::vector<float>& gradient) = 0;
};

class MarlNetwork {
 public:
  virtual ~MarlNetwork() = default;
  [[nodiscard]] virtual int greedy(const MarlObservation& observation) const = 0;
  // libtorch's archive of the weights, through a stream so that its bytes do not depend on a file name.
  virtual void save(std::ostream& out) const = 0;
  [[nodiscard]] virtual std::size_t parameter_count() const = 0;
  [[nodiscard]] virtual std::unique_ptr<PolicyTape> tape() = 0;
  [[nodiscard]] virtual std::unique_ptr<PolicyOptimizer> optimizer(double learning_rate) = 0;
};

class TorchPlugin {
 public:
  virtual ~TorchPlugin() = default;
  [[nodiscard]] virtual std::shared_ptr<MarlNetwork> new_network(std::uint64_t seed) const = 0;
  // @throw std::runtime_error when the file is not a policy of this architecture.
  [[nodiscard]] virtual std::shared_ptr<MarlNetwork> load_network(std::istream& in) const = 0;
  [[nodiscard]] virtual std::unique_ptr<InterferencePredictor> fit_mlp(const std::vector<ColocatedPair>& pairs,
                                                                       std::uint64_t seed) const = 0;
  // The calibration's non-convex proxy (planners/torch/digits_mlp.hpp); `data` must outlive it.
  [[nodiscard]] virtual std::unique_ptr<ProxyModel> digits_mlp(const DigitsData& data, int hidden,
                                                               std::uint64_t seed) const = 0;
};

// The plugin, opened once per process. @throw std::runtime_error naming the file when it cannot be loaded.
[[nodiscard]] const TorchPlugin& torch_plugin();

}  // namespace dnnsim

// The plugin's one exported symbol.
extern "C" const dnnsim::TorchPlugin* dnnsim_torch_plugin();
