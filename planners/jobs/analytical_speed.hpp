// dnnsim's own job speed: the iteration time of a data-parallel job on its placement from the cost
// models (models/cost), memoised by (model, batch, placement shape, GPU types).
//   compute = Σ layers (forward + backward FLOPs) × local batch on the slowest GPU of the placement,
//             at `efficiency` × its fp16 peak (compute_time, roofline with the layer's bytes);
//   sync    = all-reduce of the gradients (parameter bytes): a ring on the intra-server link for one
//             server, else hierarchical (intra rings, then one inter-server ring per local rank,
//             sharing the NIC: hierarchical_all_reduce_time with the NIC bandwidth ÷ GPUs per server);
//   sync_bytes = what each server's NIC sends per iteration: 2(n−1)/n × parameter bytes for n servers
//             (the inter-server phase of the hierarchical ring; 0 on one server).
// With the network simulated, the cluster simulation replays sync_bytes as SimGrid flows instead of
// using `sync`, so contention with other jobs comes from the platform.
// Parameter-server jobs (JobRecord::ps_per_worker > 0): the same compute, split over the layers by
// their FLOPs, and SMD's layered push/pull recursion with locality (parameter_server.hpp) on the
// placement's PSs (or colocated_ps_layout when it has none yet); memoised by that layout's
// per-server (workers, PSs, NIC and bus bandwidth).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "planners/jobs/job_speed.hpp"

namespace dnnsim {

class AnalyticalSpeedModel final : public JobSpeedModel {
 public:
  explicit AnalyticalSpeedModel(double efficiency = 0.5) : efficiency_(efficiency) {}
  [[nodiscard]] IterationCost iteration(const JobRecord& job, const Placement& placement,
                                        const std::vector<ServerInfo>& servers) const override;
  [[nodiscard]] bool prices_parameter_servers() const override { return true; }

 private:
  struct LayerShare {
    double forward = 0.0, backward = 0.0;  // fraction of the model's FLOPs
    Bytes parameters{0};
  };
  struct ModelCost {
    std::vector<LayerShare> layers;
    double flops_per_sample = 0.0;
    double bytes_per_sample = 0.0;
    Bytes parameters{0};
    int default_batch = 32;
  };
  const ModelCost& model_cost(const JobRecord& job) const;
  // Forward + backward of the job's local batch on the slowest of `types`.
  Seconds compute_time_on(const JobRecord& job, int gpus, const std::vector<std::string>& types) const;
  IterationCost parameter_server_iteration(const JobRecord& job, const Placement& placement,
                                           const std::vector<ServerInfo>& servers,
                                           const std::vector<std::string>& types) const;

  double efficiency_;
  mutable std::map<std::string, ModelCost> models_;
  mutable std::map<std::tuple<std::string, int, std::vector<int>, std::vector<std::string>>, IterationCost> memo_;
  // (model, batch, per server used: workers, PSs, NIC and bus bandwidth, sorted; GPU types)
  mutable std::map<
      std::tuple<std::string, int, std::vector<std::tuple<int, int, double, double>>, std::vector<std::string>>,
      IterationCost>
      ps_memo_;
};

}  // namespace dnnsim
