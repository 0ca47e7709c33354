#include "sim/workloads/cluster/cluster_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <simgrid/s4u.hpp>

#include "models/common/option_reader.hpp"
#include "models/cost/compute_cost.hpp"
#include "planners/jobs/pollux_tuned.hpp"
#include "planners/jobs/speed_models.hpp"
#include "sim/platform/platform.hpp"
#include "sim/report/report.hpp"
#include "sim/run/resource_guard.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/jobs/job_generator.hpp"
#include "traces/jobs/job_readers.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {

std::vector<ServerInfo> cluster_servers(const Scenario& scenario, const ClusterWorkload& spec) {
  return cluster_servers(scenario.cluster, spec.servers_per_rack);
}

std::vector<ServerInfo> cluster_servers(const Cluster& cluster, int servers_per_rack) {
  std::vector<ServerInfo> servers;
  double fastest = 0.0;
  for (const NodeInstance& node : cluster.nodes)
    fastest = std::max(fastest, effective_peak(cluster.type_of(node).gpu, Dtype::fp16).value());
  const int per_rack = servers_per_rack > 0                                ? servers_per_rack
                       : cluster.network.kind == InterNodeKind::leaf_spine ? cluster.network.nodes_per_leaf
                                                                           : 0;
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
    const NodeType& type = cluster.type_of(cluster.nodes[i]);
    ServerInfo server;
    server.rack = per_rack > 0 ? static_cast<int>(i) / per_rack : 0;
    server.gpus = type.gpus_per_node;
    server.gpu_type = type.gpu.name;
    server.gpu_speed = fastest > 0 ? effective_peak(type.gpu, Dtype::fp16).value() / fastest : 1.0;
    server.intra_bandwidth = type.gpu_link_bandwidth;
    server.nic_bandwidth = type.nic_per_gpu ? type.nic_bandwidth * type.gpus_per_node : type.nic_bandwidth;
    server.link_latency = type.nic_latency;
    server.cpus = type.cpu_cores.value_or(0);
    servers.push_back(server);
  }
  return servers;
}

