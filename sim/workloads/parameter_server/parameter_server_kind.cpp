#include "sim/workloads/parameter_server/parameter_server_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "models/common/located_csv.hpp"
#include "models/common/option_reader.hpp"
#include "models/common/units.hpp"
#include "models/cost/memory_model.hpp"
#include "planners/common/layer_cost.hpp"
#include "sim/platform/platform.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/cluster_view_builder.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {
namespace {

// GPU names or globs (`node*/gpu0`) → indices, in cluster order, each once; unknown names are
// reported at `node` with a suggestion.
std::vector<std::size_t> read_devices(YamlReader& reader, const YAML::Node& node, const std::vector<std::string>& names,
                                      const std::string& what) {
  std::set<std::size_t> chosen;
  for (const YAML::Node& item : reader.list(node, what)) {
    const std::optional<std::string> name = reader.string(item);
    if (!name) continue;
    bool matched = false;
    for (std::size_t g = 0; g < names.size(); ++g)
      if (glob_match(*name, names[g])) {
        chosen.insert(g);
        matched = true;
      }
    if (!matched && !names.empty())
      reader.error(
          item, fmt::format("{} '{}' is not a device of the cluster{}", what, *name, suggestion_suffix(*name, names)));
  }
  return {chosen.begin(), chosen.end()};
}

// `sync: {policy: ssp, staleness: 8}`: the policy and its declared options.
void read_sync(YamlReader& reader, const YAML::Node& node, ParameterServerWorkload& spec) {
  auto selection = read_entry(reader, node, builtin_sync_policies(), "policy");
  if (!selection) return;
  spec.policy = selection->name;
  spec.sync = std::move(selection->options);
}

void read_slowdowns(YamlReader& reader, const YAML::Node& node, const std::vector<std::string>& names,
                    ParameterServerWorkload& spec) {
  for (const YAML::Node& item : reader.list(node, "slowdown windows")) {
    MapReader map(reader, item, "a slowdown window");
    if (!map.valid()) continue;
    SlowdownWindow window;
    const YAML::Node workers = map.require("workers");
    for (std::size_t g :
         workers.IsDefined() ? read_devices(reader, workers, names, "worker") : std::vector<std::size_t>{}) {
      const auto it = std::find(spec.workers.begin(), spec.workers.end(), g);
      if (it == spec.workers.end())
        reader.error(map.get("workers"), fmt::format("'{}' is not a worker of this workload", names[g]));
      else
        window.workers.push_back(static_cast<int>(it - spec.workers.begin()));
    }
    const bool has_factor = map.has("factor"), has_speed = map.has("speed");
    if (has_factor == has_speed) {
      map.exactly_one_of({"factor", "speed"}, item,
                         "give exactly one of 'factor' (step time × factor) and 'speed' (step rate × speed)");
    } else if (has_factor) {
      if (auto f = map.number("factor", 0, 1e12)) {
        if (*f <= 0)
          reader.error(map.get("factor"), "factor must be positive: a step cannot take no time");
        else
          window.factor = *f;
      }
    } else if (auto v = map.number("speed", 0, 1e12)) {
      if (*v <= 0)
        reader.error(map.get("speed"), "speed must be positive: a worker of zero speed never finishes a step");
      else
        window.factor = 1 / *v;
    }
    if (auto from = map.quantity<Seconds>("from")) window.from = from->value();
    if (auto until = map.quantity<Seconds>("until")) window.until = until->value();
    if (window.until <= window.from) reader.error(item, "'until' must come after 'from'");
    map.finish();
    spec.slowdowns.push_back(std::move(window));
  }
}

// `slowdown_trace: FILE`: CSV `worker,from_s,until_s,factor` (until_s empty: to the end), one window a
// row, each row's problems at FILE:ROW:COL. Rows come after the inline windows, so they win.
void read_slowdown_trace(WorkloadParseContext& ctx, const std::string& path, const std::vector<std::string>& names,
                         ParameterServerWorkload& spec) {
  DiagnosticSink& sink = ctx.reader.sink();
  try {
    const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(path), path, sink, ',');
    if (!table.require({"worker", "from_s", "until_s", "factor"}, sink)) return;
    for (const LocatedCsvRow& row : table.rows()) {
      SlowdownWindow window;
      const LocatedCsvField* worker = table.field(row, "worker", sink);
      if (worker != nullptr) {
        for (std::size_t k = 0; k < spec.workers.size(); ++k)
          if (glob_match(worker->text, names[spec.workers[k]])) window.workers.push_back(static_cast<int>(k));
        if (window.workers.empty())
          sink.error(table.where(row, worker), fmt::format("'{}' is not a worker of this workload{}", worker->text,
                                                           suggestion_suffix(worker->text, names)));
      }
      if (auto from = table.number(row, "from_s", sink, 0)) window.from = *from;
      if (const LocatedCsvField* until = table.optional_field(row, "until_s"); until != nullptr && !until->text.empty())
        if (auto value = table.number(row, "until_s", sink, 0)) {
          window.until = *value;
          if (window.until <= window.from) sink.error(table.where(row, until), "until_s must come after from_s");
        }
      if (auto factor = table.number(row, "factor", sink, 0)) {
        if (*factor <= 0)
          sink.error(table.where(row, table.optional_field(row, "factor")),
                     "factor must be positive: a step cannot take no time");
        else
          window.factor = *factor;
      }
      spec.slowdowns.push_back(std::move(window));
    }
  } catch (const InputError& error) {
    sink.append(error.diagnostics());
  }
}

