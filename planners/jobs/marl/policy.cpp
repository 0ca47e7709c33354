#include "planners/jobs/marl/policy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace dnnsim {
namespace {

constexpr std::string_view kFormat = "dnnsim marl policy 2";  // 2: candidates × servers actions
constexpr std::string_view kClusterPrefix = "cluster: ";
constexpr std::string_view kRemotePrefix = "remote: ";

}  // namespace

std::string marl_cluster_key(const std::vector<ServerInfo>& servers) {
  std::string key = fmt::format("{} servers:", servers.size());
  for (const ServerInfo& server : servers) key += fmt::format(" {}:{}×{}", server.rack, server.gpus, server.gpu_type);
  return key;
}

MarlPolicy::MarlPolicy(std::uint64_t seed) : net_(torch_plugin().new_network(seed)) {}

MarlPolicy MarlPolicy::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open it");
  std::string format, cluster;
  std::getline(in, format);
  std::getline(in, cluster);
  if (format != kFormat || cluster.rfind(kClusterPrefix, 0) != 0)
    throw std::runtime_error(fmt::format("not a policy of this scheduler (its first line is not '{}')", kFormat));
  cluster.erase(0, kClusterPrefix.size());
  // The archive is a zip file ("PK…"): a `remote:` line before it cannot be mistaken for it.
  std::string remote = cluster.empty() ? "" : std::string(kMarlRemoteWhenPartitionFull);
  const auto archive_start = in.tellg();
  if (std::string line; std::getline(in, line) && line.rfind(kRemotePrefix, 0) == 0) {
    remote = line.substr(kRemotePrefix.size());
  } else {
    in.clear();
    in.seekg(archive_start);
  }
  // libtorch's reader seeks from the stream's start: it gets the archive alone.
  std::istringstream archive(std::string(std::istreambuf_iterator<char>(in), {}));
  return MarlPolicy(torch_plugin().load_network(archive), std::move(cluster), std::move(remote));
}

void MarlPolicy::save(const std::string& path, const std::string& cluster, const std::string& remote) const {
  std::ofstream out(path, std::ios::binary);
  out << kFormat << '\n' << kClusterPrefix << cluster << '\n' << kRemotePrefix << remote << '\n';
  net_->save(out);
  if (!out) throw std::runtime_error("cannot write the policy " + path);
}

bool MarlPolicy::trained_for(const std::vector<ServerInfo>& servers) const {
  return cluster_.empty() || cluster_ == marl_cluster_key(servers);
}

bool MarlPolicy::trained_with_remote(std::string_view remote) const { return remote_.empty() || remote_ == remote; }

int MarlPolicy::greedy(const MarlObservation& observation) const { return net_->greedy(observation); }

std::size_t MarlPolicy::parameter_count() const { return net_->parameter_count(); }

LearningEpisode::LearningEpisode(const MarlPolicy& policy, std::uint64_t seed, MarlTrainingOptions options)
    : tape_(policy.net_->tape()), rng_(seed), options_(options), parameters_(policy.parameter_count()) {}

int LearningEpisode::sample(const MarlObservation& observation, double potential) {
  const auto probabilities = tape_->probabilities(observation);
  if (options_.teacher != nullptr) return record(options_.teacher(observation), potential);
  // Inverse-CDF draw with dnnsim's splitmix64, so the episode depends on its seed alone.
  const double u = rng_.uniform();
  int action = -1;
  double cumulative = 0.0;
  for (int a = 0; a < observation.actions(); ++a) {
    if (!observation.mask[static_cast<std::size_t>(a)]) continue;
    cumulative += probabilities[static_cast<std::size_t>(a)];
    action = a;
    if (u < cumulative) break;
  }
  return record(action, potential);
}

int LearningEpisode::record(int action, double potential) {
  tape_->choose(action);
  reward_.push_back(0.0);
  time_.push_back(last_time_);
  potential_.push_back(options_.shaping * potential);
  return action;
}

void LearningEpisode::advance(double now_s, double load) {
  if (!reward_.empty()) reward_.back() -= last_load_ * (now_s - last_time_) / 3600.0;
  last_time_ = now_s;
  last_load_ = load;
}

LearningEpisode::Result LearningEpisode::finish(double end_s) {
  advance(end_s, 0.0);
  Result result;
  result.steps = reward_.size();
  for (double r : reward_) result.episode_return += r;
  if (result.steps == 0) {
    result.gradient.assign(parameters_, 0.0f);
    return result;
  }
  // Discounted by simulated time, not by steps: deferring a job makes more steps, and a per-step
  // discount would shrink the cost that follows them — training would learn to defer.
  // The shaping term γ^Δt·Φ_{k+1} − Φ_k is added with the same discount as the returns, so that it
  // telescopes (Ng et al.): G_0 changes by −Φ_0 alone, whatever the actions; Φ after the last step is 0.
  std::vector<double> returns(result.steps);
  double g = 0.0;
  for (std::size_t k = result.steps; k-- > 0;) {
    const double after = k + 1 < result.steps ? time_[k + 1] - time_[k] : 0.0;
    const double discount = std::pow(options_.gamma, after / 3600.0);
    const double shaping = (k + 1 < result.steps ? discount * potential_[k + 1] : 0.0) - potential_[k];
    returns[k] = g = reward_[k] + shaping + discount * g;
  }
  auto loss = options_.teacher != nullptr ? tape_->imitate(returns, options_.value_weight)
                                          : tape_->backward(returns, options_.entropy_weight, options_.value_weight);
  result.returns = std::move(returns);
  result.gradient = std::move(loss.gradient);
  result.loss = loss.loss;
  result.entropy = loss.entropy;
  result.cross_entropy = loss.cross_entropy;
  return result;
}

MarlOptimizer::MarlOptimizer(MarlPolicy& policy, double learning_rate)
    : optimizer_(policy.net_->optimizer(learning_rate)) {}

void MarlOptimizer::apply(const std::vector<float>& gradient) { optimizer_->apply(gradient); }

}  // namespace dnnsim