namespace {

std::vector<std::string> strings_of(YamlReader& reader, const YAML::Node& node) {
  std::vector<std::string> result;
  if (node.IsSequence()) {
    for (const YAML::Node& item : reader.list(node, "names"))
      if (auto text = reader.string(item)) result.push_back(*text);
  } else if (auto text = reader.string(node)) {
    result.push_back(*text);
  }
  return result;
}

JobFilter read_filter(YamlReader& reader, const YAML::Node& node) {
  JobFilter filter;
  MapReader map(reader, node, "the trace filter");
  if (!map.valid()) return filter;
  if (map.has("virtual_cluster")) filter.virtual_clusters = strings_of(reader, map.get("virtual_cluster"));
  filter.from = map.quantity<Seconds>("from");
  filter.until = map.quantity<Seconds>("until");
  if (auto n = map.integer("max_jobs", 1, 1LL << 40)) filter.max_jobs = static_cast<std::size_t>(*n);
  if (auto n = map.integer("min_gpus", 0, 1 << 30)) filter.min_gpus = static_cast<int>(*n);
  if (auto n = map.integer("max_gpus", 1, 1 << 30)) filter.max_gpus = static_cast<int>(*n);
  map.finish();
  return filter;
}

// `{format: …, file: …, tasks: …}` → the trace; problems go to the sink.
std::optional<JobTrace> read_trace_section(WorkloadParseContext& ctx, const YAML::Node& node, const char* what) {
  MapReader map(ctx.reader, node, what);
  if (!map.valid()) return std::nullopt;
  auto format = map.choice("format", "job trace format", builtin_job_trace_readers().names(), true);
  auto file = map.string("file", true);
  JobTraceFiles files;
  if (auto tasks = map.string("tasks")) files.extra["tasks"] = ctx.resolve_path(*tasks);
  JobFilter filter;
  const std::size_t errors_before_filter = ctx.reader.sink().size();
  if (map.has("filter")) filter = read_filter(ctx.reader, map.get("filter"));
  // A filter with a refused or misspelt key would pass jobs the scenario meant to leave out, and each of
  // them would then be judged ("asks for 16 GPUs but the cluster has 8"): the file is still read for its
  // own errors, its jobs are not kept.
  const bool filter_read = ctx.reader.sink().size() == errors_before_filter;
  map.finish();
  if (!format || !file) return std::nullopt;
  files.file = ctx.resolve_path(*file);
  try {
    auto trace = apply_filter(read_job_trace(*format, files), filter);
    if (!filter_read) return std::nullopt;
    return trace;
  } catch (const InputError& error) {
    ctx.reader.sink().append(error.diagnostics());
    return std::nullopt;
  }
}

// `application_rule: {rule: pollux-gpu-time, settings: FILE}` (traces/jobs/pollux_applications.hpp):
// the trace's jobs get Pollux's applications, TunedJobs GPUs and batches from the speed tables. False
// when it gave none: its own error says why, and the jobs it would have given one are not also errors.
bool read_application_rule(WorkloadParseContext& ctx, const YAML::Node& node, bool has_mix, std::uint64_t seed,
                           ClusterWorkload& spec) {
  MapReader map(ctx.reader, node, "the application rule");
  if (!map.valid()) return false;
  const auto rule = map.choice("rule", {"pollux-gpu-time"}, true);
  const auto settings = map.string("settings");
  map.finish();
  const SourceLocation where = ctx.reader.where(node);
  if (has_mix) ctx.reader.error(node, "give one of 'models' (a mix) and 'application_rule'");
  if (!rule || has_mix || !spec.speed) return false;
  const PolluxSpeedModel* tables = spec.speed->pollux_tables();
  if (tables == nullptr) {
    if (ctx.map.misspelt("speed")) return false;  // the unknown key names it
    ctx.reader.error(node,
                     "application_rule pollux-gpu-time takes its configurations from Pollux's tables: it "
                     "needs workload.speed {source: pollux, tables: …}");
    return false;
  }
  try {
    PolluxGoodput goodput(*tables);
    if (settings) goodput.read_settings(ctx.resolve_path(*settings));
    assign_pollux_applications(spec.trace, pollux_tuned_configurations(goodput), seed, where);
    return true;
  } catch (const InputError& error) {
    ctx.reader.sink().append(error.diagnostics());
    return false;
  }
}

// `admission: {policy, min_value, max_value, seed, …}` (planners/jobs/admission.hpp): the jobs' values
// and the policy with its declared options.
void read_admission(YamlReader& reader, const YAML::Node& node, ClusterWorkload& spec) {
  MapReader map(reader, node, "the admission section");
  if (!map.valid()) return;
  AdmissionConfig& config = spec.admission_config;
  const AdmissionRegistry& admissions = builtin_admissions();
  spec.admission = map.choice("policy", "admission policy", admissions.names(), true).value_or("admit-all");
  config.min_value = map.number("min_value", 0, 1e300).value_or(config.min_value);
  config.max_value = map.number("max_value", 0, 1e300).value_or(config.max_value);
  if (auto seed = map.integer("seed", 0, std::numeric_limits<std::int64_t>::max()))
    config.seed = static_cast<std::uint64_t>(*seed);
  if (config.min_value <= 0)
    reader.error(map.has("min_value") ? map.get("min_value") : node, "min_value must be positive (ψ divides by it)");
  if (config.max_value <= config.min_value)
    reader.error(map.has("max_value") ? map.get("max_value") : node, "max_value must exceed min_value");
  if (const auto* entry = admissions.find(spec.admission))
    spec.admission_options =
        read_options(map, entry->options, fmt::format("admission policy '{}'", entry->name), admissions.catalog());
  map.finish();
}

// `architecture: {kind: all-reduce | parameter-server, ps_per_worker, ps_cores}`: PS jobs need the
// analytical speed source (the measured tables price ring all-reduce jobs only) and CPU cores on
// every node type (where the PSs run).
void read_architecture(WorkloadParseContext& ctx, const YAML::Node& node, ClusterWorkload& spec) {
  YamlReader& reader = ctx.reader;
  MapReader map(reader, node, "the architecture section");
  if (!map.valid()) return;
  const auto kind = map.choice("kind", "job architecture", {"all-reduce", "parameter-server"}, true);
  const auto ratio = map.number("ps_per_worker", 1e-3, 1e3);
  const auto cores = map.integer("ps_cores", 1, 1 << 20);
  map.finish();
  if (!kind) return;
  if (*kind != "parameter-server") {
    if (ratio || cores) reader.error(node, "'ps_per_worker' and 'ps_cores' apply to kind: parameter-server only");
    return;
  }
  if (!ratio || !cores) {
    // A refused or misspelt key is its own error already; this one is for a key not given at all.
    if ((!ratio && !map.refused("ps_per_worker")) || (!cores && !map.refused("ps_cores")))
      reader.error(node,
                   "kind: parameter-server needs 'ps_per_worker' (PSs per worker, e.g. 0.5) and 'ps_cores' "
                   "(CPU cores per PS)");
    return;
  }
  spec.ps_per_worker = *ratio;
  spec.ps_cores = static_cast<int>(*cores);
  if (spec.speed && !spec.speed->prices_parameter_servers() && !ctx.map.refused("speed"))
    reader.error(node, fmt::format("parameter-server jobs need a speed source that prices their push/pull (analytical: "
                                   "the layered push/pull model); got '{}'",
                                   spec.speed_source));
  for (const NodeType& type : ctx.cluster.node_types)
    if (!type.cpu_cores)
      reader.error(
          node,
          fmt::format("parameter-server jobs run their PSs on CPU cores: node type '{}' needs 'cpu_cores'", type.name));
  for (JobRecord& job : spec.trace.jobs) {
    job.ps_per_worker = spec.ps_per_worker;
    job.ps_cores = spec.ps_cores;
  }
}

// The resource guard for job streams (sim/run/resource_guard.hpp): their jobs are made while the
// workload is read, and the utilisation series grows with simulated time, so neither is bounded by
// the run's other sizes. Measured peak memory per job: 1.0 kB (mmc-erlang-c under /usr/bin/time -v,
// 91 MB at 40,000 jobs and 446 MB at 400,000: its trace row, run state, outcome and report rows).
// A utilisation sample holds 4 doubles, 64 B with its vector's doubling. A series lasts at least until
// the last submission, which bounds it from below without simulating.
constexpr double kBytesPerJob = 1024;
constexpr double kBytesPerUtilisationSample = 64;

// @return whether `count` generated jobs fit the run's memory budget; an error at `jobs` if not.
bool generated_jobs_fit(YamlReader& reader, const YAML::Node& jobs, std::size_t count, const RunSettings& run) {
  const double budget = memory_budget(run).value();
  if (static_cast<double>(count) * kBytesPerJob <= budget) return true;
  reader.error(jobs, fmt::format("{} jobs would need about {} of memory (about 1 KiB per job, measured), {}. At most "
                                 "{:.0f} jobs fit",
                                 count, format_bytes(Bytes(static_cast<double>(count) * kBytesPerJob)),
                                 over_memory_budget(run), std::floor(budget / kBytesPerJob)));
  return false;
}

double jobs_bytes(const ClusterWorkload& spec) { return static_cast<double>(spec.trace.jobs.size()) * kBytesPerJob; }

// The samples the utilisation series may hold: what the run's memory budget leaves beside the jobs.
double utilisation_samples_budget(const ClusterWorkload& spec, const RunSettings& run) {
  return std::max(0.0, std::floor((memory_budget(run).value() - jobs_bytes(spec)) / kBytesPerUtilisationSample));
}

// The jobs and the utilisation series up to the last submission against the run's memory budget; an
// error at `interval` (the section when it is not written) if they do not fit. The series beyond the
// last submission is bounded at run time (ClusterSimInput::max_utilisation_samples).
void check_stream_memory(YamlReader& reader, const YAML::Node& interval, const YAML::Node& section,
                         const ClusterWorkload& spec, const RunSettings& run) {
  const double last_submit = spec.trace.jobs.empty() ? 0.0 : spec.trace.jobs.back().submit.value();
  const double step = spec.utilisation_interval.value();
  const double samples = std::floor(last_submit / step) + 1;
  if (samples <= utilisation_samples_budget(spec, run)) return;
  const double jobs = jobs_bytes(spec);
  const double bytes = jobs + samples * kBytesPerUtilisationSample;
  const double budget = memory_budget(run).value();
  const std::string fix =
      budget > jobs ? fmt::format("A utilisation_interval of at least {} would fit",
                                  format_seconds(Seconds(last_submit * kBytesPerUtilisationSample / (budget - jobs))))
                    : fmt::format("The {} jobs alone need about {}", spec.trace.jobs.size(), format_bytes(Bytes(jobs)));
  reader.error(interval.IsDefined() ? interval : section,
               fmt::format("the utilisation series every {} up to the last submission at {} ({} samples, 64 B "
                           "each) and {} jobs would need about {}, {}. {}",
                           format_seconds(spec.utilisation_interval), format_seconds(Seconds(last_submit)),
                           samples < 1e12 ? fmt::format("{:.0f}", samples) : fmt::format("{:.3g}", samples),
                           spec.trace.jobs.size(), format_bytes(Bytes(bytes)), over_memory_budget(run), fix));
}

class ClusterKind final : public WorkloadKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<ClusterWorkload>();
    MapReader& map = ctx.map;
    YamlReader& reader = ctx.reader;
    spec->where = reader.where(map.node());
    std::uint64_t seed = 1;
    if (auto s = map.integer("seed", 0, std::numeric_limits<std::int64_t>::max()))
      seed = static_cast<std::uint64_t>(*s);

