// What the GNN data path's CPU stages do to each other on one node (docs/gnn.md, "CPU interference,
// measured"): the contention BGL's resource isolation exists to avoid (Liu et al., NSDI'23 §3 and
// §4.3: sampling, feature gathering and copying threads contend for caches and memory bandwidth).
// Two mechanisms, each fitted on gnn_interference_bench and used by the `gnn` kind's SimGrid pipeline:
//
// - Memory bandwidth, a resource of the node's CPU (the node type's `cpu_memory_bandwidth`): every
//   stage's work draws memory traffic (bytes read + written) at the rate it would alone on a core —
//   sampling `sample_traffic` per sampled edge, gathering `gather_traffic` per gathered byte, the
//   host-to-device copy `copy_traffic` per byte — and the streams share the bandwidth in proportion to
//   their demands once their sum exceeds it (SimGrid's max-min, weighted by demand), so stages on
//   separate cores slow each other only then. Proportional rather than plain max-min because that is
//   what the bench shows: gather and copy on two cores both lose (0.68 and 0.84 of alone), where plain
//   max-min would leave the smaller stream untouched.
// - Cache pollution: a stage time-sliced with another stage on the same cores (more runnable threads
//   than cores, another stage among them) runs at `*_time_sliced` of its rate alone — one factor per
//   victim stage, whatever the other stage: the bench's one-core pairs give the same factor for either
//   partner within its noise, and three stages on one core about the same again (not the product).
//   A stage alone, or on cores of its own, pays nothing.
#pragma once

#include <array>
#include <functional>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "models/common/units.hpp"
#include "models/gnn/batch_cost.hpp"

namespace dnnsim::gnn {

// The roles that run on a node's CPU cores, in the `gnn` pipeline's order.
enum class CpuRole { sample, gather, copy, dispatch };
inline constexpr int kCpuRoles = 4;

struct CpuInterference {
  bool enabled = false;
  Bytes sample_traffic{0};    // per sampled edge
  double gather_traffic = 0;  // bytes per gathered feature byte
  double copy_traffic = 0;    // bytes per host-to-device byte
  // Per role: its rate while time-sliced with another role, as a fraction of its rate alone.
  std::array<double, kCpuRoles> time_sliced{1, 1, 1, 1};

  // Memory traffic per core-second of each role's work at full speed under `costs`; the copy has no
  // core work (a DMA), so its entry is per host-to-device byte.
  [[nodiscard]] std::array<double, kCpuRoles> traffic_rates(const GnnCpuCosts& costs) const;
};

using InterferenceFunction = std::function<CpuInterference(const Options&)>;
using InterferenceRegistry = Registry<InterferenceFunction>;
// `none` (the default: stages share cores fairly and nothing else) and `measured`.
[[nodiscard]] const InterferenceRegistry& builtin_interference_models();

}  // namespace dnnsim::gnn
