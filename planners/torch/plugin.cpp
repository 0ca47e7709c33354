// libdnnsim_torch.so: the libtorch side of the multi-agent scheduler (planners/jobs/marl/policy.hpp
// for the model and its citations) and of the MLP interference predictor (interference_mlp.hpp),
// behind planners/jobs/marl/torch_plugin.hpp. With digits_mlp.cpp, the only translation units that
// include libtorch.
#include "planners/jobs/marl/torch_plugin.hpp"
#include "planners/torch/digits_mlp.hpp"

// Before any other torch header: clang in C++20 mode (the fuzz preset) needs c10::IValue complete
// where libtorch 1.13's headers only declare it (a std::vector<IValue> member).
#include <ATen/core/ivalue.h>
#include <torch/nn.h>
#include <torch/optim.h>
#include <torch/serialize.h>
#include <torch/utils.h>

#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

namespace dnnsim {
namespace {
constexpr int kHidden = 32;
constexpr int kMlpHidden = 16;  // interference MLP
constexpr int kMlpEpochs = 600;
using Obs = MarlObservation;

torch::Tensor floats(const std::vector<float>& values, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(values.data()), shape, torch::kFloat32).clone();
}
torch::Tensor indices(const std::vector<std::int64_t>& values) {
  return torch::from_blob(const_cast<std::int64_t*>(values.data()), {static_cast<std::int64_t>(values.size())},
                          torch::kInt64)
      .clone();
}
// Mean of `rows` grouped by `group` into `groups` rows.
torch::Tensor group_mean(const torch::Tensor& rows, const torch::Tensor& group, std::int64_t groups) {
  auto sums = torch::zeros({groups, rows.size(1)}).index_add(0, group, rows);
  auto counts = torch::zeros({groups}).index_add(0, group, torch::ones({rows.size(0)})).clamp_min(1.0);
  return sums / counts.unsqueeze(1);
}

struct Net : torch::nn::Module {
  torch::nn::Linear gpu_in{nullptr}, gpu_message{nullptr}, server_in{nullptr}, rack_in{nullptr};
  torch::nn::Linear place_hidden{nullptr}, place_out{nullptr}, pack_hidden{nullptr}, pack_out{nullptr};
  torch::nn::Linear stop_hidden{nullptr}, stop_out{nullptr}, value_hidden{nullptr}, value_out{nullptr};

  Net() {
    gpu_in = register_module("gpu_in", torch::nn::Linear(Obs::kGpuFeatures, kHidden));
    gpu_message = register_module("gpu_message", torch::nn::Linear(2 * kHidden, kHidden));
    server_in = register_module("server_in", torch::nn::Linear(kHidden + Obs::kServerFeatures, kHidden));
    rack_in = register_module("rack_in", torch::nn::Linear(kHidden, kHidden));
    const int action_in = 3 * kHidden + Obs::kJobFeatures + Obs::kActionFeatures;
    place_hidden = register_module("place_hidden", torch::nn::Linear(action_in, kHidden));
    place_out = register_module("place_out", torch::nn::Linear(kHidden, 1));
    pack_hidden = register_module("pack_hidden", torch::nn::Linear(action_in, kHidden));
    pack_out = register_module("pack_out", torch::nn::Linear(kHidden, 1));
    stop_hidden = register_module("stop_hidden", torch::nn::Linear(kHidden + Obs::kJobFeatures, kHidden));
    stop_out = register_module("stop_out", torch::nn::Linear(kHidden, 1));
    value_hidden = register_module("value_hidden", torch::nn::Linear(kHidden + Obs::kQueueFeatures, kHidden));
    value_out = register_module("value_out", torch::nn::Linear(kHidden, 1));
  }

  struct Output {
    torch::Tensor log_probs;  // [C·2S + 1], masked actions at ≈ −1e9
    torch::Tensor value;      // scalar
  };

