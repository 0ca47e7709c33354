#include "sim/report/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "models/common/input_file.hpp"
#include "models/common/parse_number.hpp"
#include "models/common/units.hpp"
#include "models/cost/memory_model.hpp"
#include "sim/report/intervals.hpp"
#include "sim/report/metrics.hpp"
#include "sim/report/summary_fields.hpp"

namespace dnnsim {
namespace {

// 1024 → "1,024".
std::string with_thousands(std::size_t n) {
  std::string digits = std::to_string(n);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

// Busy intervals of each device: compute tasks by phase, and communication (a transfer occupies
// its source and destination, a collective every member).
struct DeviceActivity {
  std::vector<Interval> compute;
  std::vector<Interval> communication;
  std::map<Phase, std::vector<Interval>> by_phase;
};

std::vector<DeviceActivity> device_activity(const SimulationResult& result) {
  std::vector<DeviceActivity> activity(result.graph.devices().size());
  for (TaskId id = 0; id < result.graph.tasks().size(); ++id) {
    const double start = result.task_start[id];
    const double end = result.task_end[id];
    if (!happened(start) || !happened(end)) continue;
    const Task& task = result.graph.task(id);
    const Interval interval{start, end};
    if (const auto* compute = std::get_if<Compute>(&task.op)) {
      activity[compute->device].compute.push_back(interval);
      activity[compute->device].by_phase[task.phase].push_back(interval);
    } else if (const auto* transfer = std::get_if<Transfer>(&task.op)) {
      activity[transfer->src].communication.push_back(interval);
      activity[transfer->dst].communication.push_back(interval);
    } else {
      for (DeviceId d : task.devices()) activity[d].communication.push_back(interval);
    }
  }
  return activity;
}

// Nodes whose every GPU mirrors the GPU of the same local index on one other node (a data-parallel
// window's translates, TaskGraph::mirrors), by name: node → the node it copies. Their links carry
// what the source node's do. Tensor-parallel ranks mirror rank 0 on their own node (a mirrored
// collective, not a graph mirror): such a node is not mapped, its links' traffic is recorded as it
// runs (LinkTrafficRecorder counts the ranks' translates).
std::map<std::string, std::string> mirrored_nodes(const TaskGraph& graph) {
  const auto split = [](const std::string& name) {
    const std::size_t slash = name.rfind('/');
    return slash == std::string::npos ? std::pair<std::string, std::string>{name, ""}
                                      : std::pair{name.substr(0, slash), name.substr(slash + 1)};
  };
  std::vector<bool> copied(graph.devices().size(), false);
  std::map<std::string, std::string> copies;
  std::set<std::string> simulated;
  for (const auto& [copy, original] : graph.mirrors()) {
    copied[copy] = true;
    const auto [node, local] = split(graph.devices()[copy]);
    const auto [from_node, from_local] = split(graph.devices()[original]);
    if (from_node == node || from_local != local) simulated.insert(node);
    if (const auto [it, added] = copies.try_emplace(node, from_node); !added && it->second != from_node)
      simulated.insert(node);
  }
  for (DeviceId d = 0; d < copied.size(); ++d)
    if (!copied[d]) simulated.insert(split(graph.devices()[d]).first);
  for (const std::string& node : simulated) copies.erase(node);
  return copies;
}

std::string status_of(const SimulationResult& result, std::vector<std::string>& messages) {
  if (!result.infeasible_reason.empty()) {
    messages.push_back(result.infeasible_reason);
    return "infeasible";
  }
  std::string status = "ok";
  // A mirrored device needs what its source needed (mirror_sources).
  const std::vector<DeviceId> source = mirror_sources(result.graph);
  for (std::size_t d = 0; d < result.peak_memory_bytes.size(); ++d) {
    const MemoryFit fit = check_fit(result.graph.devices()[d], Bytes(result.peak_memory_bytes[source[d]]),
                                    Bytes(result.memory_capacity_bytes[d]));
    if (fit.fits) continue;
    messages.push_back(fit.message);
    status = "out_of_memory";
  }
  if (result.interrupted) {
    // A cluster replay has jobs, not tasks: its summary counts the unfinished ones.
    messages.push_back(result.graph.tasks().empty()
                           ? std::string("interrupted: the reports cover what was simulated")
                           : fmt::format("interrupted: {} of {} tasks had not finished; the reports cover what was "
                                         "simulated",
                                         result.unfinished_tasks, result.graph.tasks().size()));
    status = "interrupted";
  } else if (!result.stopped.empty()) {
    messages.push_back("stopped: " + result.stopped + "; the reports cover what was simulated");
    status = "stopped";
  } else if (result.unfinished_tasks > 0) {
    messages.push_back(
        fmt::format("{} tasks never finished (a failed host stops the work placed on it)", result.unfinished_tasks));
    status = "failed";
  }
  return status;
}

}  // namespace

std::vector<double> iteration_times(std::vector<double> last_task_end) {
  std::vector<double> times(last_task_end.size());
  for (std::size_t k = 0; k < last_task_end.size(); ++k) {
    if (k > 0) last_task_end[k] = std::max(last_task_end[k], last_task_end[k - 1]);
    times[k] = last_task_end[k] - (k == 0 ? 0.0 : last_task_end[k - 1]);
  }
  return times;
}

nlohmann::ordered_json make_summary(const Scenario& scenario, const SimulationResult& result) {
  using nlohmann::ordered_json;
  ordered_json summary;
  summary["scenario"] = scenario.name;
  std::vector<std::string> messages;
  summary["status"] = status_of(result, messages);
  summary["messages"] = messages;
  summary["seed"] = scenario.run.seed;

  // The iterations are counted in the pass that finds their ends (TaskGraph::iteration_count's rule, at
  // least one): a pass over a million-task graph costs a tenth of a second on this VM.
  std::vector<double> iteration_end(1, 0.0);
  const std::vector<Task>& tasks = result.graph.tasks();
  for (TaskId id = 0; id < tasks.size(); ++id) {
    const std::uint32_t k = tasks[id].iteration;
    if (k >= iteration_end.size()) iteration_end.resize(k + std::size_t{1}, 0.0);
    if (happened(result.task_end[id])) iteration_end[k] = std::max(iteration_end[k], result.task_end[id]);
  }
  // The last iteration ends with the run: a kind that drives the engine itself without tasks (parameter
  // servers, a cluster's jobs) wrote an iteration of 0 s beside a mean iteration of its makespan.
  iteration_end.back() = std::max(iteration_end.back(), result.makespan_s);
  const auto iterations = static_cast<std::uint32_t>(iteration_end.size());
  summary["iterations"] = iterations;
  summary["iteration_time_s"] = iteration_times(std::move(iteration_end));
  summary["makespan_s"] = result.makespan_s;

  const double mean_iteration = result.makespan_s / iterations;
  const std::optional<int> global_batch = scenario.workload->samples_per_iteration();
  ordered_json mean;
  mean["iteration_time_s"] = mean_iteration;
  if (global_batch) {
    mean["throughput_samples_per_s"] = mean_iteration > 0 ? *global_batch / mean_iteration : 0.0;
  } else {
    mean["throughput_samples_per_s"] = nullptr;  // a task graph file does not say what a sample is
  }
  const std::optional<int> tokens = scenario.workload->tokens_per_sample();
  const double cluster_gpus = std::max<double>(1, static_cast<double>(scenario.cluster.gpu_count()));
  if (global_batch && tokens && mean_iteration > 0) {
    mean["throughput_tokens_per_s"] = static_cast<double>(*global_batch) * *tokens / mean_iteration;
    // Megatron-Bridge's measure: tokens per second per GPU of the cluster.
    mean["tokens_per_s_per_gpu"] = static_cast<double>(*global_batch) * *tokens / mean_iteration / cluster_gpus;
  } else {
    mean["throughput_tokens_per_s"] = nullptr;
  }
  if (const std::optional<double> flops = scenario.workload->framework_flops_per_sample();
      flops && global_batch && mean_iteration > 0)
    mean["framework_model_tflops_per_gpu"] = *flops * *global_batch / mean_iteration / cluster_gpus / 1e12;
  // Megatron-LM's figures (sim/report/metrics.hpp): FLOP rates per GPU, MFU and HFU.
  // A mirrored device (Collective::mirrored) reports its source's figures, and says so.
  const std::vector<DeviceId> source = mirror_sources(result.graph);
  // The means are over the GPUs: a GNN run's CPU hosts (`nodeN/cpu`) are devices of its graph and have
  // rows of their own, but are not what "per GPU" divides by.
  const std::vector<std::optional<ClusterGpu>> gpu_of_device = scenario.cluster.locate_gpus(result.graph.devices());
  const FlopMetrics flops = flop_metrics(result, gpu_specs_of_devices(gpu_of_device), source);
  const auto gpu_count = static_cast<std::size_t>(
      std::count_if(gpu_of_device.begin(), gpu_of_device.end(), [](const auto& gpu) { return gpu.has_value(); }));
  const double per_gpu_second =
      result.makespan_s > 0 ? 1.0 / (result.makespan_s * std::max<double>(1, static_cast<double>(gpu_count))) : 0.0;
  mean["model_flops_per_iteration"] = flops.model_flops / iterations;
  mean["hardware_flops_per_iteration"] = flops.hardware_flops / iterations;
  mean["model_tflops_per_gpu"] = flops.model_flops * per_gpu_second / 1e12;
  mean["hardware_tflops_per_gpu"] = flops.hardware_flops * per_gpu_second / 1e12;
  mean["mfu"] = flops.mfu(result.makespan_s);
  mean["hfu"] = flops.hfu(result.makespan_s);
  const std::vector<MemoryBreakdown> model_states =
      builtin_workload_kinds().at(scenario.workload_kind).value->model_state_memory(scenario, result);

  const auto activity = device_activity(result);
  std::vector<double> peak_memory(result.peak_memory_bytes.size());
  for (DeviceId d = 0; d < peak_memory.size(); ++d) peak_memory[d] = result.peak_memory_bytes[source[d]];
  // Appended, not assigned by key: an ordered_json object finds a key by a linear search, so filling
  // it by operator[] was quadratic in the devices (minutes at 131,072 GPUs); device names are unique.
  ordered_json::object_t devices;
  double total_compute = 0, total_comm = 0, total_exposed = 0, total_idle = 0;
  // Measured once per device that ran its tasks; its mirrors report the same figures.
  struct Measured {
    double compute = 0;
    double busy = 0;
    double communication = 0;
    ordered_json phases = ordered_json::object();
  };
  std::vector<std::optional<Measured>> measured(activity.size());
  const auto measured_of = [&](DeviceId s) -> const Measured& {
    if (!measured[s]) {
      const DeviceActivity& a = activity[s];
      Measured m{measure(a.compute), measure(concatenate(a.compute, a.communication)), measure(a.communication)};
      for (const auto& [phase, intervals] : a.by_phase)
        m.phases[std::string(phase_name(phase))] = measure(intervals) / iterations;
      measured[s] = std::move(m);
    }
    return *measured[s];
  };
  for (DeviceId d = 0; d < result.graph.devices().size(); ++d) {
    const Measured& m = measured_of(source[d]);
    const double compute = m.compute;
    const double busy = m.busy;
    const double communication = m.communication;
    // Each length is a sum of intervals' lengths, summed in another order for each: a device busy for
    // the whole run comes out a rounding error (1e-16 s) over the makespan, not idle for -1e-16 s.
    const double exposed = std::max(0.0, busy - compute);  // communication time not hidden under compute
    const double idle = std::max(0.0, result.makespan_s - busy);
    ordered_json device;
    device["gpu"] = result.gpu_models[d];
    if (source[d] != d) device["mirrors"] = result.graph.devices()[source[d]];
    device["utilization"] = result.makespan_s > 0 ? compute / result.makespan_s : 0.0;
    device["peak_memory_bytes"] = peak_memory[d];
    device["memory_capacity_bytes"] = result.memory_capacity_bytes[d];
    device["memory_at_peak"] = memory_at_peak(peak_memory[d], model_states.empty() ? nullptr : &model_states[d]);
    const DeviceFlops& device_flops = flops.devices[d];
    device["model_tflops_per_s"] = result.makespan_s > 0 ? device_flops.model_flops / result.makespan_s / 1e12 : 0.0;
    device["mfu"] = result.makespan_s > 0 && device_flops.peak_flops_per_s > 0
                        ? device_flops.model_flops / (result.makespan_s * device_flops.peak_flops_per_s)
                        : 0.0;
    device["compute_s"] = compute / iterations;
    device["communication_s"] = communication / iterations;
    device["exposed_communication_s"] = exposed / iterations;
    device["idle_s"] = idle / iterations;
    device["compute_by_phase_s"] = m.phases;
    devices.emplace_back(result.graph.devices()[d], std::move(device));
    if (!gpu_of_device[d]) continue;
    total_compute += compute;
    total_comm += communication;
    total_exposed += exposed;
    total_idle += idle;
  }
  const double n = std::max<double>(1, static_cast<double>(gpu_count)) * iterations;
  mean["compute_s"] = total_compute / n;
  mean["communication_s"] = total_comm / n;
  mean["exposed_communication_s"] = total_exposed / n;
  mean["idle_s"] = total_idle / n;
  mean["utilization"] = result.makespan_s > 0 ? total_compute / n / mean_iteration : 0.0;
  // Averaged over the GPUs, as DAPPLE's Table 5 reports "average peak memory".
  double peak_sum = 0;
  double peak_max = 0;
  for (DeviceId d = 0; d < peak_memory.size(); ++d)
    if (gpu_of_device[d]) {
      peak_sum += peak_memory[d];
      peak_max = std::max(peak_max, peak_memory[d]);
    }
  mean["peak_memory_bytes"] = gpu_count == 0 ? 0.0 : peak_sum / static_cast<double>(gpu_count);
  mean["max_peak_memory_bytes"] = peak_max;
  summary["mean"] = mean;
  builtin_workload_kinds().at(scenario.workload_kind).value->add_to_summary(scenario, result, summary);
  summary["devices"] = std::move(devices);

  // A mirrored node's links ("<node>/…", "switch/<node>") report its source node's.
  const std::map<std::string, std::string> copied_nodes = mirrored_nodes(result.graph);
  std::map<std::string, std::size_t> link_index;
  if (!copied_nodes.empty())
    for (std::size_t l = 0; l < result.layout.links.size(); ++l) link_index[result.layout.links[l].name] = l;
  const auto traffic_source = [&](std::size_t l) {
    if (copied_nodes.empty()) return l;
    const std::string& name = result.layout.links[l].name;
    const bool port = name.starts_with("switch/");
    const std::string node = port ? name.substr(7) : name.substr(0, name.find('/'));
    const auto copied = copied_nodes.find(node);
    if (copied == copied_nodes.end()) return l;
    const std::string twin = port ? "switch/" + copied->second : copied->second + name.substr(node.size());
    const auto found = link_index.find(twin);
    return found == link_index.end() ? l : found->second;
  };
  ordered_json::object_t links;  // appended, as the devices above
  for (std::size_t l = 0; l < result.layout.links.size(); ++l) {
    const double up = result.link_bytes_up[traffic_source(l)];
    const double down = result.link_bytes_down[traffic_source(l)];
    if (up + down <= 0) continue;
    const LinkDecl& decl = result.layout.links[l];
    ordered_json link;
    link["bytes"] = up + down;
    link["bandwidth_bytes_per_s"] = decl.bandwidth.value();
    // Busiest direction over the run, at the nominal bandwidth (a shared link counts both directions).
    const double carried = decl.sharing == LinkDecl::Sharing::shared ? up + down : std::max(up, down);
    link["mean_utilization"] = result.makespan_s > 0 ? carried / (decl.bandwidth.value() * result.makespan_s) : 0.0;
    links.emplace_back(decl.name, std::move(link));
  }
  summary["links"] = std::move(links);

  ordered_json simulation;
  simulation["tasks"] = result.graph.tasks().size();
  simulation["operations"] = result.operations;
  simulation["flows"] = result.flow_count;
  simulation["transfer_retries"] = result.transfer_retries;
  simulation["unfinished_tasks"] = result.unfinished_tasks;
  simulation["collective_fidelity"] =
      scenario.run.collective_fidelity ? collective_fidelity_name(*scenario.run.collective_fidelity) : "auto";
  summary["simulation"] = simulation;
#ifndef NDEBUG
  // Debug builds (the tests) hold what is written to what is declared, which is what expectations and
  // sweeps are checked against before a run (summary_fields.hpp).
  if (const std::vector<std::string> undeclared = undeclared_summary_fields(scenario.workload_kind, summary);
      !undeclared.empty())
    throw std::logic_error(
        fmt::format("summary.json values not declared in sim/report/summary_fields.cpp or the "
                    "{} kind's summary_fields(): {}",
                    scenario.workload_kind, fmt::join(undeclared, ", ")));
  if (const std::vector<std::string> contradictions = summary_contradictions(summary); !contradictions.empty())
    throw std::logic_error(fmt::format("summary.json contradicts itself: {}", fmt::join(contradictions, "; ")));
#endif
  return summary;
}

TaskDescription describe_task(const TaskGraph& graph, TaskId id) {
  const Task& task = graph.task(id);
  if (const auto* c = std::get_if<Compute>(&task.op))
    return {"compute", graph.devices()[c->device], c->bytes_accessed.value(), c->flops.value()};
  if (const auto* t = std::get_if<Transfer>(&task.op))
    return {"transfer", graph.devices()[t->src] + ">" + graph.devices()[t->dst], t->size.value(), 0.0};
  const auto& col = std::get<Collective>(task.op);
  return {std::string(collective_kind_name(col.kind)), fmt::format("{} devices", logical_size(col)), col.size.value(),
          0.0};
}

void write_tasks_csv(std::ostream& out, const SimulationResult& result) {
  out << "id,label,kind,phase,iteration,devices,stream,start_s,end_s,duration_s,bytes,flops\n";
  const TaskGraph& graph = result.graph;
  std::string row;  // one row at a time: the file is never held
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const Task& task = graph.task(id);
    const auto [kind, devices, bytes, flops] = describe_task(graph, id);
    const double start = result.task_start[id];
    const double end = result.task_end[id];
    std::string label = task.label;
    std::replace(label.begin(), label.end(), ',', ';');
    row.clear();
    fmt::format_to(std::back_inserter(row), "{},{},{},{},{},{},{},{},{},{},{},{}\n", id, label, kind,
                   phase_name(task.phase), task.iteration, devices, graph.streams()[task.stream],
                   happened(start) ? fmt::format("{:.9g}", start) : "", happened(end) ? fmt::format("{:.9g}", end) : "",
                   happened(start) && happened(end) ? fmt::format("{:.9g}", end - start) : "", bytes, flops);
    out << row;
  }
}

std::ostream& operator<<(std::ostream& out, const Json& json) { return out << json.value; }

void write_chrome_trace(std::ostream& out, const SimulationResult& result) {
  const TaskGraph& graph = result.graph;
  // The document {"displayTimeUnit": "ms", "traceEvents": [...]}, compact, an event at a time.
  out << R"({"displayTimeUnit":"ms","traceEvents":[)";
  JsonElements events(out);
  // Process = device, thread = stream; a last process holds the link counters.
  for (DeviceId d = 0; d < graph.devices().size(); ++d) {
    events.next() << R"({"name":"process_name","ph":"M","pid":)" << d << R"(,"args":{"name":)"
                  << Json{graph.devices()[d]} << "}}";
    for (StreamId s = 0; s < graph.streams().size(); ++s)
      events.next() << R"({"name":"thread_name","ph":"M","pid":)" << d << R"(,"tid":)" << s << R"(,"args":{"name":)"
                    << Json{graph.streams()[s]} << "}}";
  }
  const auto links_pid = graph.devices().size();
  events.next() << R"({"name":"process_name","ph":"M","pid":)" << links_pid << R"(,"args":{"name":"links"}})";
  constexpr double kMicro = 1e6;  // Chrome trace dates are in microseconds
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const double start = result.task_start[id];
    const double end = result.task_end[id];
    if (!happened(start) || !happened(end)) continue;
    const Task& task = graph.task(id);
    const Json label{task.label.str()};
    const Json phase{std::string(phase_name(task.phase))};
    const Json ts{start * kMicro};
    const Json dur{(end - start) * kMicro};
    for (DeviceId d : task.devices())
      events.next() << R"({"name":)" << label << R"(,"cat":)" << phase << R"(,"ph":"X","pid":)" << d << R"(,"tid":)"
                    << task.stream << R"(,"ts":)" << ts << R"(,"dur":)" << dur << R"(,"args":{"task":)" << id
                    << R"(,"iteration":)" << task.iteration << "}}";
  }
  // Link utilisation: each flow adds its mean rate (bytes over its duration) to every link of its
  // route while it runs; the counter is that sum over the link's bandwidth, in the busier direction
  // where each direction has the whole bandwidth (split-duplex and fat-pipe links: summary.json's
  // mean_utilization likewise takes the busier direction's bytes), both directions on a shared link.
  // Per-flow mean rates smooth out rate changes inside a flow; the per-link byte totals in
  // summary.json are exact. The rate changes (date, rate delta) of every link and direction, one after
  // another in one array (link l's up direction from `first_change[2l]`, its down direction from
  // `first_change[2l + 1]`, to `first_change[2l + 2]`), sized by a first pass over the flows: 16 bytes
  // a change, no slack.
  std::map<std::pair<DeviceId, DeviceId>, Route> routes;
  // Flows carry graph device ids; the layout numbers GPUs in cluster order.
  std::unordered_map<std::string_view, std::uint32_t> gpu_index;
  for (std::size_t g = 0; g < result.gpu_names.size(); ++g)
    gpu_index.emplace(result.gpu_names[g], static_cast<std::uint32_t>(g));
  const auto gpu = [&](DeviceId d) {
    const auto found = gpu_index.find(graph.devices()[d]);
    return found == gpu_index.end() ? static_cast<std::uint32_t>(result.gpu_names.size()) : found->second;
  };
  const auto route = [&](const SimulationResult::Flow& flow) -> const Route& {
    auto it = routes.find({flow.src, flow.dst});
    if (it == routes.end())
      it = routes.emplace(std::pair{flow.src, flow.dst}, result.layout.gpu_route(gpu(flow.src), gpu(flow.dst))).first;
    return it->second;
  };
  const auto direction = [&](const Hop& hop) {
    const bool down = !hop.up && result.layout.links[hop.link].sharing != LinkDecl::Sharing::shared;
    return 2 * std::size_t{hop.link} + (down ? 1 : 0);
  };
  const std::size_t directions = 2 * result.layout.links.size();
  std::vector<std::size_t> first_change(directions + 1, 0);
  for (const SimulationResult::Flow& flow : result.flows)
    if (flow.end > flow.start)
      for (const Hop& hop : route(flow)) first_change[direction(hop) + 1] += 2;
  for (std::size_t d = 0; d < directions; ++d) first_change[d + 1] += first_change[d];
  std::vector<std::pair<double, double>> changes(first_change.back());
  std::vector<std::size_t> filled(first_change.begin(), first_change.end() - 1);
  for (const SimulationResult::Flow& flow : result.flows) {
    if (flow.end <= flow.start) continue;
    const double rate = flow.bytes / (flow.end - flow.start);
    for (const Hop& hop : route(flow)) {
      changes[filled[direction(hop)]++] = {flow.start, rate};
      changes[filled[direction(hop)]++] = {flow.end, -rate};
    }
  }
  const auto at = [&](std::size_t index) { return changes.begin() + static_cast<std::ptrdiff_t>(index); };
  for (std::size_t link = 0; link < result.layout.links.size(); ++link) {
    // Each direction sorted by date (and delta): equal pairs are the same value, so the order the flows
    // came in does not show.
    auto up = at(first_change[2 * link]);
    const auto up_end = at(first_change[2 * link + 1]);
    auto down = up_end;
    const auto down_end = at(first_change[2 * link + 2]);
    std::sort(up, up_end);
    std::sort(down, down_end);
    const LinkDecl& decl = result.layout.links[link];
    const Json name{decl.name};
    double up_rate = 0, down_rate = 0;
    while (up != up_end || down != down_end) {
      const double date = up == up_end ? down->first : down == down_end ? up->first : std::min(up->first, down->first);
      for (; up != up_end && up->first == date; ++up) up_rate += up->second;
      for (; down != down_end && down->first == date; ++down) down_rate += down->second;
      events.next() << R"({"name":)" << name << R"(,"ph":"C","pid":)" << links_pid << R"(,"ts":)" << Json{date * kMicro}
                    << R"(,"args":{"utilization":)"
                    << Json{std::max({0.0, up_rate, down_rate}) / decl.bandwidth.value()} << "}}";
    }
  }
  out << "]}\n";
}

