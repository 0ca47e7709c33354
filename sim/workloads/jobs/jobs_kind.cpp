#include "sim/workloads/jobs/jobs_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"

namespace dnnsim {

namespace {

// The first job's reason, named, for what the whole run cannot take.
std::string first_refusal(const std::vector<JobSpec>& jobs, std::string (WorkloadSpec::*reason)() const) {
  for (const JobSpec& job : jobs)
    if (std::string why = ((*job.workload).*reason)(); !why.empty()) return fmt::format("job '{}': {}", job.name, why);
  return {};
}

}  // namespace

std::string JobsWorkload::network_unsupported() const {
  return first_refusal(jobs, &WorkloadSpec::network_unsupported);
}

std::string JobsWorkload::failures_unsupported() const {
  return first_refusal(jobs, &WorkloadSpec::failures_unsupported);
}

std::string JobsWorkload::iterations_phrase(int run_iterations) const {
  if (std::none_of(jobs.begin(), jobs.end(), [](const JobSpec& job) { return job.iterations.has_value(); }))
    return WorkloadSpec::iterations_phrase(run_iterations);
  std::vector<std::string> counts;
  for (const JobSpec& job : jobs)
    counts.push_back(fmt::format("{} {}", job.name, job.iterations.value_or(run_iterations)));
  return fmt::format("iterations per job ({})", fmt::join(counts, ", "));
}

Scenario job_scenario(const Scenario& scenario, const JobSpec& job) {
  Scenario view;
  view.file = scenario.file;
  view.name = fmt::format("{}/{}", scenario.name, job.name);
  view.cluster = job.cluster;
  view.network = scenario.network;
  view.network.shared_with_other_jobs = true;
  view.workload_kind = job.kind;
  view.workload = job.workload;
  view.run = scenario.run;
  if (job.iterations) view.run.iterations = *job.iterations;
  view.outputs = scenario.outputs;
  return view;
}

namespace {

constexpr std::int64_t kMaxNodes = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxIterations = 1000000;  // as run.iterations

// `nodes: {first: F, count: C}` (nodes F … F + C − 1) or a list of node indices; empty after a problem.
// An empty cluster had its own errors: the indices are then not checked against it.
std::vector<std::size_t> read_nodes(YamlReader& reader, const YAML::Node& node, const Cluster& cluster) {
  const auto beyond = [&](std::int64_t n) {
    return !cluster.nodes.empty() && static_cast<std::size_t>(n) >= cluster.nodes.size();
  };
  std::vector<std::size_t> nodes;
  if (node.IsSequence()) {
    bool ok = true;
    for (const YAML::Node& item : node) {
      const auto n = reader.integer(item, 0, kMaxNodes);
      if (!n) {
        ok = false;
      } else if (beyond(*n)) {
        reader.error(item, fmt::format("node {} is beyond the cluster's {} nodes", *n, cluster.nodes.size()));
        ok = false;
      } else if (std::find(nodes.begin(), nodes.end(), static_cast<std::size_t>(*n)) != nodes.end()) {
        reader.error(item, fmt::format("node {} is listed twice", *n));
        ok = false;
      } else {
        nodes.push_back(static_cast<std::size_t>(*n));
      }
    }
    if (ok && nodes.empty()) reader.error(node, "a job needs at least one node");
    if (!ok) nodes.clear();
    return nodes;
  }
  MapReader range(reader, node, "a job's nodes (a list of node indices, or first and count)");
  if (!range.valid()) return nodes;
  const auto first = range.integer("first", 0, kMaxNodes);
  const auto count = range.integer("count", 1, kMaxNodes, true);
  range.finish();
  if (!count) return nodes;
  const std::int64_t last = first.value_or(0) + *count - 1;
  if (beyond(last)) {
    reader.error(node, fmt::format("nodes {}–{} are beyond the cluster's {} nodes", first.value_or(0), last,
                                   cluster.nodes.size()));
    return nodes;
  }
  for (std::int64_t n = first.value_or(0); n <= last; ++n) nodes.push_back(static_cast<std::size_t>(n));
  return nodes;
}

// Reads one job: its name and its nodes (checked against the cluster and the jobs read before it,
// `earlier`, valid or not) and its workload, which its own kind parses against the job's nodes as the
// cluster. `valid`: nothing was wrong, so the job can run.
JobSpec read_job(YamlReader& reader, const YAML::Node& node, const Cluster& cluster, const RunSettings& run,
                 const std::vector<JobSpec>& earlier, bool& valid) {
  JobSpec job;
  job.where = reader.where(node);
  MapReader map(reader, node, "a job");
  valid = map.valid();
  if (!valid) return job;
  if (YAML::Node name = map.require("name"); name.IsDefined()) {
    job.name = reader.string(name).value_or("");
    for (const JobSpec& other : earlier)
      if (other.name == job.name) {
        reader.error(name, fmt::format("job '{}' is named twice (first at line {})", job.name, other.where.line));
        valid = false;
      }
  } else {
    valid = false;
  }
  bool nodes_ok = false;
  if (YAML::Node nodes = map.require("nodes"); nodes.IsDefined()) {
    job.nodes = read_nodes(reader, nodes, cluster);
    nodes_ok = !job.nodes.empty();
    for (const JobSpec& other : earlier)
      for (const std::size_t n : job.nodes)
        if (std::find(other.nodes.begin(), other.nodes.end(), n) != other.nodes.end()) {
          reader.error(nodes, fmt::format("node {} is job '{}''s too: jobs run on disjoint nodes", n, other.name));
          nodes_ok = false;
          break;
        }
  }
  valid = valid && nodes_ok;
  if (nodes_ok && !cluster.nodes.empty()) {
    job.cluster.node_types = cluster.node_types;
    job.cluster.network = cluster.network;
    for (const std::size_t n : job.nodes) job.cluster.nodes.push_back(cluster.nodes[n]);
  }
  const YAML::Node iterations = map.get("iterations");
  if (iterations.IsDefined()) {
    if (const auto count = reader.integer(iterations, 1, kMaxIterations))
      job.iterations = static_cast<int>(*count);
    else
      valid = false;
  }
  const YAML::Node section = map.require("workload");
  map.finish();
  if (!section.IsDefined()) {
    valid = false;
    return job;
  }
  MapReader workload(reader, section, fmt::format("job '{}''s workload", job.name));
  const WorkloadKindRegistry& kinds = builtin_workload_kinds();
  const auto kind = workload.valid() ? workload.choice("kind", "workload kind", kinds.names(), true) : std::nullopt;
  // The workload's other keys depend on its kind, and its checks on the job's nodes: without them,
  // reporting those keys would only add noise.
  if (!kind || (!nodes_ok && !cluster.nodes.empty())) {
    valid = false;
    return job;
  }
  const WorkloadKind& entry = *kinds.at(*kind).value;
  if (!entry.lowers_to_one_graph()) {
    reader.error(section["kind"], fmt::format("a {} workload drives the simulation itself and cannot be a job beside "
                                              "others; a job lowers to one task graph (data_parallel, pipeline, spmd, "
                                              "taskgraph, chakra)",
                                              *kind));
    valid = false;
    return job;
  }
  WorkloadParseContext context{reader, workload, job.cluster, run};
  job.kind = *kind;
  job.workload = entry.parse(context);
  workload.finish();
  if (!job.workload) {
    valid = false;
  } else if (iterations.IsDefined() && !entry.repeats_iterations()) {
    reader.error(
        iterations,
        fmt::format("job '{}' is a {} workload, simulated as recorded: iterations do not repeat it", job.name, *kind));
    valid = false;
  } else if (const std::string why = job.workload->shared_fabric_unsupported(); !why.empty()) {
    reader.error(section, fmt::format("job '{}' shares the fabric with other jobs, but {}", job.name, why));
    valid = false;
  }
  return job;
}

// Appends `from`'s tasks to `into` after its own, as one more independent part of the same run:
// devices and streams matched by name (a device of both graphs is one device), dependencies, groups
// and mirrors renumbered; no task of one part depends on the other's.
void append_graph(TaskGraph& into, TaskGraph&& from) {
  // Hashed: device_by_name's scan per device would be quadratic in a 16k-GPU job's devices.
  std::unordered_map<std::string, DeviceId> known;
  for (std::size_t d = 0; d < into.devices().size(); ++d) known.emplace(into.devices()[d], static_cast<DeviceId>(d));
  std::vector<DeviceId> device(from.devices().size());
  for (std::size_t d = 0; d < device.size(); ++d) {
    const auto found = known.find(from.devices()[d]);
    device[d] = found != known.end() ? found->second : into.add_device(from.devices()[d]);
  }
  std::vector<StreamId> stream(from.streams().size());
  for (std::size_t s = 0; s < stream.size(); ++s) stream[s] = into.stream(from.streams()[s]);
  const auto offset = static_cast<TaskId>(into.tasks().size());
  struct Renumber {
    const std::vector<DeviceId>& device;
    void operator()(Compute& c) const { c.device = device[c.device]; }
    void operator()(Transfer& t) const {
      t.src = device[t.src];
      t.dst = device[t.dst];
    }
    void operator()(Collective& c) const {
      for (DeviceId& member : c.group) member = device[member];
      c.root = device[c.root];
    }
  };
  into.tasks().reserve(into.tasks().size() + from.tasks().size());
  for (TaskId id = 0; id < from.tasks().size(); ++id) {
    Task& task = from.tasks()[id];
    std::visit(Renumber{device}, task.op);
    task.stream = stream[task.stream];
    for (TaskId& dep : task.deps) dep += offset;
    into.add(std::move(task), from.origin(id));
  }
  for (const auto& [copy, source] : from.mirrors()) into.set_mirror(device[copy], device[source]);
}

// Where each device of `graph` runs: the job whose nodes hold its GPU.
std::vector<std::size_t> job_of_devices(const Scenario& scenario, const JobsWorkload& spec, const TaskGraph& graph) {
  std::vector<std::size_t> job_of_node(scenario.cluster.nodes.size(), 0);
  for (std::size_t j = 0; j < spec.jobs.size(); ++j)
    for (const std::size_t node : spec.jobs[j].nodes) job_of_node[node] = j;
  const std::vector<std::optional<ClusterGpu>> gpus = scenario.cluster.locate_gpus(graph.devices());
  std::vector<std::size_t> job(gpus.size());
  for (std::size_t d = 0; d < job.size(); ++d) job[d] = job_of_node[gpus[d]->node];
  return job;
}

DeviceId first_device(const Task& task) {
  struct Visitor {
    DeviceId operator()(const Compute& c) const { return c.device; }
    DeviceId operator()(const Transfer& t) const { return t.src; }
    DeviceId operator()(const Collective& c) const { return c.group.front(); }
  };
  return std::visit(Visitor{}, task.op);
}

class JobsKind final : public TaskGraphKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<JobsWorkload>();
    spec->where = ctx.reader.where(ctx.map.node());
    YAML::Node list = ctx.map.require("jobs");
    if (!list.IsDefined()) return spec;
    const std::vector<YAML::Node> items = ctx.reader.list(list, "jobs");
    if (list.IsSequence() && items.size() < 2)
      ctx.reader.error(list,
                       "a jobs workload needs two jobs or more: one job alone is its own workload on a "
                       "cluster of its nodes");
    std::vector<JobSpec> read;  // every job, valid or not: names and nodes are checked against them all
    for (const YAML::Node& item : items) {
      bool valid = false;
      read.push_back(read_job(ctx.reader, item, ctx.cluster, ctx.run, read, valid));
      if (valid) spec->jobs.push_back(read.back());
    }
    return spec;
  }

