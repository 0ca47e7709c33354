// Reads a scenario YAML into a Scenario (see scenario.hpp and docs/scenarios.md): the top level, the
// workload (through its kind), run, outputs and expectations; the cluster, calibration and network
// sections have readers of their own (cluster_reader, network_reader), and `--set` overrides are
// applied to the tree first (overrides).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "models/common/parse_number.hpp"
#include "models/common/yaml_reader.hpp"
#include "sim/report/summary_fields.hpp"
#include "sim/scenario/cluster_reader.hpp"
#include "sim/scenario/expectation_reader.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/network_reader.hpp"
#include "sim/scenario/overrides.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {
namespace {

constexpr auto kMaxInt = std::numeric_limits<std::int64_t>::max();

class ScenarioParser {
 public:
  ScenarioParser(std::string file, DiagnosticSink& sink) : reader_(std::move(file), sink) {}

  [[nodiscard]] YamlReader& reader() { return reader_; }

  Scenario parse(YAML::Node root) {
    Scenario scenario;
    scenario.file = reader_.file();
    MapReader top(reader_, root, "the scenario");
    if (!top.valid()) return scenario;
    scenario.name = top.string("name", true).value_or("");
    scenario.description = top.string("description").value_or("");
    const std::size_t errors_before_cluster = reader_.sink().diagnostics().size();
    YAML::Node cluster = top.require("cluster");
    if (cluster.IsDefined()) scenario.cluster = read_cluster(reader_, cluster);
    const bool cluster_clean = cluster.IsDefined() && reader_.sink().diagnostics().size() == errors_before_cluster;
    // The run before the workload: its memory budget bounds what a workload builds while it is read
    // (a cluster's generated jobs).
    if (YAML::Node run = top.get("run"); run.IsDefined()) scenario.run = read_run(run);
    if (YAML::Node workload = top.require("workload"); workload.IsDefined())
      read_workload(workload, scenario, cluster_clean);
    if (YAML::Node outputs = top.get("outputs"); outputs.IsDefined()) scenario.outputs = read_outputs(outputs);
    if (scenario.outputs.dir.empty()) scenario.outputs.dir = "out/" + scenario.name;
    if (YAML::Node expect = top.get("expect"); expect.IsDefined())
      scenario.expectations = read_expectations(expect, scenario.workload_kind);
    if (YAML::Node calibration = top.get("calibration"); calibration.IsDefined() && cluster_clean)
      read_calibration(reader_, calibration, scenario.cluster);
    // Network conditions name links and GPUs: check them against the platform the cluster makes.
    YAML::Node network = top.get("network");
    top.finish();
    if (cluster_clean) {
      try {
        layout_ = make_layout(scenario.cluster);
      } catch (const InputError& e) {
        const YAML::Node interconnect = cluster["interconnect"];
        for (const Diagnostic& d : e.diagnostics())
          reader_.error(interconnect.IsDefined() ? interconnect : cluster, d.message);
      }
    }
    if (network.IsDefined()) {
      scenario.network = read_network(reader_, network, scenario.cluster, layout_ ? &*layout_ : nullptr);
      if (scenario.workload) {
        if (const std::string why = scenario.workload->network_unsupported(); !why.empty())
          reader_.error(network, why);
        else if (const std::string failures_why = scenario.workload->failures_unsupported();
                 !failures_why.empty() && !scenario.network.failures.empty())
          reader_.error(network["failures"], failures_why);
      }
    }
    return scenario;
  }

 private:
  // ---- workload ----

  // The kind is looked up in the workload-kind registry, which reads the rest of the section. After
  // errors in the cluster section the kind sees no cluster, and skips its checks against it: their
  // sizes and GPU types may be defaults put in place of what was refused or misspelt.
  void read_workload(const YAML::Node& node, Scenario& scenario, bool cluster_clean) {
    MapReader map(reader_, node, "the workload");
    if (!map.valid()) return;
    const WorkloadKindRegistry& kinds = builtin_workload_kinds();
    const auto kind = map.choice("kind", "workload kind", kinds.names(), true);
    // The other keys depend on the kind: after a missing or misspelt kind, reporting them too would
    // only add noise.
    if (!kind) return;
    WorkloadParseContext context{reader_, map, cluster_clean ? scenario.cluster : no_cluster_, scenario.run};
    scenario.workload_kind = *kind;
    scenario.workload = kinds.at(*kind).value->parse(context);
    map.finish();
  }

  // ---- run, outputs, expectations ----