    // Models for jobs without one (the documented seeded rule of traces/jobs/job_generator.hpp).
    std::vector<ModelMixEntry> mix;
    // The mix or the application rule could give the jobs models (else its error says why jobs have none).
    bool models_read = true;
    const YAML::Node models = map.get("models");
    for (const YAML::Node& item :
         models.IsDefined() ? reader.list(models, "model mix entries") : std::vector<YAML::Node>{}) {
      MapReader entry(reader, item, "a model mix entry");
      if (!entry.valid()) continue;
      ModelMixEntry e;
      if (auto m = entry.string("model", true))
        e.model = *m;
      else
        models_read = false;
      if (auto w = entry.number("weight", 0.0, 1e12)) e.weight = *w;
      if (auto g = entry.integer("min_gpus", 1, 1 << 30)) e.min_gpus = static_cast<int>(*g);
      if (auto g = entry.integer("max_gpus", 1, 1 << 30)) e.max_gpus = static_cast<int>(*g);
      if (auto b = entry.integer("batch_size", 1, 1 << 30)) e.batch_size = static_cast<int>(*b);
      entry.finish();
      mix.push_back(e);
    }

    const bool has_trace = map.has("trace"), has_generator = map.has("generator");
    if (has_trace == has_generator) {
      map.exactly_one_of({"trace", "generator"}, map.node(),
                         "give exactly one of 'trace' (a job trace file) and 'generator' (synthetic jobs)");
    } else if (has_trace) {
      if (auto trace = read_trace_section(ctx, map.get("trace"), "the job trace")) spec->trace = std::move(*trace);
    } else {
      MapReader gen(reader, map.get("generator"), "the job generator");
      JobGeneratorSpec g;
      g.seed = seed;
      g.mix = mix;
      std::optional<JobTrace> fit;
      const YAML::Node jobs_node = gen.get("jobs");
      if (gen.valid()) {
        if (auto n = gen.integer("jobs", 1, 1LL << 32, true)) g.count = static_cast<std::size_t>(*n);
        if (auto gap = gen.quantity<Seconds>("mean_interarrival")) g.rate = 1.0 / std::max(gap->value(), 1e-12);
        if (gen.has("gpus")) {
          g.gpu_choices.clear();
          for (const YAML::Node& item : reader.list(gen.get("gpus"), "GPU counts"))
            if (auto v = reader.integer(item, 1, 1 << 30)) g.gpu_choices.push_back(static_cast<int>(*v));
        }
        if (auto d = gen.positive_quantity<Seconds>("mean_duration")) g.mean_duration = *d;
        if (auto s = gen.number("load_scale", 1e-6, 1e6)) g.load_scale = *s;
        if (gen.has("fit")) fit = read_trace_section(ctx, gen.get("fit"), "the fitted trace");
        if (gen.has("fit") && !gen.has("mean_interarrival") && fit && fit->jobs.size() < 2)
          reader.error(gen.get("fit"), "a fitted generator needs a trace of at least 2 jobs");
        gen.finish();
      }
      if (fit && fit->jobs.size() >= 2) g.fit = &*fit;
      if (reader.sink().empty() && (g.fit || g.rate > 0) && generated_jobs_fit(reader, jobs_node, g.count, ctx.run))
        spec->trace = generate_jobs(g);
    }
    map_models(spec->trace, mix, seed);

