#include "planners/jobs/marl/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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
  // The policy's most probable action (lowest index on ties, as greedy()) against a label.
  const auto agrees = [&](int label) {
    return std::max_element(probabilities.begin(), probabilities.end()) - probabilities.begin() == label;
  };
  if (options_.teacher == nullptr) {
    if (options_.monitor != nullptr) {
      const int label = options_.monitor(observation);
      agreements_ += agrees(label);
      tape_->label(label);
    }
    return record(draw(observation, probabilities), potential);
  }
  const int label = options_.teacher(observation);
  agreements_ += agrees(label);
  // β = 1 draws nothing (behaviour cloning's episodes do not depend on their seed); β = 0 draws only
  // the policy's action, as an actor-critic episode of the same seed would.
  const bool teacher_acts =
      options_.teacher_share >= 1.0 || (options_.teacher_share > 0.0 && rng_.uniform() < options_.teacher_share);
  const int action = teacher_acts ? label : draw(observation, probabilities);
  record(label, potential);
  if (options_.keep_labelled) labelled_.push_back(LabelledState{observation, label});
  return action;
}

// Inverse-CDF draw with dnnsim's splitmix64, so the episode depends on its seed alone.
int LearningEpisode::draw(const MarlObservation& observation, const std::vector<double>& probabilities) {
  const double u = rng_.uniform();
  int action = -1;
  double cumulative = 0.0;
  for (int a = 0; a < observation.actions(); ++a) {
    if (!observation.mask[static_cast<std::size_t>(a)]) continue;
    cumulative += probabilities[static_cast<std::size_t>(a)];
    action = a;
    if (u < cumulative) break;
  }
  return action;
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
  auto loss = options_.teacher != nullptr
                  ? tape_->imitate(returns, options_.value_weight)
                  : tape_->backward(returns, options_.entropy_weight, options_.value_weight, options_.imitation_weight);
  result.returns = std::move(returns);
  result.gradient = std::move(loss.gradient);
  result.loss = loss.loss;
  result.entropy = loss.entropy;
  result.cross_entropy = loss.cross_entropy;
  if (options_.teacher != nullptr || options_.monitor != nullptr)
    result.agreement = static_cast<double>(agreements_) / static_cast<double>(result.steps);
  result.labelled = std::move(labelled_);
  return result;
}

namespace {

template <typename T>
void append_vector(std::string& bytes, const std::vector<T>& values) {
  const auto n = static_cast<std::uint64_t>(values.size());
  bytes.append(reinterpret_cast<const char*>(&n), sizeof n);
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

class Reader {
 public:
  Reader(std::string_view bytes, std::size_t offset) : bytes_(bytes), at_(offset) {}
  [[nodiscard]] bool done() const { return at_ == bytes_.size(); }
  template <typename T>
  T value() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  template <typename T>
  std::vector<T> vector() {
    std::vector<T> values(static_cast<std::size_t>(value<std::uint64_t>()));
    take(values.data(), values.size() * sizeof(T));
    return values;
  }

 private:
  void take(void* out, std::size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("truncated labelled states");
    std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
  }
  std::string_view bytes_;
  std::size_t at_;
};

}  // namespace

void append_labelled(std::string& bytes, const LabelledState& state) {
  const MarlObservation& o = state.observation;
  const std::int32_t header[] = {o.servers, o.racks, o.candidates, state.label};
  bytes.append(reinterpret_cast<const char*>(header), sizeof header);
  append_vector(bytes, o.gpu);
  append_vector(bytes, o.gpu_server);
  append_vector(bytes, o.server);
  append_vector(bytes, o.server_rack);
  append_vector(bytes, o.job);
  append_vector(bytes, o.place_action);
  append_vector(bytes, o.pack_action);
  append_vector(bytes, o.queue);
  append_vector(bytes, o.mask);
}

std::vector<LabelledState> read_labelled(std::string_view bytes, std::size_t offset) {
  std::vector<LabelledState> states;
  Reader in(bytes, offset);
  while (!in.done()) {
    LabelledState& state = states.emplace_back();
    MarlObservation& o = state.observation;
    o.servers = in.value<std::int32_t>();
    o.racks = in.value<std::int32_t>();
    o.candidates = in.value<std::int32_t>();
    state.label = in.value<std::int32_t>();
    o.gpu = in.vector<float>();
    o.gpu_server = in.vector<std::int64_t>();
    o.server = in.vector<float>();
    o.server_rack = in.vector<std::int64_t>();
    o.job = in.vector<float>();
    o.place_action = in.vector<float>();
    o.pack_action = in.vector<float>();
    o.queue = in.vector<float>();
    o.mask = in.vector<std::uint8_t>();
    if (o.mask.size() != static_cast<std::size_t>(o.actions()) || state.label < 0 || state.label >= o.actions())
      throw std::runtime_error("malformed labelled state");
  }
  return states;
}

ImitationGradient imitation_gradient(const MarlPolicy& policy, const std::vector<const LabelledState*>& states) {
  const auto tape = policy.net_->tape();
  for (const LabelledState* state : states) {
    (void)tape->probabilities(state->observation);
    tape->choose(state->label);
  }
  auto loss = tape->imitate(std::vector<double>(states.size(), 0.0), 0.0);
  return {std::move(loss.gradient), loss.cross_entropy};
}

MarlOptimizer::MarlOptimizer(MarlPolicy& policy, double learning_rate)
    : optimizer_(policy.net_->optimizer(learning_rate)) {}

void MarlOptimizer::apply(const std::vector<float>& gradient) { optimizer_->apply(gradient); }

}  // namespace dnnsim