  // Each job lowered on its own nodes, the graphs appended in the jobs' order.
  std::optional<TaskGraph> lower(const Scenario& scenario) const override {
    TaskGraph graph;
    for (const JobSpec& job : scenario.workload_as<JobsWorkload>()->jobs) {
      std::optional<TaskGraph> part;
      try {
        part = builtin_workload_kinds().at(job.kind).value->lower(job_scenario(scenario, job));
      } catch (const InfeasiblePlan& e) {
        throw InfeasiblePlan(e.diagnostics().front().location,
                             fmt::format("job '{}': {}", job.name, e.diagnostics().front().message));
      }
      append_graph(graph, std::move(*part));
    }
    return graph;
  }

  std::string check(const Scenario& scenario) const override {
    try {
      return TaskGraphKind::check(scenario);
    } catch (const InfeasiblePlan& e) {
      return fmt::format("ok, but no feasible plan: {}", e.diagnostics().front().message);
    }
  }

  // Nothing to size where a job has no plan: the run reports it.
  std::optional<WorkloadSize> size(const Scenario& scenario) const override {
    try {
      return WorkloadKind::size(scenario);
    } catch (const InfeasiblePlan&) {
      return std::nullopt;
    }
  }

  // A job without a feasible plan is the run's result: nothing is simulated.
  SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const override {
    std::optional<TaskGraph> graph;
    try {
      graph = lower(scenario);
    } catch (const InfeasiblePlan& e) {
      SimulationResult result;
      result.gpu_names = scenario.cluster.gpu_names();
      result.infeasible_reason = e.diagnostics().front().message;
      return result;
    }
    return simulate(scenario, std::move(*graph), options);
  }