    // Speed source: `speed: {source: NAME, …}` with the model's declared options (speed_models.hpp).
    spec->speed_options = builtin_speed_models().defaults(spec->speed_source);
    const std::size_t errors_before_speed = reader.sink().size();
    if (const YAML::Node speed = map.get("speed"); speed.IsDefined())
      if (auto selection = read_entry(reader, speed, builtin_speed_models(), "source",
                                      [&ctx](const std::string& path) { return ctx.resolve_path(path); })) {
        spec->speed_source = selection->name;
        spec->speed_options = std::move(selection->options);
      }
    if (reader.sink().size() == errors_before_speed) {  // its options as declared: the model can be made
      try {
        spec->speed = builtin_speed_models().at(spec->speed_source).value(spec->speed_options);
      } catch (const InputError& error) {
        reader.sink().append(error.diagnostics());
      }
    }
    if (const YAML::Node rule = map.get("application_rule"); rule.IsDefined())
      if (!read_application_rule(ctx, rule, !mix.empty(), seed, *spec)) models_read = false;

    // Scheduler: a name, or a map with `name` and its declared options.
    spec->scheduler_options = builtin_schedulers().defaults(spec->scheduler);
    spec->placement_options = builtin_placements().defaults(spec->placement);
    if (const YAML::Node scheduler = map.get("scheduler"); scheduler.IsDefined())
      if (auto selection = read_entry(reader, scheduler, builtin_schedulers(), "name",
                                      [&ctx](const std::string& path) { return ctx.resolve_path(path); })) {
        spec->scheduler = selection->name;
        spec->scheduler_options = std::move(selection->options);
      }
    if (const YAML::Node placement = map.get("placement"); placement.IsDefined())
      if (auto selection = read_entry(reader, placement, builtin_placements())) {
        spec->placement = selection->name;
        spec->placement_options = std::move(selection->options);
      }
    if (auto network = map.boolean("network")) spec->network = *network;
    if (auto cost = map.quantity<Seconds>("restart_cost")) spec->restart_cost = *cost;
    if (auto first = map.boolean("restart_cost_on_start")) spec->restart_cost_on_start = *first;
    if (auto batch = map.positive_quantity<Seconds>("batch")) spec->batch = *batch;
    if (auto step = map.positive_quantity<Seconds>("utilisation_interval")) spec->utilisation_interval = *step;
    if (reader.sink().empty()) check_stream_memory(reader, map.get("utilisation_interval"), map.node(), *spec, ctx.run);
    if (auto mode = map.choice("oversized_jobs", {"error", "report"})) spec->report_oversized = *mode == "report";
    if (auto n = map.integer("servers_per_rack", 1, 1 << 30)) spec->servers_per_rack = static_cast<int>(*n);
    if (const YAML::Node admission = map.get("admission"); admission.IsDefined())
      read_admission(reader, admission, *spec);
    if (const YAML::Node architecture = map.get("architecture"); architecture.IsDefined())
      read_architecture(ctx, architecture, *spec);