void read_convergence(WorkloadParseContext& ctx, const YAML::Node& node, ParameterServerWorkload& spec) {
  YamlReader& reader = ctx.reader;
  MapReader map(reader, node, "the convergence section");
  if (!map.valid()) return;
  const std::optional<std::string> file = map.string("model");
  spec.efficiency_file = file ? ctx.resolve_path(*file) : shipped_statistical_efficiency_path();
  try {
    spec.efficiency = load_statistical_efficiency(spec.efficiency_file);
  } catch (const InputError& error) {
    reader.sink().append(error.diagnostics());
  }
  if (auto target = map.number("target_loss", 0, 1e12, true)) {
    spec.target_loss = *target;
    if (spec.efficiency.a > 0 && *target <= spec.efficiency.c)
      reader.error(map.get("target_loss"),
                   fmt::format("target_loss {:g} is at or below the loss floor c = {:g} of {}: it is never reached",
                               *target, spec.efficiency.c, spec.efficiency_file));
    else if (spec.efficiency.a > 0 && *target >= spec.efficiency.loss(0))
      reader.error(map.get("target_loss"),
                   fmt::format("target_loss {:g} is not below the initial loss {:g}: nothing to train", *target,
                               spec.efficiency.loss(0)));
  }
  spec.max_time = map.positive_quantity<Seconds>("max_time", true).value_or(spec.max_time);
  spec.sample_interval = map.positive_quantity<Seconds>("sample_interval").value_or(spec.max_time / 1000.0);
  map.finish();
}

// `server_process: {receive_rate: RATE, busy_wait: WEIGHT}`.
void read_server_process(YamlReader& reader, const YAML::Node& node, ParameterServerWorkload& spec) {
  MapReader map(reader, node, "server_process");
  if (!map.valid()) return;
  ServerProcess process;
  if (auto rate = map.positive_quantity<BytesPerSecond>("receive_rate", true,
                                                        "a process that takes in nothing never finishes a push"))
    process.receive_rate = *rate;
  process.busy_wait = map.number("busy_wait", 0, 1e6).value_or(0);
  map.finish();
  spec.server_process = process;
}

ParameterServerCosts parameter_server_costs(const Cluster& cluster, const ParameterServerWorkload& spec) {
  ParameterServerCosts costs;
  const std::vector<ClusterDevice> devices = cluster_devices(cluster);
  for (std::size_t g : spec.workers) {
    const ClusterDevice& device = devices.at(g);
    double seconds = 0;
    for (const Layer& layer : spec.model.layers)
      seconds += layer_time(spec.model, layer, device, spec.batch_size, spec.dtype, Pass::forward).value() +
                 layer_time(spec.model, layer, device, spec.batch_size, spec.dtype, Pass::backward).value();
    costs.step_seconds.push_back(seconds);
  }
  const double parameters = spec.model.parameter_bytes().value() / kProfileBytesPerParameter;
  costs.update_bytes = spec.model.parameter_bytes().value() * dtype_bytes(spec.dtype) / kProfileBytesPerParameter;
  if (!spec.servers.empty()) {
    const double shard = parameters / static_cast<double>(spec.servers.size());
    const Compute apply = optimizer_step(shard, bytes_per_parameter(Precision::fp32, Optimizer::sgd), 0);
    costs.apply_seconds = compute_time_on(apply, devices.at(spec.servers.front())).value();
  }
  // H = Σ v / (n · min v) with the factor in force at t = 0 (ADSP's cal_degree_of_hete.py).
  double sum = 0, slowest = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < costs.step_seconds.size(); ++k) {
    costs.initial_step_seconds.push_back(costs.step_seconds[k] *
                                         slowdown_factor(spec.slowdowns, static_cast<int>(k), 0));
    const double speed = 1 / costs.initial_step_seconds.back();
    sum += speed;
    slowest = std::min(slowest, speed);
  }
  if (!costs.step_seconds.empty())
    costs.heterogeneity = sum / (static_cast<double>(costs.step_seconds.size()) * slowest);
  return costs;
}

