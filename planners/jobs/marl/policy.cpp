#include "planners/jobs/marl/policy.hpp"

// Before any other torch header: clang in C++20 mode (the fuzz preset) needs c10::IValue complete
// where libtorch 1.13's headers only declare it (a std::vector<IValue> member).
#include <ATen/core/ivalue.h>

#include <torch/nn.h>
#include <torch/optim.h>
#include <torch/serialize.h>
#include <torch/utils.h>

#include <cmath>
#include <fstream>
#include <stdexcept>

#include "traces/jobs/job_generator.hpp"

namespace dnnsim {

namespace {
constexpr int kHidden = 32;
using Obs = MarlObservation;

torch::Tensor floats(const std::vector<float>& values, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(values.data()), shape, torch::kFloat32).clone();
}
torch::Tensor indices(const std::vector<std::int64_t>& values) {
  return torch::from_blob(const_cast<std::int64_t*>(values.data()), {static_cast<std::int64_t>(values.size())}, torch::kInt64).clone();
}
// Mean of `rows` grouped by `group` into `groups` rows.
torch::Tensor group_mean(const torch::Tensor& rows, const torch::Tensor& group, std::int64_t groups) {
  auto sums = torch::zeros({groups, rows.size(1)}).index_add(0, group, rows);
  auto counts = torch::zeros({groups}).index_add(0, group, torch::ones({rows.size(0)})).clamp_min(1.0);
  return sums / counts.unsqueeze(1);
}
}  // namespace

struct MarlPolicy::Net : torch::nn::Module {
  torch::nn::Linear gpu_in{nullptr}, gpu_message{nullptr}, server_in{nullptr}, rack_in{nullptr};
  torch::nn::Linear place_hidden{nullptr}, place_out{nullptr}, pack_hidden{nullptr}, pack_out{nullptr};
  torch::nn::Linear defer_hidden{nullptr}, defer_out{nullptr}, value_hidden{nullptr}, value_out{nullptr};

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
    defer_hidden = register_module("defer_hidden", torch::nn::Linear(kHidden + Obs::kJobFeatures, kHidden));
    defer_out = register_module("defer_out", torch::nn::Linear(kHidden, 1));
    value_hidden = register_module("value_hidden", torch::nn::Linear(kHidden + Obs::kQueueFeatures, kHidden));
    value_out = register_module("value_out", torch::nn::Linear(kHidden, 1));
  }

  struct Output {
    torch::Tensor log_probs;  // [2S + 1], masked actions at ≈ −1e9
    torch::Tensor value;      // scalar
  };

  Output forward(const Obs& o) {
    const std::int64_t S = o.servers;
    const std::int64_t G = static_cast<std::int64_t>(o.gpu_server.size());
    const auto gpu_server = indices(o.gpu_server);
    // Level 1: the GPUs of each server graph.
    auto h = torch::relu(gpu_in(floats(o.gpu, {G, Obs::kGpuFeatures})));
    h = torch::relu(gpu_message(torch::cat({h, group_mean(h, gpu_server, S).index_select(0, gpu_server)}, 1)));
    auto servers = torch::relu(server_in(torch::cat({group_mean(h, gpu_server, S), floats(o.server, {S, Obs::kServerFeatures})}, 1)));
    // Level 2: racks and the cluster.
    const auto rack = indices(o.server_rack);
    const auto racks = torch::relu(rack_in(group_mean(servers, rack, o.racks)));
    const auto cluster = racks.mean(0);
    const auto job = floats(o.job, {Obs::kJobFeatures});
    const auto context = torch::cat({servers, racks.index_select(0, rack), cluster.expand({S, kHidden}), job.expand({S, Obs::kJobFeatures})}, 1);
    const auto place = place_out(torch::relu(place_hidden(torch::cat({context, floats(o.place_action, {S, Obs::kActionFeatures})}, 1)))).squeeze(1);
    const auto pack = pack_out(torch::relu(pack_hidden(torch::cat({context, floats(o.pack_action, {S, Obs::kActionFeatures})}, 1)))).squeeze(1);
    const auto defer = defer_out(torch::relu(defer_hidden(torch::cat({cluster, job})))).reshape({1});
    std::vector<float> penalty(o.mask.size());
    for (std::size_t a = 0; a < penalty.size(); ++a) penalty[a] = o.mask[a] ? 0.0f : -1e9f;
    const auto logits = torch::cat({place, pack, defer}) + floats(penalty, {static_cast<std::int64_t>(penalty.size())});
    const auto value = value_out(torch::relu(value_hidden(torch::cat({cluster, floats(o.queue, {Obs::kQueueFeatures})})))).squeeze();
    return {torch::log_softmax(logits, 0), value};
  }
};

MarlPolicy::MarlPolicy(std::uint64_t seed) {
  torch::manual_seed(seed);
  net_ = std::make_shared<Net>();
}

MarlPolicy MarlPolicy::load(const std::string& path) {
  auto net = std::make_shared<Net>();
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open it");
    torch::load(net, in);
  } catch (const c10::Error& error) {
    throw std::runtime_error("not a policy of this scheduler (" + std::string(error.what_without_backtrace()) + ")");
  }
  return MarlPolicy(std::move(net));
}

// Through a stream: saved to a path, the archive's inner folder is named after the file, so the same
// weights would give different bytes under different names.
void MarlPolicy::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  torch::save(net_, out);
  if (!out) throw std::runtime_error("cannot write the policy " + path);
}