    check_jobs(ctx, *spec, models_read);
    return spec;
  }

  std::string check(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<ClusterWorkload>();
    return fmt::format("ok ({} jobs on {} GPUs, scheduler {}, placement {}, speed {}, {})", spec.trace.jobs.size(),
                       scenario.cluster.gpu_count(), spec.scheduler, spec.placement, spec.speed_source,
                       spec.network ? "network simulated" : "job level");
  }

  SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const override {
    const auto spec = std::dynamic_pointer_cast<const ClusterWorkload>(scenario.workload);
    const auto engine = create_engine();
    ClusterSimInput input;
    input.servers = cluster_servers(scenario, *spec);
    std::optional<Platform> platform;
    if (spec->network) {
      PlatformOptions platform_options;
      platform_options.stop = stop_flag(options);
      platform = build_platform(scenario, platform_options);
      start_background_flows(scenario, *platform);
      input.server_gpus.resize(input.servers.size());
      const auto node_of_gpu = scenario.cluster.node_of_gpu();
      for (std::size_t g = 0; g < platform->gpus.size(); ++g)
        input.server_gpus[node_of_gpu[g]].push_back(platform->gpus[g]);
      input.controller_host = platform->gpus.front();
    } else {
      auto* zone = sg4::create_full_zone("jobs");
      input.controller_host = zone->create_host("controller", 1e18)->seal();
      zone->seal();
    }
    const auto placement = builtin_placements().at(spec->placement).value(spec->placement_options, scenario.run.seed);
    const auto scheduler = builtin_schedulers()
                               .at(spec->scheduler)
                               .value(SchedulerContext{spec->scheduler_options, *placement, *spec->speed,
                                                       scenario.run.seed, options.learning, &input.servers});
    input.trace = &spec->trace;
    input.speed = spec->speed.get();
    input.scheduler = scheduler.get();
    input.restart_cost = spec->restart_cost;
    input.restart_cost_on_start = spec->restart_cost_on_start;
    input.batch_seconds = spec->batch;
    input.utilisation_interval = spec->utilisation_interval;
    input.max_utilisation_samples = static_cast<std::size_t>(utilisation_samples_budget(*spec, scenario.run));
    input.progress = options.progress != nullptr;
    std::unique_ptr<AdmissionPolicy> admission;
    if (!spec->admission.empty()) {
      admission = builtin_admissions().at(spec->admission).value(spec->admission_options, spec->admission_config);
      input.admission = admission.get();
      input.job_values = draw_job_values(spec->trace.jobs.size(), spec->admission_config);
    }
    auto report = std::make_shared<ClusterRunReport>();
    report->spec = spec;
    report->sim = simulate_cluster(input);
    return engine_driven_result(scenario, report, report->sim.makespan, report->sim.events + report->sim.flows,
                                report->sim.flows, report->sim.interrupted, report->sim.stopped);
  }

  std::vector<SummaryField> summary_fields() const override;
  void add_to_summary(const Scenario&, const SimulationResult& result, nlohmann::ordered_json& summary) const override;
  void write_files(const Scenario&, const SimulationResult& result, const std::string& dir) const override;

 private:
  static void check_jobs(WorkloadParseContext& ctx, ClusterWorkload& spec, bool models_read) {
    const int total = static_cast<int>(ctx.cluster.gpu_count());
    // A misspelt 'models' or 'application_rule', or a mix entry without its model, is its own error: the
    // jobs it would have given a model are not.
    const bool models_unread = !models_read || ctx.map.misspelt("models") || ctx.map.misspelt("application_rule");
    const bool needs_model =
        spec.speed && spec.speed->needs_job_models() && !models_unread && !ctx.map.refused("speed");
    // A trace of 80,000 jobs all missing a model is one mistake: the first few jobs of each problem are
    // listed, then one line counts the rest at the first job not listed.
    constexpr std::size_t kListed = 20;
    struct Problem {
      std::size_t count = 0;
      SourceLocation first_unlisted;
    };
    Problem oversized, modelless;
    const auto report = [&](Problem& problem, const JobRecord& job, const auto& message) {
      if (++problem.count <= kListed)
        ctx.reader.sink().error(job.where, message());
      else if (problem.count == kListed + 1)
        problem.first_unlisted = job.where;
    };
    for (const JobRecord& job : spec.trace.jobs) {
      if (total > 0 && job.gpus > total && !spec.report_oversized)
        report(oversized, job, [&] {
          return fmt::format(
              "job '{}' asks for {} GPUs but the cluster has {} (set oversized_jobs: report to keep it "
              "as a job that never runs)",
              job.id, job.gpus, total);
        });
      if (needs_model && job.model.empty())
        report(modelless, job, [&] {
          return fmt::format(
              "job '{}' has no model and speed source '{}' needs one: add a 'models' mix entry "
              "covering {} GPUs",
              job.id, spec.speed_source, job.gpus);
        });
    }
    if (oversized.count > kListed)
      ctx.reader.sink().error(oversized.first_unlisted,
                              fmt::format("and {} more jobs ask for more GPUs than the cluster's {} (the first {} are "
                                          "listed)",
                                          oversized.count - kListed, total, kListed));
    if (modelless.count > kListed)
      ctx.reader.sink().error(modelless.first_unlisted,
                              fmt::format("and {} more jobs have no model for speed source '{}' (the first {} are "
                                          "listed)",
                                          modelless.count - kListed, spec.speed_source, kListed));
    // A misspelt `speed` leaves the default model in place, and what follows would judge it ("scheduler
    // 'pollux' needs workload.speed"): the unknown key is the one error.
    if (!spec.speed || ctx.map.refused("speed")) return;
    if (spec.speed->counts_progress() && spec.network)
      ctx.reader.sink().error(spec.speed_options.where("work"),
                              "work: progress is counted at the job level only (network mode runs iterations): "
                              "remove `network: true` or use work: iterations");
    if (ctx.cluster.nodes.empty()) return;  // the cluster's errors say why; no GPU type to price on
    // Price every distinct (model, batch) once so that an unknown application is an input error now.
    std::set<std::pair<std::string, int>> priced;
    std::vector<ServerInfo> probe{ServerInfo{0, 1, ctx.cluster.type_of(ctx.cluster.nodes.front()).gpu.name}};
    probe.front().intra_bandwidth = probe.front().nic_bandwidth = BytesPerSecond(1e9);
    for (const JobRecord& job : spec.trace.jobs) {
      if ((models_unread || needs_model) && job.model.empty()) continue;  // said above, or unread
      if (!priced.insert({job.model, job.batch_size}).second) continue;
      try {
        (void)spec.speed->iteration(job, Placement{{{0, 1}}}, probe);
        (void)spec.speed->iterations_to_target(job);
      } catch (const InputError& error) {
        ctx.reader.sink().append(error.diagnostics());
      }
    }
    // An entry is built from its options and the racks as read; one without a required option or with
    // a refused value (already reported by the reader) would be built from defaults the scenario did not
    // ask for.
    if (!spec.placement_options.read_cleanly() || !spec.scheduler_options.read_cleanly() ||
        ctx.map.refused("servers_per_rack"))
      return;
    try {
      const auto placement = builtin_placements().at(spec.placement).value(spec.placement_options, 0);
      const std::vector<ServerInfo> servers = cluster_servers(ctx.cluster, spec.servers_per_rack);
      const auto scheduler =
          builtin_schedulers()
              .at(spec.scheduler)
              .value(SchedulerContext{spec.scheduler_options, *placement, *spec.speed, 0, nullptr, &servers});
      if (scheduler->goodput() != nullptr && spec.network)
        ctx.reader.sink().error(
            spec.scheduler_options.origin(),
            fmt::format("scheduler '{}' adapts its jobs' batch sizes, which only the job level models: "
                        "remove `network: true`",
                        spec.scheduler));
    } catch (const InputError& error) {
      ctx.reader.sink().append(error.diagnostics());
    }
  }
};

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

