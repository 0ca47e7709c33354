#include "planners/parallel/stage_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>
#include <tuple>

#include "models/common/units.hpp"
#include "planners/common/layer_cost.hpp"
#include "planners/schedules/critical_path.hpp"
#include "planners/schedules/pipeline_estimator.hpp"

namespace dnnsim {

StageCostModel::StageCostModel(const PlanRequest& request) : request_(request), memory_base_(request.memory) {
  if (const std::size_t n = request.cluster.size(); n <= kTabledPathDevices) {
    paths_.resize(n * n);
    for (DeviceId a = 0; a < n; ++a)
      for (DeviceId b = 0; b < n; ++b) paths_[a * n + b] = request.cluster.path(a, b);
  }
  memory_base_.layer_input_bytes.clear();
  // Devices with the same GPU, efficiency and calibration table time every layer alike.
  std::vector<std::tuple<std::string, double, const CalibrationTable*>> classes;
  for (const ClusterDevice& device : request.cluster.devices) {
    const auto key = std::make_tuple(device.gpu.name, device.compute_efficiency, device.calibration.get());
    auto found = std::find(classes.begin(), classes.end(), key);
    if (found == classes.end()) found = classes.insert(classes.end(), key);
    device_class_.push_back(static_cast<std::size_t>(found - classes.begin()));
  }
  parameter_prefix_.push_back(0);
  for (const Layer& layer : request.model.layers)
    parameter_prefix_.push_back(parameter_prefix_.back() + layer.parameter_bytes.value());
  // The bucket that closes walking down from each layer, by gradient_buckets itself (so the buckets
  // priced are the ones lowered), once: a stage's buckets are then a walk down this table.
  if (request.overlap_all_reduce) {
    const std::size_t layers = request.model.layers.size();
    bucket_floor_.assign(layers + 1, kNoFloor);
    for (std::size_t top = 1; top <= layers; ++top) {
      const LayerRange first = gradient_buckets(request.model, request.bucket_size, LayerRange{0, top}).front();
      if (parameter_prefix_[top] - parameter_prefix_[first.begin] >= request.bucket_size.value())
        bucket_floor_[top] = first.begin;
    }
  }
}

const StageCostModel::Prefix& StageCostModel::prefix(std::size_t device_class, int samples) const {
  if (prefixes_.size() <= device_class) prefixes_.resize(device_class + 1);
  auto& by_samples = prefixes_[device_class];
  if (by_samples.size() <= static_cast<std::size_t>(samples)) by_samples.resize(static_cast<std::size_t>(samples) + 1);
  std::unique_ptr<Prefix>& slot = by_samples[static_cast<std::size_t>(samples)];
  if (!slot) {
    const auto representative = static_cast<std::size_t>(
        std::find(device_class_.begin(), device_class_.end(), device_class) - device_class_.begin());
    const ClusterDevice& device = request_.cluster.devices[representative];
    slot = std::make_unique<Prefix>();
    Prefix& p = *slot;
    p.host_overhead = host_overhead(device);
    p.forward.push_back(0);
    p.backward.push_back(0);
    for (const Layer& layer : request_.model.layers) {
      p.forward.push_back(p.forward.back() +
                          layer_time(request_.model, layer, device, samples, request_.dtype, Pass::forward).value());
      p.backward.push_back(p.backward.back() +
                           layer_time(request_.model, layer, device, samples, request_.dtype, Pass::backward).value());
    }
  }
  return *slot;
}

PassTimes StageCostModel::compute(LayerRange layers, std::span<const DeviceId> devices) const {
  return compute(layers, group_costs(devices));
}

const StageCostModel::GroupCosts& StageCostModel::group_costs(std::span<const DeviceId> devices) const {
  if (const auto known = group_costs_.find(devices); known != group_costs_.end()) return known->second;
  GroupCosts& group = group_costs_.try_emplace(std::vector<DeviceId>(devices.begin(), devices.end())).first->second;
  group.replicas = static_cast<int>(devices.size());
  if (group.replicas > 1) group.links = &all_reduce_links(devices);
  // The exposed all-reduce is memoized by the group's links and its distinct timings when there are
  // at most kMemoTimings (GPU classes × the two share sizes of an uneven split).
  ExposedKey key{group.links, {}};
  std::size_t distinct = 0;
  bool memoizable = true;
  for (int r = 0; r < group.replicas; ++r) {
    const std::pair<std::size_t, int> timing{device_class_[devices[r]],
                                             replica_share(micro_batch_size(), group.replicas, r).count};
    const Prefix* p = &prefix(timing.first, timing.second);
    if (std::find(group.timings.begin(), group.timings.end(), p) != group.timings.end()) continue;
    group.timings.push_back(p);
    if (distinct == key.timings.size())
      memoizable = false;
    else
      key.timings[distinct++] = timing;
  }
  if (memoizable) group.exposed = &exposed_all_reduce_[key];
  return group;
}

Seconds StageCostModel::single_device_time(LayerRange layers, DeviceId device) const {
  const Prefix& p = prefix(device_class_[device], micro_batch_size());
  return Seconds(p.forward[layers.end] - p.forward[layers.begin] + p.backward[layers.end] - p.backward[layers.begin]);
}

Bytes StageCostModel::gradient_bytes(LayerRange layers) const {
  const double parameters =
      (parameter_prefix_[layers.end] - parameter_prefix_[layers.begin]) / kProfileBytesPerParameter;
  return Bytes(parameters * bytes_per_parameter(request_.memory.precision, request_.memory.optimizer).gradients);
}

Bytes StageCostModel::cut_bytes(std::size_t last) const {
  return request_.model.layers[last].bytes_across_cut() * static_cast<double>(micro_batch_size());
}

std::size_t StageCostModel::GroupHash::operator()(std::span<const DeviceId> group) const {
  std::size_t hash = 1469598103934665603ull;
  for (DeviceId d : group) hash = (hash ^ d) * 1099511628211ull;
  return hash;
}

const AllReducePaths& StageCostModel::all_reduce_links(std::span<const DeviceId> devices) const {
  std::vector<DeviceId> ring(devices.begin(), devices.end());
  if (!std::is_sorted(ring.begin(), ring.end())) std::sort(ring.begin(), ring.end());
  auto [it, inserted] = all_reduce_links_.try_emplace(ring, nullptr);
  if (!inserted) return *it->second;
  const AllReducePaths links = all_reduce_paths(request_.cluster, ring);
  // The all-reduce time depends on these costs only: groups with the same ones share an object.
  const auto same =
      std::find_if(distinct_links_.begin(), distinct_links_.end(),
                   [&](const std::unique_ptr<AllReducePaths>& known) { return known->same_costs(links); });
  if (same != distinct_links_.end()) return *(it->second = same->get());
  distinct_links_.push_back(std::make_unique<AllReducePaths>(links));
  return *(it->second = distinct_links_.back().get());
}

Seconds StageCostModel::all_reduce(LayerRange layers, std::span<const DeviceId> devices) const {
  if (devices.size() <= 1) return Seconds(0);
  return all_reduce(layers, group_costs(devices));
}

Seconds StageCostModel::all_reduce(LayerRange layers, const GroupCosts& group) const {
  const int p = group.replicas;
  if (p <= 1) return Seconds(0);
  const AllReducePaths& links = *group.links;
  const auto time_of = [&](Bytes size) { return all_reduce_time(size, links); };
  if (!request_.overlap_all_reduce) return time_of(gradient_bytes(layers));
  // Bucketed and overlapped with the last micro-batch's backward, as lowered: bucket k (highest
  // layers first) is ready once every replica has run the backward of the layers down to its first,
  // C_k after the step began, and the buckets' all-reduces run one after another on the stage's
  // all-reduce stream, so the last ends at max_k (C_k + Σ_{i≥k} a_i). What outlasts the step B
  // (= C_K) is the exposed part Formula 2 adds after the stage's last backward.
  // The result depends on the layers, the group's links and the replicas' distinct (GPU class,
  // samples) timings; the searches ask for the same stage many times, so it is memoized in the
  // group's table when it has one (group_costs).
  double* memo = nullptr;
  if (group.exposed != nullptr) {
    const std::size_t count = request_.model.layers.size();
    const double unknown = std::numeric_limits<double>::quiet_NaN();
    if (layers.end == count) {
      std::vector<double>& row = group.exposed->to_last;
      if (row.empty()) row.assign(count + 1, unknown);
      memo = &row[layers.begin];
    } else {
      std::vector<std::vector<double>>& rows = group.exposed->rows;
      if (rows.size() <= layers.begin) rows.resize(layers.begin + 1);
      std::vector<double>& row = rows[layers.begin];
      if (row.empty()) row.assign(count - layers.begin + 1, unknown);
      memo = &row[layers.end - layers.begin];
    }
    if (!std::isnan(*memo)) return Seconds(*memo);
  }
  const auto backward_from = [&](std::size_t first) {  // the slowest replica's backward of [first, end)
    double slowest = 0;
    for (const Prefix* prefix : group.timings)
      slowest = std::max(slowest, prefix->backward[layers.end] - prefix->backward[first]);
    return slowest;
  };
  double stream_free = 0;
  for (std::size_t top = layers.end; top > layers.begin;) {
    // gradient_buckets over `layers`: the bucket closing below `top`, or the rest down to the stage's first layer.
    const std::size_t floor = bucket_floor_[top];
    const LayerRange bucket{floor == kNoFloor || floor < layers.begin ? layers.begin : floor, top};
    top = bucket.begin;
    const Bytes size = gradient_bytes(bucket);
    if (size.value() <= 0) continue;
    stream_free = std::max(stream_free, backward_from(bucket.begin)) + time_of(size).value();
  }
  const Seconds exposed(std::max(0.0, stream_free - backward_from(layers.begin)));
  if (memo != nullptr) *memo = exposed.value();
  return exposed;
}

namespace {

// Walks the two share partitions of [0, b) together: every overlap is one transfer, visited as
// (sender, receiver, samples) in the order cut() sums them.
template <typename Visit>
void for_each_transfer(int b, int senders, int receivers, Visit visit) {
  if (senders == 0 || receivers == 0) return;
  int i = 0;
  int j = 0;
  SampleShare s = replica_share(b, senders, 0);
  SampleShare r = replica_share(b, receivers, 0);
  while (true) {
    const int overlap = std::min(s.begin + s.count, r.begin + r.count) - std::max(s.begin, r.begin);
    if (overlap > 0) visit(i, j, overlap);
    if (s.begin + s.count <= r.begin + r.count) {
      if (++i == senders) break;
      s = replica_share(b, senders, i);
    } else {
      if (++j == receivers) break;
      r = replica_share(b, receivers, j);
    }
  }
}

// The time each sender and receiver of a cut spends on its transfers. A group has at most
// micro-batch-size replicas; small groups (the searches' common case) stay on the stack, and only
// the slots in use are cleared (the searches price millions of cuts).
class EndpointLoads {
 public:
  EndpointLoads(const EndpointLoads&) = delete;  // points into itself
  EndpointLoads& operator=(const EndpointLoads&) = delete;
  EndpointLoads(int senders, int receivers) : senders_(senders), receivers_(receivers) {
    if (senders > kOnStack || receivers > kOnStack) {
      sending_large_.resize(senders);
      receiving_large_.resize(receivers);
      sending_ = sending_large_.data();
      receiving_ = receiving_large_.data();
    }
    std::fill_n(sending_, senders, 0.0);
    std::fill_n(receiving_, receivers, 0.0);
  }
  void add(int sender, int receiver, double time) {
    sending_[sender] += time;
    receiving_[receiver] += time;
  }
  [[nodiscard]] Seconds busiest() const {
    double busiest = 0;
    for (int i = 0; i < senders_; ++i) busiest = std::max(busiest, sending_[i]);
    for (int j = 0; j < receivers_; ++j) busiest = std::max(busiest, receiving_[j]);
    return Seconds(busiest);
  }

