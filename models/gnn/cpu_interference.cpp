#include "models/gnn/cpu_interference.hpp"

#include <tuple>

#include "models/common/builtin_registry.hpp"

namespace dnnsim::gnn {
namespace {

// Fitted on gnn_interference_bench, two runs on 2026-11-30 (load average 0.2–1.6, docs/gnn.md "CPU
// interference, measured"): each factor is the mean of the victim's four one-core ratios (two
// partners × two runs); the traffic per byte follows from what the stages do.
OptionSchema measured_options() {
  OptionSchema schema;
  const std::tuple<const char*, double, const char*> time_sliced[] = {
      {"sample_time_sliced", 0.73,
       "sampling's rate time-sliced with another stage on its cores, as a fraction of alone "
       "(gnn_interference_bench: 0.70–0.78 beside gathering or copying)"},
      {"gather_time_sliced", 0.85,
       "feature gathering's rate time-sliced with another stage, as a fraction of alone (bench: 0.79–0.88)"},
      {"dispatch_time_sliced", 1.0,
       "the trainers' kernel dispatch time-sliced with another stage (not measured: none by default)"}};
  for (const auto& [name, fallback, doc] : time_sliced) schema.number(name, fallback, doc).range(0.05, 1);
  schema
      .quantity<Bytes>("sample_traffic", Bytes(64),
                       "memory traffic per sampled edge: one cache line per random neighbour read of a graph "
                       "beyond the caches")
      .at_least(0);
  schema
      .number("gather_traffic", 2.0,
              "bytes of memory traffic per gathered feature byte (the row read, the batch buffer written)")
      .range(0, 16);
  schema
      .number("copy_traffic", 1.0,
              "bytes of memory traffic per host-to-device byte (the DMA reads the staged batch once)")
      .range(0, 16);
  return schema;
}

CpuInterference measured(const Options& options) {
  CpuInterference model;
  model.enabled = true;
  model.sample_traffic = options.quantity<Bytes>("sample_traffic");
  model.gather_traffic = options.number("gather_traffic");
  model.copy_traffic = options.number("copy_traffic");
  model.time_sliced[static_cast<int>(CpuRole::sample)] = options.number("sample_time_sliced");
  model.time_sliced[static_cast<int>(CpuRole::gather)] = options.number("gather_time_sliced");
  model.time_sliced[static_cast<int>(CpuRole::dispatch)] = options.number("dispatch_time_sliced");
  return model;
}

void register_builtin_interference_models(InterferenceRegistry& r) {
  r.add("none", "stages share the cores fairly and nothing else", "dnnsim",
        [](const Options&) { return CpuInterference{}; });
  r.add("measured",
        "memory traffic shared in proportion to demand on the node's cpu_memory_bandwidth, and a slowdown "
        "per stage time-sliced with another (cache pollution)",
        "gnn_interference_bench (docs/gnn.md); BGL, Liu et al., NSDI'23 §3", measured, measured_options());
}

}  // namespace

std::array<double, kCpuRoles> CpuInterference::traffic_rates(const GnnCpuCosts& costs) const {
  // Sampling without core work (a zero sample_edge) has no executions to carry traffic.
  const double sample = costs.sample_edge.value() > 0 ? sample_traffic.value() / costs.sample_edge.value() : 0;
  return {sample, gather_traffic * costs.gather_bandwidth.value(), copy_traffic, 0.0};
}

const InterferenceRegistry& builtin_interference_models() {
  return builtin_registry<InterferenceRegistry, register_builtin_interference_models>("interference model");
}

}  // namespace dnnsim::gnn