std::vector<SummaryField> ClusterKind::summary_fields() const {
  constexpr FieldType text = FieldType::text;
  return {{"cluster.scheduler", text},
          {"cluster.placement", text},
          {"cluster.speed", text},
          {"cluster.network", text},
          {"cluster.trace", text},
          {"cluster.admission.policy", text},
          {"cluster.jobs"},
          {"cluster.finished"},
          {"cluster.never_fits"},
          {"cluster.unfinished"},
          {"cluster.rejected"},
          {"cluster.gpus"},
          {"cluster.jct_s.mean"},
          {"cluster.jct_s.p50"},
          {"cluster.jct_s.p95"},
          {"cluster.jct_s.p99"},
          {"cluster.makespan_s"},
          {"cluster.mean_queueing_s"},
          {"cluster.gpu_utilisation"},
          {"cluster.finish_time_fairness.mean_slowdown"},
          {"cluster.finish_time_fairness.max_slowdown"},
          {"cluster.finish_time_fairness.jain_index"},
          {"cluster.littles_law.L"},
          {"cluster.littles_law.lambda_per_s"},
          {"cluster.littles_law.W_s"},
          {"cluster.littles_law.L_over_lambda_W"},
          {"cluster.work_conservation.busy_gpu_seconds"},
          {"cluster.work_conservation.solo_work_gpu_seconds"},
          {"cluster.preemptions"},
          {"cluster.packing.packed_jobs"},
          {"cluster.packing.packed_job_seconds"},
          {"cluster.admission.min_value"},
          {"cluster.admission.max_value"},
          {"cluster.admission.admitted"},
          {"cluster.admission.rejected"},
          {"cluster.admission.welfare"},
          {"cluster.admission.revenue"},
          {"cluster.scheduler_calls"},
          {"cluster.events"},
          {"cluster.flows"},
          {"cluster.parameter_servers.ps_per_worker"},
          {"cluster.parameter_servers.ps_cores"},
          {"cluster.parameter_servers.deferred_starts"}};
}

