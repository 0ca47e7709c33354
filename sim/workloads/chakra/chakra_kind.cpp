#include "sim/workloads/chakra/chakra_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "models/cost/compute_cost.hpp"
#include "models/hardware/catalog.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {
namespace {

// The catalog model of a cluster GPU (by name), against which recorded durations are taken as-is.
std::string gpu_model(const Scenario& scenario, const std::string& gpu) {
  const std::vector<std::string> names = scenario.cluster.gpu_names();
  std::size_t next = 0;
  for (const NodeInstance& node : scenario.cluster.nodes)
    for (int g = 0; g < scenario.cluster.type_of(node).gpus_per_node; ++g)
      if (names.at(next++) == gpu) return scenario.cluster.type_of(node).gpu.name;
  return "";
}

class ChakraKind final : public TaskGraphKind {
 public:
  // The file is one recorded run: run.iterations does not repeat it.
  [[nodiscard]] bool repeats_iterations() const override { return false; }

  // files: "dir/trace.%d.et" (ranks 0…N−1) or a list; ranks: the GPUs of the ranks in order (default:
  // the cluster's first N GPUs, N = the list's length or, for a pattern, the cluster's GPU count).
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<ChakraWorkload>();
    YamlReader& reader = ctx.reader;
    spec->where = reader.where(ctx.map.node());
    const std::vector<std::string> gpus = ctx.cluster.gpu_names();
    if (const YAML::Node ranks = ctx.map.get("ranks"); ranks.IsDefined()) {
      for (const YAML::Node& rank : reader.list(ranks, "GPU names")) {
        const auto name = reader.string(rank);
        if (!name) continue;
        if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), *name) == gpus.end())
          reader.error(rank, fmt::format("'{}' is not a GPU of the cluster{}", *name, suggestion_suffix(*name, gpus)));
        else if (std::count(spec->ranks.begin(), spec->ranks.end(), *name) > 0)
          reader.error(rank, fmt::format("GPU '{}' is given to two ranks", *name));
        spec->ranks.push_back(*name);
      }
    }
    const YAML::Node files = ctx.map.require("files");
    if (files.IsSequence()) {
      for (const YAML::Node& file : reader.list(files, "trace files"))
        if (auto path = reader.string(file)) spec->files.push_back(ctx.resolve_path(*path));
    } else if (files.IsDefined()) {
      if (auto pattern = reader.string(files)) {
        if (pattern->find("%d") == std::string::npos)
          reader.error(files,
                       "a single file name needs '%d' where the rank goes (\"dir/trace.%d.et\"), or give a list");
        spec->files =
            expand_rank_pattern(ctx.resolve_path(*pattern), spec->ranks.empty() ? gpus.size() : spec->ranks.size());
      }
    }
    if (spec->ranks.empty()) {
      if (spec->files.size() > gpus.size() && !gpus.empty())
        reader.error(files, fmt::format("{} trace files but the cluster has {} GPUs", spec->files.size(), gpus.size()));
      for (std::size_t r = 0; r < std::min(spec->files.size(), gpus.size()); ++r) spec->ranks.push_back(gpus[r]);
    } else if (spec->ranks.size() != spec->files.size() && files.IsSequence()) {
      reader.error(ctx.map.get("ranks"),
                   fmt::format("{} ranks mapped but {} trace files", spec->ranks.size(), spec->files.size()));
    }
    spec->options.dtype = read_kernel_dtype(ctx.map, ctx.cluster).value_or(spec->options.dtype);
    if (const YAML::Node gpu = ctx.map.get("recorded_on"); gpu.IsDefined())
      if (auto name = reader.string(gpu)) {
        if (HardwareCatalog::builtin().find_gpu(*name) == nullptr)
          reader.error(gpu, fmt::format("unknown GPU model '{}'", *name));
        spec->options.recorded_on = *name;
      }
    return spec;
  }

  std::optional<TaskGraph> lower(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<ChakraWorkload>();
    ChakraImportOptions options = spec.options;
    for (const std::string& rank : spec.ranks) options.rank_gpus.push_back(gpu_model(scenario, rank));
    ChakraImport imported = import_chakra(spec.files, spec.ranks, options);
    // Unknown attributes do not stop a run: one line each on stderr.
    for (const std::string& warning : imported.warnings) std::cerr << "warning: " << warning << '\n';
    return std::move(imported.graph);
  }
};

}  // namespace

std::shared_ptr<const WorkloadKind> make_chakra_kind() { return std::make_shared<ChakraKind>(); }

ChakraExport export_scenario_chakra(const Scenario& scenario, const std::string& dir) {
  const std::optional<TaskGraph> graph = builtin_workload_kinds().at(scenario.workload_kind).value->lower(scenario);
  if (!graph)
    throw InputError(scenario.workload->where,
                     fmt::format("a '{}' workload drives the engine itself and has no task graph to export",
                                 scenario.workload_kind));
  // A Chakra trace has a file per rank and cannot say that ranks copy another's work.
  const bool windowed = std::any_of(graph->tasks().begin(), graph->tasks().end(), [](const Task& task) {
    const auto* collective = std::get_if<Collective>(&task.op);
    return collective != nullptr && collective->copies > 1;
  });
  if (!graph->mirrors().empty() || windowed)
    throw InputError(scenario.workload->where,
                     "this graph simulates a window of the data-parallel replicas (data_parallel_fidelity: window "
                     "or auto), which a Chakra trace cannot express; export it with data_parallel_fidelity: replicas");
  for (const Task& task : graph->tasks())
    if (const auto* collective = std::get_if<Collective>(&task.op);
        collective && (collective->mirrored || collective->alone))
      throw InputError(scenario.workload->where,
                       "this graph simulates one GPU per tensor-parallel group (tensor_parallel_fidelity: group or "
                       "auto), which a Chakra trace cannot express; export it with tensor_parallel_fidelity: ranks");
  // The node type of each GPU, by name, for the cost model's duration of each compute task.
  std::map<std::string, const NodeType*> type_of_gpu;
  const std::vector<std::string> names = scenario.cluster.gpu_names();
  std::size_t next = 0;
  for (const NodeInstance& node : scenario.cluster.nodes)
    for (int g = 0; g < scenario.cluster.type_of(node).gpus_per_node; ++g)
      type_of_gpu[names.at(next++)] = &scenario.cluster.type_of(node);
  return export_chakra(*graph, dir, [&](const Task& task) -> std::optional<Seconds> {
    const auto& compute = std::get<Compute>(task.op);
    const NodeType* type = type_of_gpu.at(graph->devices().at(compute.device));
    return type->calibration ? compute_time(compute, type->gpu, *type->calibration)
                             : compute_time(compute, type->gpu, type->compute_efficiency);
  });
}

}  // namespace dnnsim