// Prices the workload into spec.costs. A worker whose step takes no time (a model of no work, a
// device of no speed) would loop forever at one instant: an input error, not a run.
void price(WorkloadParseContext& ctx, ParameterServerWorkload& spec, const std::vector<std::string>& names) {
  if (names.empty() || spec.model.layers.empty() || !ctx.reader.sink().empty()) return;
  spec.costs = parameter_server_costs(ctx.cluster, spec);
  const ParameterServerCosts& costs = spec.costs;
  for (std::size_t k = 0; k < costs.step_seconds.size(); ++k)
    if (!(costs.step_seconds[k] > 0) || !std::isfinite(costs.step_seconds[k]))
      ctx.reader.sink().error(spec.where,
                              fmt::format("worker '{}' has zero speed: one step of the model takes {} s on it",
                                          names[spec.workers[k]], costs.step_seconds[k]));
}

class ParameterServerKind final : public WorkloadKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<ParameterServerWorkload>();
    MapReader& map = ctx.map;
    YamlReader& reader = ctx.reader;
    spec->where = reader.where(map.node());
    const std::vector<std::string> names = ctx.cluster.gpu_names();
    if (YAML::Node model = map.require("model"); model.IsDefined())
      spec->model = read_layer_model(reader, model, "the model");
    if (auto batch = map.integer("batch_size", 1, 1 << 30, true)) spec->batch_size = static_cast<int>(*batch);
    spec->dtype = read_kernel_dtype(map, ctx.cluster).value_or(spec->dtype);
    if (YAML::Node servers = map.require("servers"); servers.IsDefined()) {
      spec->servers = read_devices(reader, servers, names, "server");
      if (servers.IsSequence() && servers.size() == 0)
        reader.error(servers, "a parameter-server workload needs at least one server");
    }
    if (YAML::Node workers = map.get("workers"); workers.IsDefined()) {
      spec->workers = read_devices(reader, workers, names, "worker");
    } else {
      for (std::size_t g = 0; g < names.size(); ++g)
        if (std::find(spec->servers.begin(), spec->servers.end(), g) == spec->servers.end()) spec->workers.push_back(g);
    }
    if (spec->workers.empty() && !names.empty() && reader.sink().empty())
      reader.error(map.has("workers") ? map.get("workers") : map.node(),
                   "a parameter-server workload needs at least one worker");
    if (YAML::Node slow = map.get("slowdown"); slow.IsDefined()) read_slowdowns(reader, slow, names, *spec);
    if (auto trace = map.string("slowdown_trace")) read_slowdown_trace(ctx, ctx.resolve_path(*trace), names, *spec);
    // A missing or misspelt section is said by require() or at the misspelling, not again as "got nothing".
    if (YAML::Node sync = map.require("sync"); sync.IsDefined()) read_sync(reader, sync, *spec);
    if (YAML::Node convergence = map.require("convergence"); convergence.IsDefined())
      read_convergence(ctx, convergence, *spec);
    if (YAML::Node process = map.get("server_process"); process.IsDefined())
      read_server_process(reader, process, *spec);
    price(ctx, *spec, names);
    return spec;
  }

  std::string check(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<ParameterServerWorkload>();
    const ParameterServerCosts& costs = spec.costs;
    const auto [fastest, slowest] =
        std::minmax_element(costs.initial_step_seconds.begin(), costs.initial_step_seconds.end());
    return fmt::format(
        "ok ({} workers, {}, policy {}, step {:.3g}–{:.3g} s, heterogeneity degree {:.2f}, target loss {:g})",
        spec.workers.size(), counted(spec.servers.size(), "server"), spec.policy, *fastest, *slowest,
        costs.heterogeneity, spec.target_loss);
  }

  SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const override {
    const auto spec = std::dynamic_pointer_cast<const ParameterServerWorkload>(scenario.workload);
    auto report = std::make_shared<ParameterServerReport>();
    report->spec = spec;
    const ParameterServerCosts& costs = spec->costs;
    const auto engine = create_engine();
    // A server's process is a one-core CPU host on the server's node ("nodeN/cpu/ps<server>").
    PlatformOptions platform_options;
    std::vector<std::pair<std::uint32_t, std::size_t>> process_hosts;  // (node, index among its CPU hosts)
    if (spec->server_process) {
      const std::vector<ClusterDevice> devices = cluster_devices(scenario.cluster);
      for (std::size_t s = 0; s < spec->servers.size(); ++s) {
        const std::uint32_t node = devices.at(spec->servers[s]).node;
        if (platform_options.cpu_hosts.size() <= node) platform_options.cpu_hosts.resize(node + 1);
        process_hosts.emplace_back(node, platform_options.cpu_hosts[node].size());
        platform_options.cpu_hosts[node].push_back(CpuHostSpec{"ps" + std::to_string(s), 1});
      }
    }
    platform_options.stop = stop_flag(options);
    const Platform platform = build_platform(scenario, platform_options);
    start_background_flows(scenario, platform);
    const auto policy = builtin_sync_policies().at(spec->policy).value(spec->sync, SyncContext{spec->target_loss});
    PsSimInput input;
    for (std::size_t g : spec->workers) input.workers.push_back(platform.gpus.at(g));
    for (std::size_t g : spec->servers) input.servers.push_back(platform.gpus.at(g));
    input.step_seconds = costs.step_seconds;
    input.slowdowns = spec->slowdowns;
    input.update_bytes = costs.update_bytes;
    input.apply_seconds = costs.apply_seconds;
    for (const auto& [node, index] : process_hosts) input.server_processes.push_back(platform.cpus.at(node).at(index));
    if (spec->server_process) {
      input.receive_rate = spec->server_process->receive_rate.value();
      input.busy_wait = spec->server_process->busy_wait;
    }
    input.policy = policy.get();
    input.efficiency = &spec->efficiency;
    input.target_loss = spec->target_loss;
    input.max_time = spec->max_time.value();
    input.sample_interval = spec->sample_interval.value();
    input.record_events = scenario.outputs.trace;
    input.progress = options.progress != nullptr;
    report->sim = simulate_parameter_server(input);
    return engine_driven_result(scenario, report, report->sim.end_time,
                                static_cast<std::size_t>(report->sim.executions + report->sim.flows),
                                static_cast<std::size_t>(report->sim.flows), report->sim.interrupted);
  }

  std::vector<SummaryField> summary_fields() const override;
  void add_to_summary(const Scenario& scenario, const SimulationResult& result,
                      nlohmann::ordered_json& summary) const override;
  void write_files(const Scenario& scenario, const SimulationResult& result, const std::string& dir) const override;
};