int MarlPolicy::greedy(const MarlObservation& observation) const {
  torch::NoGradGuard no_grad;
  return static_cast<int>(net_->forward(observation).log_probs.argmax().item<std::int64_t>());
}

std::size_t MarlPolicy::parameter_count() const {
  std::size_t n = 0;
  for (const auto& p : net_->parameters()) n += static_cast<std::size_t>(p.numel());
  return n;
}

struct LearningEpisode::Steps {
  std::shared_ptr<MarlPolicy::Net> net;
  std::vector<torch::Tensor> log_prob, entropy, value;
  std::vector<double> reward;
  std::vector<double> time;  // simulated seconds of each step
};

LearningEpisode::LearningEpisode(const MarlPolicy& policy, std::uint64_t seed, MarlTrainingOptions options)
    : steps_(std::make_unique<Steps>()), rng_(seed), options_(options) {
  steps_->net = policy.net_;
}

LearningEpisode::~LearningEpisode() = default;

int LearningEpisode::sample(const MarlObservation& observation) {
  auto out = steps_->net->forward(observation);
  // Inverse-CDF draw with dnnsim's splitmix64, so the episode depends on its seed alone.
  const auto probs = out.log_probs.detach().exp();
  const auto* p = probs.data_ptr<float>();
  const double u = rng_.uniform();
  int action = -1;
  double cumulative = 0.0;
  for (int a = 0; a < observation.actions(); ++a) {
    if (!observation.mask[static_cast<std::size_t>(a)]) continue;
    cumulative += p[a];
    action = a;
    if (u < cumulative) break;
  }
  steps_->log_prob.push_back(out.log_probs[action]);
  steps_->entropy.push_back(-(out.log_probs.exp() * out.log_probs).sum());
  steps_->value.push_back(out.value);
  steps_->reward.push_back(0.0);
  steps_->time.push_back(last_time_);
  return action;
}

void LearningEpisode::advance(double now_s, double load) {
  if (!steps_->reward.empty()) steps_->reward.back() -= last_load_ * (now_s - last_time_) / 3600.0;
  last_time_ = now_s;
  last_load_ = load;
}

void LearningEpisode::add_predicted(double reward) {
  if (!steps_->reward.empty()) steps_->reward.back() += reward;
}

LearningEpisode::Result LearningEpisode::finish(double end_s) {
  advance(end_s, 0.0);
  Result result;
  const auto parameters = steps_->net->parameters();
  result.steps = steps_->reward.size();
  for (double r : steps_->reward) result.episode_return += r;
  if (result.steps == 0) {
    for (const auto& p : parameters) result.gradient.resize(result.gradient.size() + static_cast<std::size_t>(p.numel()), 0.0f);
    return result;
  }
  // Discounted by simulated time, not by steps: deferring a job makes more steps, and a per-step
  // discount would shrink the cost that follows them — training would learn to defer.
  std::vector<float> returns(result.steps);
  double g = 0.0;
  for (std::size_t k = result.steps; k-- > 0;) {
    const double after = k + 1 < result.steps ? steps_->time[k + 1] - steps_->time[k] : 0.0;
    g = steps_->reward[k] + std::pow(options_.gamma, after / 3600.0) * g;
    returns[k] = static_cast<float>(g);
  }
  const auto G = torch::tensor(returns);
  const auto V = torch::stack(steps_->value);
  auto advantage = G - V.detach();
  if (result.steps > 1) advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8);
  const auto entropy = torch::stack(steps_->entropy).mean();
  const auto loss = -(torch::stack(steps_->log_prob) * advantage).mean() - options_.entropy_weight * entropy +
                    options_.value_weight * (G - V).pow(2).mean();
  for (const auto& p : parameters) p.mutable_grad() = torch::Tensor();
  loss.backward();
  for (const auto& p : parameters) {
    const auto grad = p.grad().defined() ? p.grad().contiguous() : torch::zeros_like(p);
    const auto* data = grad.data_ptr<float>();
    result.gradient.insert(result.gradient.end(), data, data + grad.numel());
  }
  result.loss = loss.item<double>();
  result.entropy = entropy.item<double>();
  return result;
}

struct MarlOptimizer::State {
  std::vector<torch::Tensor> parameters;
  torch::optim::Adam adam;
  State(std::vector<torch::Tensor> p, double lr) : parameters(p), adam(std::move(p), torch::optim::AdamOptions(lr)) {}
};

MarlOptimizer::MarlOptimizer(MarlPolicy& policy, double learning_rate)
    : state_(std::make_unique<State>(policy.net_->parameters(), learning_rate)) {}

MarlOptimizer::~MarlOptimizer() = default;

void MarlOptimizer::apply(const std::vector<float>& gradient) {
  std::size_t offset = 0;
  for (auto& p : state_->parameters) {
    const auto n = static_cast<std::size_t>(p.numel());
    if (offset + n > gradient.size()) throw std::logic_error("MarlOptimizer: gradient shorter than the parameters");
    p.mutable_grad() = torch::from_blob(const_cast<float*>(gradient.data() + offset), p.sizes(), torch::kFloat32).clone();
    offset += n;
  }
  if (offset != gradient.size()) throw std::logic_error("MarlOptimizer: gradient longer than the parameters");
  torch::nn::utils::clip_grad_norm_(state_->parameters, 1.0);
  state_->adam.step();
}

}  // namespace dnnsim