void ClusterKind::add_to_summary(const Scenario&, const SimulationResult& result,
                                 nlohmann::ordered_json& summary) const {
  const auto* report = dynamic_cast<const ClusterRunReport*>(result.workload_result.get());
  if (report == nullptr) return;
  const ClusterSimResult& sim = report->sim;
  const ClusterWorkload& spec = *report->spec;
  std::vector<double> jct, queueing, slowdown;
  std::size_t finished = 0, never = 0, unfinished = 0, rejected_jobs = 0, preemptions = 0;
  double work_gpu_seconds = 0.0;
  for (std::size_t i = 0; i < sim.jobs.size(); ++i) {
    const JobOutcome& job = sim.jobs[i];
    preemptions += static_cast<std::size_t>(job.preemptions);
    if (job.status == JobOutcome::Status::never_fits) ++never;
    if (job.status == JobOutcome::Status::unfinished) ++unfinished;
    if (job.status == JobOutcome::Status::rejected) ++rejected_jobs;
    if (job.status != JobOutcome::Status::finished) continue;
    ++finished;
    jct.push_back(job.end - job.submit);
    queueing.push_back(job.start - job.submit);
    if (job.solo_seconds > 0) slowdown.push_back((job.end - job.submit) / job.solo_seconds);
    work_gpu_seconds += job.solo_seconds * job.gpus;
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  nlohmann::ordered_json c;
  c["scheduler"] = spec.scheduler;
  c["placement"] = spec.placement;
  c["speed"] = spec.speed_source;
  c["network"] = spec.network;
  c["trace"] = spec.trace.source;
  c["jobs"] = sim.jobs.size();
  c["finished"] = finished;
  c["never_fits"] = never;
  c["unfinished"] = unfinished;
  c["rejected"] = rejected_jobs;
  c["gpus"] = sim.total_gpus;
  c["jct_s"] = {
      {"mean", mean(jct)}, {"p50", percentile(jct, 50)}, {"p95", percentile(jct, 95)}, {"p99", percentile(jct, 99)}};
  c["makespan_s"] = sim.makespan;
  c["mean_queueing_s"] = mean(queueing);
  // The time the integrals cover: the makespan, or where a stopped run stopped with jobs running.
  const double span = sim.stopped_at >= 0 ? sim.stopped_at : sim.makespan;
  c["gpu_utilisation"] = span > 0 ? sim.busy_gpu_seconds / (sim.total_gpus * span) : 0.0;
  double sum = 0, sum_sq = 0, worst = 0;
  for (double s : slowdown) {
    sum += s;
    sum_sq += s * s;
    worst = std::max(worst, s);
  }
  c["finish_time_fairness"] = {
      {"mean_slowdown", mean(slowdown)},
      {"max_slowdown", worst},
      {"jain_index", sum_sq > 0 ? sum * sum / (static_cast<double>(slowdown.size()) * sum_sq) : 1.0}};
  const double lambda = span > 0 ? static_cast<double>(finished) / span : 0.0;
  const double L = span > 0 ? sim.jobs_in_system_seconds / span : 0.0;
  c["littles_law"] = {{"L", L},
                      {"lambda_per_s", lambda},
                      {"W_s", mean(jct)},
                      {"L_over_lambda_W", lambda * mean(jct) > 0 ? L / (lambda * mean(jct)) : 0.0}};
  c["work_conservation"] = {{"busy_gpu_seconds", sim.busy_gpu_seconds}, {"solo_work_gpu_seconds", work_gpu_seconds}};
  c["preemptions"] = preemptions;
  // Gandiva's packing: jobs that shared a GPU, and for how long in all.
  std::size_t packed_jobs = 0;
  double packed_seconds = 0;
  for (const JobOutcome& job : sim.jobs) {
    packed_jobs += job.packed_s > 0 ? 1 : 0;
    packed_seconds += job.packed_s;
  }
  c["packing"] = {{"packed_jobs", packed_jobs}, {"packed_job_seconds", packed_seconds}};
  if (!spec.admission.empty()) {
    // Welfare and revenue over the jobs' work in GPU-hours (solo run time × GPUs), so that policies
    // that admit the same jobs score the same whatever the scheduler made of them.
    double welfare = 0, revenue = 0;
    for (const JobOutcome& job : sim.jobs) {
      if (job.status == JobOutcome::Status::never_fits || job.status == JobOutcome::Status::rejected) continue;
      const double gpu_hours = job.solo_seconds * job.gpus / 3600.0;
      welfare += job.value * gpu_hours;
      revenue += job.price * gpu_hours;
    }
    c["admission"] = {{"policy", spec.admission},
                      {"min_value", spec.admission_config.min_value},
                      {"max_value", spec.admission_config.max_value},
                      {"admitted", sim.jobs.size() - never - rejected_jobs},
                      {"rejected", rejected_jobs},
                      {"welfare", welfare},
                      {"revenue", revenue}};
  }
  c["scheduler_calls"] = sim.scheduler_calls;
  c["events"] = sim.events;
  c["flows"] = sim.flows;
  if (spec.ps_per_worker > 0)
    c["parameter_servers"] = {
        {"ps_per_worker", spec.ps_per_worker}, {"ps_cores", spec.ps_cores}, {"deferred_starts", sim.ps_deferred}};
  summary["cluster"] = c;
}

void ClusterKind::write_files(const Scenario& scenario, const SimulationResult& result, const std::string& dir) const {
  const auto* report = dynamic_cast<const ClusterRunReport*>(result.workload_result.get());
  if (report == nullptr) return;
  const ClusterSimResult& sim = report->sim;
  const JobTrace& trace = report->spec->trace;
  std::ofstream jobs(dir + "/jobs.csv");
  jobs << "id,submit_s,start_s,end_s,queueing_s,jct_s,gpus,placement,preemptions,contention_slowdown,solo_s,status,"
          "model,virtual_cluster,value,price,"
          "packed_s\n";
  for (std::size_t i = 0; i < sim.jobs.size(); ++i) {
    const JobOutcome& job = sim.jobs[i];
    const char* status = job.status == JobOutcome::Status::finished     ? "finished"
                         : job.status == JobOutcome::Status::never_fits ? "never_fits"
                         : job.status == JobOutcome::Status::rejected   ? "rejected"
                                                                        : "unfinished";
    auto opt = [](double v) { return v < 0 ? std::string() : fmt::format("{}", v); };
    jobs << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", trace.jobs[i].id, job.submit,
                        opt(job.start), opt(job.end),
                        job.start < 0 ? std::string() : fmt::format("{}", job.start - job.submit),
                        job.end < 0 ? std::string() : fmt::format("{}", job.end - job.submit), job.gpus, job.placement,
                        job.preemptions, job.contention_slowdown, job.solo_seconds, status, trace.jobs[i].model,
                        trace.jobs[i].virtual_cluster, opt(job.value), opt(job.price), job.packed_s);
  }
  if (scenario.outputs.trace) {
    std::ofstream out(dir + "/jobs_trace.json", std::ios::binary);
    write_jobs_trace(out, sim, trace);
  }

  std::ofstream util(dir + "/utilisation.csv");
  util << "start_s,busy_gpus,utilisation,running,queued\n";
  for (const UtilisationSample& s : sim.utilisation)
    util << fmt::format("{},{},{},{},{}\n", s.start, s.busy_gpus,
                        sim.total_gpus > 0 ? s.busy_gpus / sim.total_gpus : 0.0, s.running, s.queued);
}

}  // namespace

std::shared_ptr<const WorkloadKind> make_cluster_kind() { return std::make_shared<ClusterKind>(); }

void write_jobs_trace(std::ostream& out, const ClusterSimResult& sim, const JobTrace& trace) {
  out << R"({"traceEvents":[)";
  JsonElements events(out);
  for (const JobAttempt& attempt : sim.attempts)
    for (const auto& [server, gpus] : attempt.placement.slices)
      events.next() << R"({"name":)"
                    << Json{fmt::format("{} ({} GPU{})", trace.jobs[attempt.job].id, gpus, gpus > 1 ? "s" : "")}
                    << R"(,"ph":"X","pid":)" << server << R"(,"tid":)" << attempt.job << R"(,"ts":)"
                    << Json{attempt.start * 1e6} << R"(,"dur":)" << Json{(attempt.end - attempt.start) * 1e6} << "}";
  out << R"(],"displayTimeUnit":"ms"})" << '\n';
}

}  // namespace dnnsim