 private:
  static constexpr int kOnStack = 64;
  int senders_, receivers_;
  std::array<double, kOnStack> sending_small_;  // cleared in the constructor, as far as used
  std::array<double, kOnStack> receiving_small_;
  std::vector<double> sending_large_, receiving_large_;
  double* sending_ = sending_small_.data();
  double* receiving_ = receiving_small_.data();
};

}  // namespace

Seconds StageCostModel::cut(std::size_t last, std::span<const DeviceId> from, std::span<const DeviceId> to) const {
  // As cut(last, cut_pattern(from, to)), without building the pattern: the searches price a cut into
  // every candidate group once.
  const double per_sample = request_.model.layers[last].bytes_across_cut().value();
  const int senders = static_cast<int>(from.size());
  const int receivers = static_cast<int>(to.size());
  EndpointLoads loads(senders, receivers);
  for_each_transfer(micro_batch_size(), senders, receivers, [&](int i, int j, int samples) {
    loads.add(i, j, point_to_point_time(Bytes(per_sample * samples), path(from[i], to[j])).value());
  });
  return loads.busiest();
}

StageCostModel::CutPattern StageCostModel::cut_pattern(std::span<const DeviceId> from,
                                                       std::span<const DeviceId> to) const {
  CutPattern pattern;
  cut_pattern(from, to, pattern);
  return pattern;
}

void StageCostModel::cut_pattern(std::span<const DeviceId> from, std::span<const DeviceId> to,
                                 CutPattern& pattern) const {
  pattern.senders = static_cast<int>(from.size());
  pattern.receivers = static_cast<int>(to.size());
  pattern.transfers.clear();
  for_each_transfer(micro_batch_size(), pattern.senders, pattern.receivers, [&](int i, int j, int samples) {
    pattern.transfers.push_back(CutPattern::Transfer{i, j, samples, path(from[i], to[j])});
  });
}

Seconds StageCostModel::cut(std::size_t last, const CutPattern& pattern) const {
  const double per_sample = request_.model.layers[last].bytes_across_cut().value();
  EndpointLoads loads(pattern.senders, pattern.receivers);
  for (const CutPattern::Transfer& transfer : pattern.transfers)
    loads.add(transfer.sender, transfer.receiver,
              point_to_point_time(Bytes(per_sample * transfer.samples), transfer.path).value());
  return loads.busiest();
}

int StageCostModel::in_flight(int stage, int stages) const {
  const int m = request_.micro_batches;
  // An asynchronous pipeline is never flushed: once warm, stage i holds p − i micro-batches
  // whatever M (PipeDream's NOAM for a straight pipeline).
  if (stashes_weights()) return stages - stage;
  if (!request_.in_flight) return std::min(stages - stage, m);
  if (in_flight_.size() <= static_cast<std::size_t>(stages)) in_flight_.resize(stages + 1);
  std::vector<int>& row = in_flight_[stages];
  if (row.empty()) row.assign(stages, 0);
  int& known = row[stage];
  if (known == 0) known = request_.in_flight(stage, stages, m, request_.chunks_per_stage);
  return known;
}

StageCostModel::FitKey StageCostModel::fit_key(std::size_t begin, int replicas, int micro_batches_in_flight,
                                               double capacity) const {
  return FitKey{begin,
                std::max(1, replica_share(micro_batch_size(), replicas, 0).count),
                micro_batches_in_flight,
                stashes_weights() ? stashed_weight_versions(micro_batches_in_flight, replicas) : 0,
                replicas,
                capacity};
}

std::size_t StageCostModel::FitKeyHash::operator()(const FitKey& key) const {
  std::size_t hash = 1469598103934665603ull;
  for (const std::size_t field :
       {key.begin, static_cast<std::size_t>(key.micro_batch), static_cast<std::size_t>(key.in_flight),
        static_cast<std::size_t>(key.stashed_weight_versions), static_cast<std::size_t>(key.data_parallel),
        std::hash<double>{}(key.capacity)})
    hash = (hash ^ field) * 1099511628211ull;
  return hash;
}

TrainingMemoryConfig StageCostModel::memory_config(const FitKey& key) const {
  TrainingMemoryConfig config = memory_base_;
  config.micro_batch = key.micro_batch;
  config.micro_batches_in_flight = key.in_flight;
  config.stashed_weight_versions = key.stashed_weight_versions;
  config.data_parallel = key.data_parallel;
  return config;
}

TrainingMemoryConfig StageCostModel::memory_config(std::span<const DeviceId> devices, int stage, int stages) const {
  return memory_config(fit_key(0, static_cast<int>(devices.size()), in_flight(stage, stages), 0));
}

std::size_t StageCostModel::max_fitting_end(std::size_t begin, std::span<const DeviceId> devices, int stage,
                                            int stages) const {
  double capacity = request_.cluster.devices[devices[0]].gpu.memory.value();
  for (DeviceId d : devices) capacity = std::min(capacity, request_.cluster.devices[d].gpu.memory.value());
  return fitting_end(fit_key(begin, static_cast<int>(devices.size()), in_flight(stage, stages), capacity));
}

std::size_t StageCostModel::max_stage_end(std::size_t begin, int replicas, int micro_batches_in_flight) const {
  // ZeRO over the replicas, the largest GPU: memory only grows with the share and the in-flight
  // count (the stashed versions grow with it as the activations do), so no stage of this shape with
  // at least that many in flight gets further.
  double capacity = 0;
  for (const ClusterDevice& device : request_.cluster.devices) capacity = std::max(capacity, device.gpu.memory.value());
  return fitting_end(fit_key(begin, replicas, micro_batches_in_flight, capacity));
}

std::size_t StageCostModel::fitting_end(const FitKey& key) const {
  auto [it, inserted] = fitting_end_.try_emplace(key, 0);
  if (!inserted) return it->second;
  const std::size_t begin = key.begin;
  const TrainingMemoryConfig config = memory_config(key);
  const double capacity = key.capacity;
  const auto& layers = request_.model.layers;
  const auto need = [&](std::size_t end) {
    TrainingMemoryConfig c = config;
    if (!request_.memory.layer_input_bytes.empty())
      c.layer_input_bytes.assign(request_.memory.layer_input_bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                                 request_.memory.layer_input_bytes.begin() + static_cast<std::ptrdiff_t>(end));
    return training_memory(std::span<const Layer>(layers).subspan(begin, end - begin), c).total().value();
  };
  // Memory grows with every layer added to the range, so binary search the last end that fits.
  std::size_t low = begin;               // fits (an empty range is no stage; treated as fitting)
  std::size_t high = layers.size() + 1;  // does not fit
  while (high - low > 1) {
    const std::size_t mid = low + (high - low) / 2;
    if (need(mid) <= capacity)
      low = mid;
    else
      high = mid;
  }
  it->second = low;
  return low;
}

bool StageCostModel::fits(LayerRange layers, std::span<const DeviceId> devices, int stage, int stages) const {
  return layers.end <= max_fitting_end(layers.begin, devices, stage, stages);
}

std::string StageCostModel::memory_problem(LayerRange layers, std::span<const DeviceId> devices, int stage,
                                           int stages) const {
  if (fits(layers, devices, stage, stages)) return {};
  TrainingMemoryConfig config = memory_config(devices, stage, stages);
  if (!request_.memory.layer_input_bytes.empty())
    config.layer_input_bytes.assign(
        request_.memory.layer_input_bytes.begin() + static_cast<std::ptrdiff_t>(layers.begin),
        request_.memory.layer_input_bytes.begin() + static_cast<std::ptrdiff_t>(layers.end));
  const std::vector<Layer> slice(request_.model.layers.begin() + static_cast<std::ptrdiff_t>(layers.begin),
                                 request_.model.layers.begin() + static_cast<std::ptrdiff_t>(layers.end));
  DeviceId smallest = devices[0];
  for (DeviceId d : devices)
    if (request_.cluster.devices[d].gpu.memory < request_.cluster.devices[smallest].gpu.memory) smallest = d;
  return fmt::format("stage {} (layers [{}, {}), {} in flight × {}): {}", stage, layers.begin, layers.end,
                     config.micro_batches_in_flight, counted(static_cast<std::size_t>(config.micro_batch), "sample"),
                     check_fit(request_.cluster.devices[smallest].name, training_memory(slice, config),
                               request_.cluster.devices[smallest].gpu.memory)
                         .message);
}

PipelinePlan make_plan(const std::vector<StageSpec>& stages, const PlanRequest& request) {
  PipelinePlan plan;
  plan.global_batch = request.global_batch;
  plan.micro_batches = request.micro_batches;
  for (const StageSpec& stage : stages) plan.stages.push_back(PipelineStage{{stage.layers}, stage.devices});
  return plan;
}

std::string request_problem(const PlanRequest& request, bool supports_chunks) {
  if (request.model.layers.empty()) return "the model has no layer";
  if (request.cluster.size() == 0) return "the cluster has no GPU";
  if (request.micro_batches < 1) return fmt::format("micro_batches must be at least 1, got {}", request.micro_batches);
  if (request.global_batch < request.micro_batches || request.global_batch % request.micro_batches != 0)
    return fmt::format("global_batch {} is not a positive multiple of micro_batches {}", request.global_batch,
                       request.micro_batches);
  if (request.chunks_per_stage < 1)
    return fmt::format("chunks_per_stage must be at least 1, got {}", request.chunks_per_stage);
  if (request.chunks_per_stage > 1 && !supports_chunks)
    return fmt::format("this planner makes one model chunk per stage; chunks_per_stage = {} needs 'uniform'",
                       request.chunks_per_stage);
  return {};
}

PlanResult infeasible(std::string reason, std::string cost_model, std::size_t candidates, double wall_seconds) {
  PlanResult result;
  result.feasible = false;
  result.reason = std::move(reason);
  result.cost_model = std::move(cost_model);
  result.statistics = PlanStatistics{candidates, wall_seconds};
  return result;
}

std::vector<std::size_t> block_boundaries(const LayerModel& model) {
  std::vector<std::size_t> boundaries;
  std::size_t next = 0;  // every layer before a block, and each block's end, is a boundary
  for (const LayerRange& block : model_blocks(model)) {
    for (; next <= block.begin; ++next) boundaries.push_back(next);
    next = block.end;
  }
  for (; next <= model.layers.size(); ++next) boundaries.push_back(next);
  return boundaries;
}

}  // namespace dnnsim