  Output forward(const Obs& o) {
    const std::int64_t S = o.servers;
    const std::int64_t G = static_cast<std::int64_t>(o.gpu_server.size());
    const auto gpu_server = indices(o.gpu_server);
    // Level 1: the GPUs of each server graph.
    auto h = torch::relu(gpu_in(floats(o.gpu, {G, Obs::kGpuFeatures})));
    h = torch::relu(gpu_message(torch::cat({h, group_mean(h, gpu_server, S).index_select(0, gpu_server)}, 1)));
    auto servers = torch::relu(
        server_in(torch::cat({group_mean(h, gpu_server, S), floats(o.server, {S, Obs::kServerFeatures})}, 1)));
    // Level 2: racks and the cluster.
    const auto rack = indices(o.server_rack);
    const auto racks = torch::relu(rack_in(group_mean(servers, rack, o.racks)));
    const auto cluster = racks.mean(0);
    // Actions: every (candidate, server) pair, from [server ‖ its rack ‖ cluster ‖ candidate ‖ action
    // features]; stop from the cluster and the candidates' mean.
    const std::int64_t C = o.candidates;
    const auto jobs = floats(o.job, {C, Obs::kJobFeatures});
    const auto context = torch::cat({servers, racks.index_select(0, rack), cluster.expand({S, kHidden})}, 1)
                             .unsqueeze(0)
                             .expand({C, S, 3 * kHidden});
    const auto pair = torch::cat({context, jobs.unsqueeze(1).expand({C, S, Obs::kJobFeatures})}, 2);
    const auto place =
        place_out(
            torch::relu(place_hidden(torch::cat({pair, floats(o.place_action, {C, S, Obs::kActionFeatures})}, 2))))
            .squeeze(2);
    const auto pack =
        pack_out(torch::relu(pack_hidden(torch::cat({pair, floats(o.pack_action, {C, S, Obs::kActionFeatures})}, 2))))
            .squeeze(2);
    const auto stop = stop_out(torch::relu(stop_hidden(torch::cat({cluster, jobs.mean(0)})))).reshape({1});
    std::vector<float> penalty(o.mask.size());
    for (std::size_t a = 0; a < penalty.size(); ++a) penalty[a] = o.mask[a] ? 0.0f : -1e9f;
    const auto logits = torch::cat({torch::cat({place, pack}, 1).reshape({-1}), stop}) +
                        floats(penalty, {static_cast<std::int64_t>(penalty.size())});
    const auto value =
        value_out(torch::relu(value_hidden(torch::cat({cluster, floats(o.queue, {Obs::kQueueFeatures})})))).squeeze();
    return {torch::log_softmax(logits, 0), value};
  }
};

// Through a stream: saved to a path, the archive's inner folder is named after the file, so the same
// weights would give different bytes under different names.
class TorchNetwork final : public MarlNetwork {
 public:
  explicit TorchNetwork(std::shared_ptr<Net> net) : net_(std::move(net)) {}

  int greedy(const MarlObservation& observation) const override {
    torch::NoGradGuard no_grad;
    return static_cast<int>(net_->forward(observation).log_probs.argmax().item<std::int64_t>());
  }
  void save(std::ostream& out) const override { torch::save(net_, out); }
  std::size_t parameter_count() const override {
    std::size_t n = 0;
    for (const auto& p : net_->parameters()) n += static_cast<std::size_t>(p.numel());
    return n;
  }
  std::unique_ptr<PolicyTape> tape() override;
  std::unique_ptr<PolicyOptimizer> optimizer(double learning_rate) override;

 private:
  std::shared_ptr<Net> net_;
};

class TorchTape final : public PolicyTape {
 public:
  explicit TorchTape(std::shared_ptr<Net> net) : net_(std::move(net)) {}

