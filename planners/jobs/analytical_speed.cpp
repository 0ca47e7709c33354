#include "planners/jobs/analytical_speed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "models/cost/collective_cost.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/dnn/zoo.hpp"
#include "models/hardware/catalog.hpp"
#include "planners/jobs/parameter_server.hpp"

namespace dnnsim {

const AnalyticalSpeedModel::ModelCost& AnalyticalSpeedModel::model_cost(const JobRecord& job) const {
  auto it = models_.find(job.model);
  if (it != models_.end()) return it->second;
  const auto& zoo = builtin_models();
  if (zoo.find(job.model) == nullptr)
    throw InputError(job.model_location(), fmt::format("job '{}': unknown model '{}'{}", job.id, job.model,
                                                       suggestion_suffix(job.model, zoo.names())));
  const LayerModel model = zoo.at(job.model).value(ModelOptions{});
  ModelCost cost;
  for (const Layer& layer : model.layers) {
    cost.flops_per_sample += (layer.forward_flops + layer.backward_flops).value();
    cost.bytes_per_sample += (layer.forward_traffic() + layer.backward_traffic()).value();
    cost.layers.push_back(LayerShare{layer.forward_flops.value(), layer.backward_flops.value(), layer.parameter_bytes});
  }
  for (LayerShare& layer : cost.layers) {
    layer.forward /= std::max(cost.flops_per_sample, 1e-300);
    layer.backward /= std::max(cost.flops_per_sample, 1e-300);
  }
  cost.parameters = model.parameter_bytes();
  return models_.emplace(job.model, cost).first->second;
}

IterationCost AnalyticalSpeedModel::iteration(const JobRecord& job, const Placement& placement,
                                              const std::vector<ServerInfo>& servers) const {
  std::vector<std::string> types;
  for (const auto& [server, count] : placement.slices) types.push_back(servers[server].gpu_type);
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  if (job.ps_per_worker > 0) return parameter_server_iteration(job, placement, servers, types);
  auto key = std::make_tuple(job.model, job.batch_size, placement.shape(), types);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;

  const ModelCost& cost = model_cost(job);
  const int gpus = placement.gpus();
  IterationCost result{compute_time_on(job, gpus, types), Seconds(0), Bytes(0)};
  const int nodes = placement.servers();
  if (gpus > 1) {
    BytesPerSecond intra{1e300}, nic{1e300};
    Seconds latency{0};
    int per_node = 0;
    for (const auto& [server, count] : placement.slices) {
      intra = std::min(intra, servers[server].intra_bandwidth);
      nic = std::min(nic, servers[server].nic_bandwidth);
      latency = std::max(latency, servers[server].link_latency);
      per_node = std::max(per_node, count);
    }
    if (nodes == 1) {
      result.sync = ring_all_reduce_time(cost.parameters, gpus, PathCost{Seconds(0), intra});
    } else {
      result.sync = hierarchical_all_reduce_time(cost.parameters, nodes, per_node, PathCost{Seconds(0), intra},
                                                 PathCost{latency, nic / per_node});
      result.sync_bytes = cost.parameters * (2.0 * (nodes - 1) / nodes);
    }
  }
  return memo_.emplace(key, result).first->second;
}

Seconds AnalyticalSpeedModel::compute_time_on(const JobRecord& job, int gpus,
                                              const std::vector<std::string>& types) const {
  const ModelCost& cost = model_cost(job);
  const double batch = job.batch_size > 0 ? job.batch_size : static_cast<double>(cost.default_batch * gpus);
  const double local = batch / gpus;
  Seconds compute{0};
  for (const std::string& type : types) {
    const GpuSpec* gpu = HardwareCatalog::builtin().find_gpu(type);
    if (gpu == nullptr) throw InputError(job.where, fmt::format("unknown GPU type '{}' in the cluster", type));
    Compute work;
    work.flops = Flop(cost.flops_per_sample * local);
    work.bytes_accessed = Bytes(cost.bytes_per_sample * local);
    work.dtype = Dtype::fp16;
    compute = std::max(compute, compute_time(work, *gpu, efficiency_));
  }
  return compute;
}

IterationCost AnalyticalSpeedModel::parameter_server_iteration(const JobRecord& job, const Placement& placement,
                                                               const std::vector<ServerInfo>& servers,
                                                               const std::vector<std::string>& types) const {
  // The layout is resolved before the memo key, so that two placements of one shape whose default
  // PSs land differently are priced apart.
  Placement full = placement;
  if (full.ps.empty()) full.ps = colocated_ps_layout(placement, default_ps_count(job, placement.gpus()));
  std::map<int, std::pair<int, int>> on;  // server → (workers, PSs)
  for (const auto& [server, count] : full.slices) on[server].first += count;
  for (const auto& [server, count] : full.ps) on[server].second += count;
  std::vector<std::tuple<int, int, double, double>> tasks;
  for (const auto& [server, counts] : on)
    tasks.emplace_back(counts.first, counts.second, servers[static_cast<std::size_t>(server)].nic_bandwidth.value(),
                       servers[static_cast<std::size_t>(server)].intra_bandwidth.value());
  std::sort(tasks.begin(), tasks.end());
  auto key = std::make_tuple(job.model, job.batch_size, std::move(tasks), types);
  if (auto it = ps_memo_.find(key); it != ps_memo_.end()) return it->second;

  const Seconds compute = compute_time_on(job, full.gpus(), types);
  const ModelCost& cost = model_cost(job);
  std::vector<PsLayerTimes> layers;
  for (const LayerShare& layer : cost.layers)
    layers.push_back(PsLayerTimes{compute * layer.forward, compute * layer.backward,
                                  ps_layer_sync_time(layer.parameters, full, servers)});
  const PsIteration iteration = ps_iteration(layers);
  IterationCost result{iteration.forward + iteration.backward, iteration.exposed_sync(), Bytes(0)};
  result.backward = iteration.backward;
  result.ps_bytes = cost.parameters;
  return ps_memo_.emplace(std::move(key), result).first->second;
}

}  // namespace dnnsim