std::vector<SummaryField> ParameterServerKind::summary_fields() const {
  constexpr FieldType text = FieldType::text;
  return {{"parameter_server.policy", text},
          {"parameter_server.policy_state", text},
          {"parameter_server.converged", text},
          {"parameter_server.efficiency_source", text},
          {"parameter_server.workers"},
          {"parameter_server.servers"},
          {"parameter_server.heterogeneity_degree"},
          {"parameter_server.time_to_target_s"},
          {"parameter_server.end_s"},
          {"parameter_server.target_loss"},
          {"parameter_server.final_loss"},
          {"parameter_server.progress_steps"},
          {"parameter_server.global_steps"},
          {"parameter_server.local_steps"},
          {"parameter_server.commits"},
          {"parameter_server.commits_per_worker_min"},
          {"parameter_server.commits_per_worker_max"},
          {"parameter_server.computing_ratio"},
          {"parameter_server.waiting_ratio"},
          {"parameter_server.communication_ratio"},
          {"parameter_server.blocked_ratio"},
          {"parameter_server.mean_compute_s"},
          {"parameter_server.mean_blocked_s"},
          {"parameter_server.update_bytes"}};
}

void ParameterServerKind::add_to_summary(const Scenario&, const SimulationResult& result,
                                         nlohmann::ordered_json& summary) const {
  const auto* report = dynamic_cast<const ParameterServerReport*>(result.workload_result.get());
  if (report == nullptr) return;
  const PsSimResult& sim = report->sim;
  const ParameterServerWorkload& spec = *report->spec;
  const double n = static_cast<double>(sim.workers.size());
  double compute = 0, communication = 0, blocked = 0;
  long steps = 0, commits = 0, min_commits = std::numeric_limits<long>::max(), max_commits = 0;
  for (const PsWorkerStats& w : sim.workers) {
    compute += w.compute_s;
    communication += w.communication_s;
    blocked += w.blocked_s;
    steps += w.steps;
    commits += w.commits;
    min_commits = std::min(min_commits, w.commits);
    max_commits = std::max(max_commits, w.commits);
  }
  const double span = n * sim.end_time;
  nlohmann::ordered_json ps;
  ps["policy"] = spec.policy;
  ps["policy_state"] = sim.policy_state;
  ps["workers"] = sim.workers.size();
  ps["servers"] = spec.servers.size();
  ps["heterogeneity_degree"] = spec.costs.heterogeneity;
  ps["converged"] = sim.converged;
  ps["time_to_target_s"] = sim.converged ? nlohmann::ordered_json(sim.end_time) : nlohmann::ordered_json(nullptr);
  ps["end_s"] = sim.end_time;
  ps["target_loss"] = spec.target_loss;
  ps["final_loss"] = sim.final_loss;
  ps["progress_steps"] = sim.progress;
  ps["global_steps"] = sim.global_steps;
  ps["local_steps"] = steps;
  ps["commits"] = commits;
  ps["commits_per_worker_min"] = sim.workers.empty() ? 0 : min_commits;
  ps["commits_per_worker_max"] = max_commits;
  ps["computing_ratio"] = span > 0 ? compute / span : 0.0;
  ps["waiting_ratio"] = span > 0 ? 1 - compute / span : 0.0;
  ps["communication_ratio"] = span > 0 ? communication / span : 0.0;
  ps["blocked_ratio"] = span > 0 ? blocked / span : 0.0;
  ps["mean_compute_s"] = n > 0 ? compute / n : 0.0;
  ps["mean_blocked_s"] = n > 0 ? blocked / n : 0.0;
  ps["update_bytes"] = spec.costs.update_bytes;
  ps["efficiency_source"] = spec.efficiency.source;
  summary["parameter_server"] = ps;
}

