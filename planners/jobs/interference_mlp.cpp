#include "planners/jobs/interference_mlp.hpp"

// Before any other torch header: clang in C++20 mode (the fuzz preset) needs c10::IValue complete
// where libtorch 1.13's headers only declare it (a std::vector<IValue> member).
#include <ATen/core/ivalue.h>

#include <torch/nn.h>
#include <torch/optim.h>

#include <cmath>

namespace dnnsim {

namespace {
constexpr int kHidden = 16;
constexpr int kEpochs = 600;
}  // namespace

struct InterferenceMlp::Net {
  torch::nn::Sequential layers;
};

InterferenceMlp::InterferenceMlp() : net_(std::make_unique<Net>()) {}
InterferenceMlp::~InterferenceMlp() = default;
InterferenceMlp::InterferenceMlp(InterferenceMlp&&) noexcept = default;
InterferenceMlp& InterferenceMlp::operator=(InterferenceMlp&&) noexcept = default;

InterferenceMlp InterferenceMlp::fit(const std::vector<ColocatedPair>& pairs, std::uint64_t seed) {
  InterferenceMlp model;
  for (const auto& pair : pairs)
    for (const auto* type : {&pair.victim, &pair.aggressor}) model.index_.emplace(*type, 0);
  int next = 0;
  for (auto& [type, index] : model.index_) index = next++;
  const auto types = static_cast<std::int64_t>(model.index_.size());
  torch::manual_seed(seed);
  model.net_->layers = torch::nn::Sequential(torch::nn::Linear(2 * types, kHidden), torch::nn::ReLU(), torch::nn::Linear(kHidden, 1));
  auto inputs = torch::zeros({static_cast<std::int64_t>(pairs.size()), 2 * types});
  auto targets = torch::zeros({static_cast<std::int64_t>(pairs.size()), 1});
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto row = static_cast<std::int64_t>(k);
    inputs[row][model.index_.at(pairs[k].victim)] = 1.0;
    inputs[row][types + model.index_.at(pairs[k].aggressor)] = 1.0;
    targets[row][0] = std::log(pairs[k].slowdown);
  }
  torch::optim::Adam adam(model.net_->layers->parameters(), torch::optim::AdamOptions(0.01));
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    adam.zero_grad();
    const auto loss = torch::mse_loss(model.net_->layers->forward(inputs), targets);
    loss.backward();
    adam.step();
  }
  return model;
}

bool InterferenceMlp::knows(const std::string& job_type) const { return index_.count(job_type) > 0; }

double InterferenceMlp::slowdown(const std::string& victim, const std::vector<std::string>& co_runners) const {
  torch::NoGradGuard no_grad;
  const auto types = static_cast<std::int64_t>(index_.size());
  double slowdown = 1.0;
  for (const auto& other : co_runners) {
    auto input = torch::zeros({1, 2 * types});
    if (auto it = index_.find(victim); it != index_.end()) input[0][it->second] = 1.0;
    if (auto it = index_.find(other); it != index_.end()) input[0][types + it->second] = 1.0;
    slowdown += std::exp(net_->layers->forward(input).item<double>()) - 1.0;
  }
  return slowdown;
}

}  // namespace dnnsim