  std::vector<SummaryField> summary_fields() const override {
    return {{"jobs.#.name", FieldType::text},
            {"jobs.#.kind", FieldType::text},
            {"jobs.#.nodes.#"},
            {"jobs.#.gpus"},
            {"jobs.#.iterations"},
            {"jobs.#.iteration_time_s.#"},
            {"jobs.#.makespan_s"},
            {"jobs.#.mean.iteration_time_s"},
            {"jobs.#.mean.throughput_samples_per_s"},
            {"jobs.#.mean.tokens_per_s_per_gpu"}};
  }

  // Per job, what the common section gives for the whole run: its iterations' times (iteration k of a
  // job ends with its last task of iteration k), its makespan and its throughput.
  void add_to_summary(const Scenario& scenario, const SimulationResult& result,
                      nlohmann::ordered_json& summary) const override {
    const auto& spec = *scenario.workload_as<JobsWorkload>();
    const std::vector<Task>& tasks = result.graph.tasks();
    if (tasks.empty()) return;
    const std::vector<std::size_t> job_of_device = job_of_devices(scenario, spec, result.graph);
    std::vector<std::vector<double>> iteration_end(spec.jobs.size(), std::vector<double>(1, 0.0));
    for (TaskId id = 0; id < tasks.size(); ++id) {
      std::vector<double>& ends = iteration_end[job_of_device[first_device(tasks[id])]];
      const std::uint32_t k = tasks[id].iteration;
      if (k >= ends.size()) ends.resize(k + std::size_t{1}, 0.0);
      if (result.task_end[id] == result.task_end[id]) ends[k] = std::max(ends[k], result.task_end[id]);
    }
    nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
    for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
      const JobSpec& job = spec.jobs[j];
      const std::vector<double>& ends = iteration_end[j];
      const std::vector<double> times = iteration_times(ends);
      const double makespan = *std::max_element(ends.begin(), ends.end());
      const double mean = makespan / static_cast<double>(ends.size());
      const double gpus = static_cast<double>(job.cluster.gpu_count());
      nlohmann::ordered_json entry;
      entry["name"] = job.name;
      entry["kind"] = job.kind;
      entry["nodes"] = job.nodes;
      entry["gpus"] = job.cluster.gpu_count();
      entry["iterations"] = ends.size();
      entry["iteration_time_s"] = times;
      entry["makespan_s"] = makespan;
      nlohmann::ordered_json means;
      means["iteration_time_s"] = mean;
      const std::optional<int> batch = job.workload->samples_per_iteration();
      const std::optional<int> tokens = job.workload->tokens_per_sample();
      means["throughput_samples_per_s"] = batch && mean > 0 ? nlohmann::ordered_json(*batch / mean) : nullptr;
      if (batch && tokens && mean > 0)
        means["tokens_per_s_per_gpu"] = static_cast<double>(*batch) * *tokens / mean / gpus;
      entry["mean"] = std::move(means);
      jobs.push_back(std::move(entry));
    }
    summary["jobs"] = std::move(jobs);
  }
};

}  // namespace

std::shared_ptr<const WorkloadKind> make_jobs_kind() { return std::make_shared<JobsKind>(); }

}  // namespace dnnsim