void ParameterServerKind::write_files(const Scenario& scenario, const SimulationResult& result,
                                      const std::string& dir) const {
  const auto* report = dynamic_cast<const ParameterServerReport*>(result.workload_result.get());
  if (report == nullptr) return;
  const PsSimResult& sim = report->sim;
  const std::vector<std::string> names = scenario.cluster.gpu_names();
  std::ofstream workers(dir + "/ps_workers.csv");
  workers << "worker,device,step_s,steps,commits,compute_s,communication_s,blocked_s,computing_ratio\n";
  for (std::size_t k = 0; k < sim.workers.size(); ++k) {
    const PsWorkerStats& w = sim.workers[k];
    workers << fmt::format("{},{},{},{},{},{},{},{},{}\n", k, names[report->spec->workers[k]],
                           report->spec->costs.step_seconds[k], w.steps, w.commits, w.compute_s, w.communication_s,
                           w.blocked_s, sim.end_time > 0 ? w.compute_s / sim.end_time : 0.0);
  }
  std::ofstream loss(dir + "/loss.csv");
  loss << "time_s,loss\n";
  for (const auto& [time, value] : sim.loss_samples) loss << fmt::format("{},{}\n", time, value);
  if (!scenario.outputs.trace) return;
  std::ofstream events(dir + "/ps_events.csv");
  events << "time_s,worker,event,commits\n";
  for (const PsEvent& e : sim.events)
    events << fmt::format("{},{},{},{}\n", e.time, e.worker,
                          e.kind == PsEvent::Kind::step_start ? "step_start"
                          : e.kind == PsEvent::Kind::commit   ? "commit"
                                                              : "release",
                          e.commits);
}

}  // namespace

std::shared_ptr<const WorkloadKind> make_parameter_server_kind() { return std::make_shared<ParameterServerKind>(); }

}  // namespace dnnsim