  std::vector<double> probabilities(const MarlObservation& observation) override {
    pending_ = net_->forward(observation);
    const auto probs = pending_.log_probs.detach().exp();
    const auto* p = probs.data_ptr<float>();
    std::vector<double> result(p, p + probs.numel());
    for (std::size_t a = 0; a < result.size(); ++a)
      if (!observation.mask[a]) result[a] = 0.0;
    return result;
  }
  void choose(int action) override {
    log_prob_.push_back(pending_.log_probs[action]);
    entropy_.push_back(-(pending_.log_probs.exp() * pending_.log_probs).sum());
    value_.push_back(pending_.value);
  }
  void label(int action) override { label_log_prob_.push_back(pending_.log_probs[action]); }
  Loss backward(const std::vector<double>& returns, double entropy_weight, double value_weight,
                double imitation_weight) override {
    const auto G = targets(returns);
    const auto V = torch::stack(value_);
    auto advantage = G - V.detach();
    if (returns.size() > 1) advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8);
    const auto entropy = torch::stack(entropy_).mean();
    auto loss =
        -(torch::stack(log_prob_) * advantage).mean() - entropy_weight * entropy + value_weight * (G - V).pow(2).mean();
    if (label_log_prob_.empty()) return differentiate(loss, entropy, 0.0);
    const auto cross_entropy = -torch::stack(label_log_prob_).mean();
    if (imitation_weight > 0.0) loss = loss + imitation_weight * cross_entropy;
    return differentiate(loss, entropy, cross_entropy.item<double>());
  }
  Loss imitate(const std::vector<double>& returns, double value_weight) override {
    const auto G = targets(returns);
    const auto cross_entropy = -torch::stack(log_prob_).mean();
    return differentiate(cross_entropy + value_weight * (G - torch::stack(value_)).pow(2).mean(),
                         torch::stack(entropy_).mean(), cross_entropy.item<double>());
  }

 private:
  static torch::Tensor targets(const std::vector<double>& returns) {
    return torch::tensor(std::vector<float>(returns.begin(), returns.end()));
  }
  Loss differentiate(const torch::Tensor& loss, const torch::Tensor& entropy, double cross_entropy) {
    const auto parameters = net_->parameters();
    for (const auto& p : parameters) p.mutable_grad() = torch::Tensor();
    loss.backward();
    Loss result;
    for (const auto& p : parameters) {
      const auto grad = p.grad().defined() ? p.grad().contiguous() : torch::zeros_like(p);
      const auto* data = grad.data_ptr<float>();
      result.gradient.insert(result.gradient.end(), data, data + grad.numel());
    }
    result.loss = loss.item<double>();
    result.entropy = entropy.item<double>();
    result.cross_entropy = cross_entropy;
    return result;
  }

  std::shared_ptr<Net> net_;
  Net::Output pending_;
  std::vector<torch::Tensor> log_prob_, entropy_, value_, label_log_prob_;
};

class TorchOptimizer final : public PolicyOptimizer {
 public:
  TorchOptimizer(std::vector<torch::Tensor> parameters, double learning_rate)
      : parameters_(parameters), adam_(std::move(parameters), torch::optim::AdamOptions(learning_rate)) {}
  void apply(const std::vector<float>& gradient) override {
    std::size_t offset = 0;
    for (auto& p : parameters_) {
      const auto n = static_cast<std::size_t>(p.numel());
      if (offset + n > gradient.size()) throw std::logic_error("MarlOptimizer: gradient shorter than the parameters");
      p.mutable_grad() =
          torch::from_blob(const_cast<float*>(gradient.data() + offset), p.sizes(), torch::kFloat32).clone();
      offset += n;
    }
    if (offset != gradient.size()) throw std::logic_error("MarlOptimizer: gradient longer than the parameters");
    torch::nn::utils::clip_grad_norm_(parameters_, 1.0);
    adam_.step();
  }

 private:
  std::vector<torch::Tensor> parameters_;
  torch::optim::Adam adam_;
};

std::unique_ptr<PolicyTape> TorchNetwork::tape() { return std::make_unique<TorchTape>(net_); }
std::unique_ptr<PolicyOptimizer> TorchNetwork::optimizer(double learning_rate) {
  return std::make_unique<TorchOptimizer>(net_->parameters(), learning_rate);
}

