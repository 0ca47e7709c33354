#include "sim/workloads/taskgraph/taskgraph_kind.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/program/task_graph_json.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {
namespace {

class TaskGraphFileKind final : public TaskGraphKind {
 public:
  // The file is one recorded run: run.iterations does not repeat it.
  [[nodiscard]] bool repeats_iterations() const override { return false; }

  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<TaskGraphWorkload>();
    spec->where = ctx.reader.where(ctx.map.node());
    if (auto file = ctx.map.string("file", true)) spec->path = ctx.resolve_path(*file);
    return spec;
  }

  std::optional<TaskGraph> lower(const Scenario& scenario) const override {
    const auto& file = *scenario.workload_as<TaskGraphWorkload>();
    TaskGraph graph = load_task_graph(file.path);
    const std::vector<std::string> gpus = scenario.cluster.gpu_names();
    std::vector<Diagnostic> problems;
    for (const std::string& device : graph.devices())
      if (std::find(gpus.begin(), gpus.end(), device) == gpus.end())
        problems.push_back(Diagnostic{SourceLocation{file.path, 0, 0},
                                      fmt::format("device '{}' of the task graph is not a GPU of the cluster{}", device,
                                                  suggestion_suffix(device, gpus))});
    if (!problems.empty()) throw InputError(std::move(problems));
    return graph;
  }
};

}  // namespace

std::shared_ptr<const WorkloadKind> make_taskgraph_kind() { return std::make_shared<TaskGraphFileKind>(); }

}  // namespace dnnsim