void write_reports(const Scenario& scenario, const SimulationResult& result, const nlohmann::ordered_json& summary,
                   const std::string& dir) {
  create_output_directory(dir);
  // Each file is written as it is formatted, through the stream's buffer: a trace of millions of
  // events is never held as text (docs/performance.md, "Reports written as they are formatted").
  const auto write = [&](const std::string& name, const auto& write_to) {
    std::ofstream out(std::filesystem::path(dir) / name, std::ios::binary);
    write_to(out);
    if (!out) throw InputError(SourceLocation{dir + "/" + name, 0, 0}, "cannot write the file");
  };
  write("summary.json", [&](std::ostream& out) { out << summary.dump(2) << "\n"; });
  if (scenario.outputs.tasks_csv) write("tasks.csv", [&](std::ostream& out) { write_tasks_csv(out, result); });
  if (scenario.outputs.trace) write("trace.json", [&](std::ostream& out) { write_chrome_trace(out, result); });
  builtin_workload_kinds().at(scenario.workload_kind).value->write_files(scenario, result, dir);
}

std::string format_summary_table(const nlohmann::ordered_json& summary, bool all_devices) {
  std::string text;
  text +=
      fmt::format("scenario {}: {}\n", summary["scenario"].get<std::string>(), summary["status"].get<std::string>());
  // A thousand GPUs out of memory would bury the table: the first few here, every one in summary.json.
  constexpr std::size_t kShownMessages = 8;
  const auto& messages = summary["messages"];
  for (std::size_t i = 0; i < std::min(messages.size(), kShownMessages); ++i)
    text += fmt::format("  {}\n", messages[i].get<std::string>());
  if (messages.size() > kShownMessages)
    text += fmt::format("  … and {} more (summary.json lists them all)\n", messages.size() - kShownMessages);
  // No plan, so no iteration: its times and devices would be zeros that read as a result.
  if (summary["status"] == "infeasible") return text;
  if (summary.contains("cluster")) {  // a job stream: no iteration or per-device table (docs/cluster.md)
    const auto& c = summary["cluster"];
    const auto& jct = c["jct_s"];
    text += fmt::format("{} jobs ({} finished, {} never fit, {} unfinished) on {} GPUs, {} + {}\n",
                        c["jobs"].get<std::size_t>(), c["finished"].get<std::size_t>(),
                        c["never_fits"].get<std::size_t>(), c["unfinished"].get<std::size_t>(), c["gpus"].get<int>(),
                        c["scheduler"].get<std::string>(), c["placement"].get<std::string>());
    text += fmt::format("JCT mean {}  p50 {}  p95 {}  p99 {}\n", format_seconds(Seconds(jct["mean"].get<double>())),
                        format_seconds(Seconds(jct["p50"].get<double>())),
                        format_seconds(Seconds(jct["p95"].get<double>())),
                        format_seconds(Seconds(jct["p99"].get<double>())));
    text += fmt::format("makespan {}  mean queueing {}  GPU utilisation {:.1f}%  preemptions {}\n",
                        format_seconds(Seconds(c["makespan_s"].get<double>())),
                        format_seconds(Seconds(c["mean_queueing_s"].get<double>())),
                        100 * c["gpu_utilisation"].get<double>(), c["preemptions"].get<std::size_t>());
    return text;
  }
  if (summary.contains("parameter_server")) {  // a run to a target loss: no iteration or per-device table
    const auto& ps = summary["parameter_server"];
    text += fmt::format("{}, {}, {} ({})\n", counted(ps["workers"].get<std::size_t>(), "worker"),
                        counted(ps["servers"].get<std::size_t>(), "server"), ps["policy"].get<std::string>(),
                        ps["policy_state"].get<std::string>());
    text += ps["converged"].get<bool>()
                ? fmt::format("loss {:.4g} reached the target {:.4g} at {}\n", ps["final_loss"].get<double>(),
                              ps["target_loss"].get<double>(), format_seconds(Seconds(ps["end_s"].get<double>())))
                : fmt::format("loss {:.4g} at the end, {}: target {:.4g} not reached\n", ps["final_loss"].get<double>(),
                              format_seconds(Seconds(ps["end_s"].get<double>())), ps["target_loss"].get<double>());
    text +=
        fmt::format("{} local steps, {} commits  computing {:.1f}%  communicating {:.1f}%  blocked {:.1f}%\n",
                    ps["local_steps"].get<long>(), ps["commits"].get<long>(), 100 * ps["computing_ratio"].get<double>(),
                    100 * ps["communication_ratio"].get<double>(), 100 * ps["blocked_ratio"].get<double>());
    return text;
  }
  const auto& mean = summary["mean"];
  text += fmt::format("mean iteration {:>12}   ({})\n", format_seconds(Seconds(mean["iteration_time_s"].get<double>())),
                      counted(summary["iterations"].get<std::size_t>(), "iteration"));
  if (!mean["throughput_samples_per_s"].is_null())
    text += fmt::format("throughput     {:>12.1f} samples/s\n", mean["throughput_samples_per_s"].get<double>());
  if (summary.contains("jobs"))
    for (const auto& job : summary["jobs"]) {
      text += fmt::format("job {:<10} {:>12}   ({} GPUs, {})", job["name"].get<std::string>(),
                          format_seconds(Seconds(job["mean"]["iteration_time_s"].get<double>())),
                          job["gpus"].get<std::size_t>(), job["kind"].get<std::string>());
      if (!job["mean"]["throughput_samples_per_s"].is_null())
        text += fmt::format("   {:.1f} samples/s", job["mean"]["throughput_samples_per_s"].get<double>());
      text += '\n';
    }
  if (summary.contains("pipeline") && summary["pipeline"]["feasible"].get<bool>()) {
    const auto& pipeline = summary["pipeline"];
    text += fmt::format("plan ({}, {}): {}\n", pipeline["planner"].get<std::string>(),
                        pipeline["schedule"].get<std::string>(), pipeline["plan"].get<std::string>());
    if (pipeline.contains("layout")) text += fmt::format("layout         {}\n", pipeline["layout"].get<std::string>());
    if (pipeline.contains("predicted_iteration_time_s"))
      text += fmt::format("predicted      {:>12}   ({})\n",
                          format_seconds(Seconds(pipeline["predicted_iteration_time_s"].get<double>())),
                          pipeline["cost_model"].get<std::string>());
  }
  if (mean.contains("mfu") && mean["model_flops_per_iteration"].get<double>() <= 0) {
    text += "model FLOP/s   n/a (the workload gives measured times, not FLOPs)\n";
  } else if (mean.contains("mfu")) {
    text += fmt::format(
        "model FLOP/s   {:>8.1f} TFLOP/s per GPU   MFU {:.1f}%   (with recomputation {:.1f} TFLOP/s, HFU {:.1f}%)\n",
        mean["model_tflops_per_gpu"].get<double>(), 100 * mean["mfu"].get<double>(),
        mean["hardware_tflops_per_gpu"].get<double>(), 100 * mean["hfu"].get<double>());
    if (!mean["throughput_tokens_per_s"].is_null())
      text += fmt::format("tokens         {:>12.0f} tokens/s\n", mean["throughput_tokens_per_s"].get<double>());
  }
  // Devices with the same GPU and the same figures (as printed) share one row, so that a thousand
  // identical replicas take one line; `all_devices` lists every device.
  const auto grouped = [&](const std::string& header, const auto& figures) {
    std::vector<std::string> keys;
    std::map<std::string, std::vector<std::string>> members;
    for (const auto& [name, d] : summary["devices"].items()) {
      const std::string key = figures(d);
      auto [it, added] = members.try_emplace(all_devices ? name + key : key);
      if (added) keys.push_back(it->first);
      it->second.push_back(name);
    }
    std::vector<std::string> labels;
    std::size_t width = 16;
    for (const std::string& key : keys) {
      const auto& names = members[key];
      labels.push_back(names.size() == 1
                           ? names.front()
                           : fmt::format("{} × {}", compress_device_names(names), with_thousands(names.size())));
      width = std::max(width, labels.back().size());
    }
    std::string table = fmt::format("\n{:<{}} {}\n", "device", width, header);
    for (std::size_t i = 0; i < keys.size(); ++i)
      table += fmt::format("{:<{}} {}\n", labels[i], width, figures(summary["devices"][members[keys[i]].front()]));
    return table;
  };
  const auto bytes = [](const nlohmann::ordered_json& value) { return format_bytes(Bytes(value.get<double>())); };
  text += grouped(fmt::format("{:<14} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11}", "gpu", "util", "compute", "comm",
                              "exposed", "idle", "peak mem"),
                  [&](const nlohmann::ordered_json& d) {
                    return fmt::format(
                        "{:<14} {:>5.1f}% {:>11} {:>11} {:>11} {:>11} {:>11}", d["gpu"].get<std::string>(),
                        100 * d["utilization"].get<double>(), format_seconds(Seconds(d["compute_s"].get<double>())),
                        format_seconds(Seconds(d["communication_s"].get<double>())),
                        format_seconds(Seconds(d["exposed_communication_s"].get<double>())),
                        format_seconds(Seconds(d["idle_s"].get<double>())), bytes(d["peak_memory_bytes"]));
                  });
  // The stashed weight versions of an asynchronous pipeline get a column only in a run that has some,
  // so that every other run's table stays as it was.
  bool stashes = false;
  for (const auto& [name, d] : summary["devices"].items())
    stashes = stashes || d["memory_at_peak"].value("stashed_weights_bytes", 0.0) > 0;
  text += grouped(fmt::format("{:>11} {}{:>11} {:>11} {:>11} {:>11} {:>11} {:>11}", "weights",
                              stashes ? fmt::format("{:>11} ", "stashed") : "", "gradients", "optimizer", "activations",
                              "other", "peak", "capacity"),
                  [&](const nlohmann::ordered_json& d) {
                    const auto& m = d["memory_at_peak"];
                    return fmt::format("{:>11} {}{:>11} {:>11} {:>11} {:>11} {:>11} {:>11}", bytes(m["weights_bytes"]),
                                       stashes ? fmt::format("{:>11} ", bytes(m["stashed_weights_bytes"])) : "",
                                       bytes(m["gradients_bytes"]), bytes(m["optimizer_state_bytes"]),
                                       bytes(m["activations_bytes"]), bytes(m["other_bytes"]),
                                       bytes(d["peak_memory_bytes"]), bytes(d["memory_capacity_bytes"]));
                  });
  return text;
}

const nlohmann::ordered_json* find_summary_value(const nlohmann::ordered_json& summary, const std::string& path) {
  const nlohmann::ordered_json* node = &summary;
  std::size_t start = 0;
  // Keys may contain dots only as separators; device names use '/', so "devices.node0/gpu1.x" works.
  while (node != nullptr) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot - start);
    if (node->is_object() && node->contains(key)) {
      node = &(*node)[key];
    } else if (const auto index = parse_number<std::size_t>(key); node->is_array() && index && *index < node->size()) {
      node = &(*node)[*index];
    } else {
      node = nullptr;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node;
}

std::optional<double> summary_metric(const nlohmann::ordered_json& summary, const std::string& path) {
  const nlohmann::ordered_json* node = find_summary_value(summary, path);
  if (node == nullptr || !node->is_number()) return std::nullopt;
  return node->get<double>();
}

}  // namespace dnnsim
