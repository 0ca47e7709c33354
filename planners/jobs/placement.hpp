// Placement policies: which GPUs a job gets once a scheduler has decided to run it. One interface,
// one registry (`dnnsim list placements`):
//   consolidated        fewest servers, same rack first (YARN-CS / Tiresias' `yarn` scheme)
//   random              any free GPUs, chosen by a seeded hash of (seed, job, date) — reproducible
//   least-loaded        the servers with the most free GPUs first: jobs spread out (DL2/Harmony baseline)
//   topology-aware      fewest links crossed: one server, else one rack, else fewest racks
//   heterogeneity-aware the fastest GPU type that fits the whole job (Gavel-style), consolidated there
//
// To add one: implement PlacementPolicy in planners/jobs/placement_<name>.cpp (or beside the others
// in placement.cpp), and add one `registry.add(...)` line to register_builtin_placements().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "planners/jobs/cluster_state.hpp"

namespace dnnsim {

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  // GPUs for `job` (job.gpus of them) among `free` (free GPUs per server, same indexing as
  // state.servers), or nothing when they do not fit. Pure: the caller subtracts the result from `free`.
  [[nodiscard]] virtual std::optional<Placement> place(const ClusterState& state, const std::vector<int>& free,
                                                       const JobView& job) const = 0;
};

// Made from its declared options (Registry::Entry::options) and the run's seed.
using PlacementFactory = std::function<std::unique_ptr<PlacementPolicy>(const Options& options, std::uint64_t seed)>;
using PlacementRegistry = Registry<PlacementFactory>;

void register_builtin_placements(PlacementRegistry& registry);
[[nodiscard]] const PlacementRegistry& builtin_placements();

}  // namespace dnnsim
