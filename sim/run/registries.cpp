#include "sim/run/registries.hpp"

#include <fmt/format.h>

#include "models/dnn/zoo.hpp"
#include "models/gnn/cpu_interference.hpp"
#include "models/gnn/feature_cache.hpp"
#include "models/gnn/partitioner.hpp"
#include "models/gnn/sampler.hpp"
#include "models/program/collective_algorithms.hpp"
#include "models/spmd/graph_zoo.hpp"
#include "planners/jobs/admission.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/placement.hpp"
#include "planners/jobs/speed_models.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/schedules/schedule.hpp"
#include "planners/spmd/spmd_planner.hpp"
#include "planners/sync/sync_policy.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "traces/jobs/job_readers.hpp"

namespace dnnsim {

const std::vector<RegistryListing>& builtin_registry_listings() {
  static const std::vector<RegistryListing> listings = {
      listing_of("workloads", "workload kinds: `workload.kind`", builtin_workload_kinds()),
      listing_of("collectives", "collective algorithms: `workload.collective_algorithm`",
                 builtin_collective_algorithms()),
      listing_of("models", "the model zoo: `workload.model.zoo` (`dnnsim model describe NAME`)", builtin_models()),
      listing_of("schedules", "pipeline schedules: `workload.schedule`", builtin_schedules()),
      listing_of("planners", "pipeline and 3D/5D parallelization planners: `workload.planner` (kind: pipeline)",
                 builtin_planners()),
      listing_of("spmd", "SPMD sharding planners: `workload.planner` (kind: spmd)", builtin_spmd_planners()),
      listing_of("graphs", "the SPMD operator-graph zoo: `workload.graph.zoo` (kind: spmd)", builtin_graph_models()),
      listing_of("schedulers", "job schedulers: `workload.scheduler` (kind: cluster)", builtin_schedulers()),
      listing_of("placements", "job placements: `workload.placement`", builtin_placements()),
      listing_of("speed-models", "job speed models: `workload.speed`", builtin_speed_models()),
      listing_of("sync-policies", "parameter-server synchronisation policies: `workload.sync.policy`",
                 builtin_sync_policies()),
      listing_of("admissions", "admission and pricing policies: `workload.admission.policy`", builtin_admissions()),
      listing_of("job-traces", "job-trace formats: `workload.trace.format`", builtin_job_trace_readers()),
      listing_of("partitioners", "GNN graph partitioners: `workload.partitioner` (kind: gnn)",
                 gnn::builtin_partitioners()),
      listing_of("samplers", "GNN neighbour samplers: `workload.sampler`", gnn::builtin_samplers()),
      listing_of("orderings", "GNN seed orderings: `workload.ordering`", gnn::builtin_orderings()),
      listing_of("caches", "GNN GPU feature caches: `workload.cache.policy`", gnn::builtin_caches()),
      listing_of("interference", "GNN CPU interference models: `workload.pipeline.interference`",
                 gnn::builtin_interference_models()),
  };
  return listings;
}

std::string format_listing(const RegistryListing& listing, bool options) {
  std::string text;
  for (const ListedEntry& entry : listing.entries) {
    text += fmt::format("{:<16} {}\n{:<16} source: {}\n", entry.name, entry.description, "", entry.source);
    if (options && !entry.options->empty())
      text += fmt::format("{:<16} options:\n", "") + options_text(*entry.options, std::string(19, ' '));
  }
  return text;
}

std::string options_reference(const std::vector<RegistryListing>& listings) {
  std::string text;
  for (const RegistryListing& listing : listings) {
    std::string tables;
    for (const ListedEntry& entry : listing.entries)
      if (!entry.options->empty())
        tables += fmt::format("\n#### `{}`\n\n{}", entry.name, options_markdown(*entry.options));
    if (!tables.empty())
      text += fmt::format("\n### {} (`dnnsim list {} --options`)\n{}", listing.name, listing.name, tables);
  }
  return text;
}

}  // namespace dnnsim