  RunSettings read_run(const YAML::Node& node) {
    RunSettings run;
    MapReader map(reader_, node, "run");
    run.iterations = static_cast<int>(map.integer("iterations", 1, 1000000).value_or(1));
    run.seed = static_cast<std::uint64_t>(map.integer("seed", 0, kMaxInt).value_or(1));
    if (const auto fidelity = map.choice("collective_fidelity", collective_fidelity_names()))
      run.collective_fidelity = collective_fidelity_from_name(*fidelity);
    if (YAML::Node budget = map.get("memory_budget"); budget.IsDefined()) {
      run.memory_budget_where = reader_.where(budget);
      run.memory_budget = map.positive_quantity<Bytes>("memory_budget");
    }
    map.finish();
    return run;
  }

  Outputs read_outputs(const YAML::Node& node) {
    Outputs outputs;
    MapReader map(reader_, node, "outputs");
    outputs.dir = map.string("dir").value_or("");
    outputs.tasks_csv = map.boolean("tasks_csv").value_or(true);
    outputs.trace = map.boolean("trace").value_or(true);
    map.finish();
    return outputs;
  }

  // Each metric is checked against the fields a run of the workload's kind writes (`kind` empty: the
  // workload section was refused, and its kind with it).
  std::vector<Expectation> read_expectations(const YAML::Node& node, const std::string& kind) {
    std::vector<Expectation> result;
    for (const YAML::Node& e : reader_.list(node, "expectations")) {
      MapReader map(reader_, e, "an expectation");
      Expectation expectation;
      expectation.where = reader_.where(e);
      expectation.metric = map.string("metric", true).value_or("");
      if (const std::string problem = expectation.metric.empty() || kind.empty()
                                          ? std::string()
                                          : summary_path_problem(kind, expectation.metric, true);
          !problem.empty())
        reader_.error(e["metric"], problem);
      read_expectation_target(reader_, map, expectation);
      if (!kind.empty() && never_negative_field(kind, expectation.metric))
        refuse_negative_target(reader_, map, expectation, expectation.metric);
      map.finish();
      result.push_back(std::move(expectation));
    }
    return result;
  }

  YamlReader reader_;
  std::optional<PlatformLayout> layout_;
  const Cluster no_cluster_;
};

Scenario read_scenario(YAML::Node root, DiagnosticSink& sink, const std::string& path,
                       const std::vector<std::string>& overrides, const ScenarioTreeEdit& edit) {
  const std::vector<std::pair<YAML::Node, std::string>> override_values = apply_overrides(root, overrides, sink);
  sink.throw_if_any();
  if (edit) edit(root);
  ScenarioParser parser(path, sink);
  for (const auto& [value, origin] : override_values) parser.reader().add_override(value, origin);
  Scenario scenario = parser.parse(root);
  sink.throw_if_any();
  return scenario;
}

}  // namespace

void read_expectation_target(YamlReader& reader, MapReader& map, Expectation& expectation) {
  expectation.value = map.number("value", -1e300, 1e300, true).value_or(0.0);
  const std::string compare = map.choice("compare", {"approx", "at_most", "at_least"}).value_or("approx");
  expectation.comparison = compare == "approx"    ? Comparison::approx
                           : compare == "at_most" ? Comparison::at_most
                                                  : Comparison::at_least;
  if (YAML::Node tolerance = map.get("tolerance"); tolerance.IsDefined()) {
    const std::string text = tolerance.IsScalar() ? tolerance.Scalar() : "";
    if (!text.empty() && text.back() == '%') {
      const double percent = parse_number<double>(std::string_view(text).substr(0, text.size() - 1)).value_or(-1);
      if (percent < 0)
        reader.error(tolerance, fmt::format("expected a tolerance such as \"5%\" or 0.01, got \"{}\"", text));
      expectation.tolerance = percent / 100.0;
      expectation.relative = true;
    } else {
      expectation.tolerance = reader.number(tolerance, 0.0, 1e300).value_or(0.0);
    }
  }
  expectation.source = map.string("source").value_or("");
  expectation.known_gap = map.string("known_gap").value_or("");
}

void refuse_negative_target(YamlReader& reader, MapReader& map, const Expectation& expectation,
                            const std::string& metric) {
  if (expectation.value < 0 && !map.refused("value"))
    reader.error(map.get("value"),
                 fmt::format("expected value {} for '{}', which is never negative", expectation.value, metric));
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const ScenarioTreeEdit& edit) {
  DiagnosticSink sink;
  YamlReader reader(path, sink);
  YAML::Node root = reader.load_file();
  sink.throw_if_any();
  return read_scenario(root, sink, path, overrides, edit);
}

Scenario load_scenario_text(const std::string& text, const std::string& name, const std::vector<std::string>& overrides,
                            const ScenarioTreeEdit& edit) {
  DiagnosticSink sink;
  YamlReader reader(name, sink);
  YAML::Node root = reader.load_text(text);
  sink.throw_if_any();
  return read_scenario(root, sink, name, overrides, edit);
}

}  // namespace dnnsim