// The MLP interference predictor (interference_mlp.hpp).
class InterferenceMlp final : public InterferencePredictor {
 public:
  InterferenceMlp(const std::vector<ColocatedPair>& pairs, std::uint64_t seed) {
    for (const auto& pair : pairs)
      for (const auto* type : {&pair.victim, &pair.aggressor}) index_.emplace(*type, 0);
    int next = 0;
    for (auto& [type, index] : index_) index = next++;
    const auto types = static_cast<std::int64_t>(index_.size());
    torch::manual_seed(seed);
    layers_ = torch::nn::Sequential(torch::nn::Linear(2 * types, kMlpHidden), torch::nn::ReLU(),
                                    torch::nn::Linear(kMlpHidden, 1));
    auto inputs = torch::zeros({static_cast<std::int64_t>(pairs.size()), 2 * types});
    auto targets = torch::zeros({static_cast<std::int64_t>(pairs.size()), 1});
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const auto row = static_cast<std::int64_t>(k);
      inputs[row][index_.at(pairs[k].victim)] = 1.0;
      inputs[row][types + index_.at(pairs[k].aggressor)] = 1.0;
      targets[row][0] = std::log(pairs[k].slowdown);
    }
    torch::optim::Adam adam(layers_->parameters(), torch::optim::AdamOptions(0.01));
    for (int epoch = 0; epoch < kMlpEpochs; ++epoch) {
      adam.zero_grad();
      const auto loss = torch::mse_loss(layers_->forward(inputs), targets);
      loss.backward();
      adam.step();
    }
  }
  bool knows(const std::string& job_type) const override { return index_.count(job_type) > 0; }
  double slowdown(const std::string& victim, const std::vector<std::string>& co_runners) const override {
    torch::NoGradGuard no_grad;
    const auto types = static_cast<std::int64_t>(index_.size());
    double slowdown = 1.0;
    for (const auto& other : co_runners) {
      auto input = torch::zeros({1, 2 * types});
      if (auto it = index_.find(victim); it != index_.end()) input[0][it->second] = 1.0;
      if (auto it = index_.find(other); it != index_.end()) input[0][types + it->second] = 1.0;
      slowdown += std::exp(layers_->forward(input).item<double>()) - 1.0;
    }
    return slowdown;
  }

 private:
  std::map<std::string, int> index_;  // job type → one-hot position
  mutable torch::nn::Sequential layers_{nullptr};
};

class Plugin final : public TorchPlugin {
 public:
  // One intra-op thread: the networks are small, and training forks one process per episode.
  std::shared_ptr<MarlNetwork> new_network(std::uint64_t seed) const override {
    torch::set_num_threads(1);
    torch::manual_seed(seed);
    return std::make_shared<TorchNetwork>(std::make_shared<Net>());
  }
  std::shared_ptr<MarlNetwork> load_network(std::istream& in) const override {
    torch::set_num_threads(1);
    auto net = std::make_shared<Net>();
    try {
      torch::load(net, in);
    } catch (const c10::Error& error) {
      throw std::runtime_error("not a policy of this scheduler (" + std::string(error.what_without_backtrace()) + ")");
    }
    return std::make_shared<TorchNetwork>(std::move(net));
  }
  std::unique_ptr<InterferencePredictor> fit_mlp(const std::vector<ColocatedPair>& pairs,
                                                 std::uint64_t seed) const override {
    return std::make_unique<InterferenceMlp>(pairs, seed);
  }
  std::unique_ptr<ProxyModel> digits_mlp(const DigitsData& data, int hidden, std::uint64_t seed) const override {
    return make_digits_mlp(data, hidden, seed);
  }
};

}  // namespace
}  // namespace dnnsim

extern "C" const dnnsim::TorchPlugin* dnnsim_torch_plugin() {
  static const dnnsim::Plugin plugin;
  return &plugin;
}
