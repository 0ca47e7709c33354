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
      listing_of("workloads", builtin_workload_kinds()),
      listing_of("collectives", builtin_collective_algorithms()),
      listing_of("models", builtin_models()),
      listing_of("schedules", builtin_schedules()),
      listing_of("planners", builtin_planners()),
      listing_of("spmd", builtin_spmd_planners()),
      listing_of("graphs", builtin_graph_models()),
      listing_of("schedulers", builtin_schedulers()),
      listing_of("placements", builtin_placements()),
      listing_of("speed-models", builtin_speed_models()),
      listing_of("sync-policies", builtin_sync_policies()),
      listing_of("admissions", builtin_admissions()),
      listing_of("job-traces", builtin_job_trace_readers()),
      listing_of("partitioners", gnn::builtin_partitioners()),
      listing_of("samplers", gnn::builtin_samplers()),
      listing_of("orderings", gnn::builtin_orderings()),
      listing_of("caches", gnn::builtin_caches()),
      listing_of("interference", gnn::builtin_interference_models()),
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
