// Finds and reads the inputs of `dnnsim regress` (see regress_spec.hpp and docs/regress.md).
#include "sim/regress/regress_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "models/common/units.hpp"
#include "models/common/yaml_reader.hpp"
#include "sim/report/summary_fields.hpp"
#include "sim/scenario/expectation_reader.hpp"
#include "sim/scenario/file_kind.hpp"

namespace dnnsim {
namespace {

namespace fs = std::filesystem;

// The YAML files of the inputs: directories walked recursively, each in sorted path order; files
// named on the command line taken as they are. A file reached twice is read once. A walk passes over
// hidden files and directories (a name starting with '.'), as git, pytest and the shells' globs do: a
// checkout's `.github/workflows/*.yml`, an editor's or a tool's scratch copy are not the user's
// scenarios; a hidden file named on the command line is read.
std::vector<fs::path> input_files(const std::vector<std::string>& inputs, DiagnosticSink& sink) {
  std::vector<fs::path> files;
  std::set<fs::path> seen;
  const auto add = [&](const fs::path& path) {
    if (seen.insert(fs::weakly_canonical(path)).second) files.push_back(path);
  };
  for (const std::string& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      std::vector<fs::path> found;
      for (auto entry = fs::recursive_directory_iterator(input); entry != fs::recursive_directory_iterator(); ++entry) {
        if (entry->path().filename().string().starts_with('.')) {
          entry.disable_recursion_pending();
          continue;
        }
        const std::string extension = entry->path().extension().string();
        if (entry->is_regular_file() && (extension == ".yaml" || extension == ".yml")) found.push_back(entry->path());
      }
      std::sort(found.begin(), found.end());
      std::for_each(found.begin(), found.end(), add);
    } else if (fs::is_regular_file(input, error)) {
      add(input);
    } else {
      sink.error(SourceLocation{input, 0, 0}, "no such file or directory");
    }
  }
  return files;
}

bool is_run_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

bool is_metric_path(const std::string& path) {
  return !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos;
}

class PlanBuilder {
 public:
  explicit PlanBuilder(DiagnosticSink& sink) : sink_(sink) {}

  void add_file(const fs::path& path) {
    YamlReader reader(path.string(), sink_);
    const YAML::Node root = reader.load_file();
    if (!root.IsDefined()) return;  // reported by load_file
    switch (input_file_kind(root)) {
      case InputFileKind::comparison:
        add_comparison(reader, root, path);
        break;
      case InputFileKind::sweep:
        plan_.skipped.push_back(fmt::format("{}: a sweep file", path.string()));
        break;
      case InputFileKind::scenario:
        if (root.IsMap() && root["expect"].IsDefined())
          add_scenario(path);
        else
          plan_.skipped.push_back(fmt::format("{}: no expectations", path.string()));
        break;
    }
  }

  RegressPlan take() { return std::move(plan_); }

 private:
  // A scenario file with expectations: one run of the file as it is.
  void add_scenario(const fs::path& path) {
    Scenario scenario;
    try {
      scenario = load_scenario(path.string());
    } catch (const InputError& e) {
      sink_.append(e.diagnostics());
      return;
    }
    if (scenario.expectations.empty()) {
      plan_.skipped.push_back(fmt::format("{}: an empty expect list", path.string()));
      return;
    }
    const std::size_t run = run_for(path.string(), {}, path.stem().string());
    for (const Expectation& e : scenario.expectations)
      plan_.checks.push_back(RegressCheck{scenario.name, e, RunMetric{run, e.metric}, std::nullopt});
  }

  // ---- comparison files ----

  // An `over:` key as written, and how many values it lists.
  struct OverKey {
    YAML::Node node;
    std::size_t values = 0;
  };

  struct NamedRun {
    std::string name;
    std::string scenario;
    std::vector<std::string> overrides;
    YAML::Node key;
    bool used = false;
    // The workload kinds of its scenario as loaded (one per member of `over:`), for checking the
    // metrics read from it; empty where the scenario had problems (reported at the run).
    std::set<std::string> kinds;
    // `over:`: its keys in file order and, per member (every combination, the last key varying
    // fastest), each key's value; empty: a single run.
    std::vector<std::string> over_keys;
    std::vector<std::vector<std::string>> members;
    // A misspelt `over`, or a key of it every member refused: said already, so a `spread:` over it need
    // not be said to name no key of it.
    bool over_in_error = false;
  };

  void add_comparison(YamlReader& reader, const YAML::Node& root, const fs::path& path) {
    const std::size_t errors_before = sink_.diagnostics().size();
    MapReader top(reader, root, "the comparison file");
    const std::string title = top.string("comparison", true).value_or("");
    std::vector<NamedRun> runs;
    if (const YAML::Node node = top.require("runs"); node.IsDefined()) runs = read_runs(reader, node, path);
    std::vector<RegressCheck> checks;
    bool expectations_read = false;  // all of them, without a problem
    if (const YAML::Node node = top.require("expect"); node.IsDefined()) {
      const std::size_t errors_before_expect = sink_.diagnostics().size();
      std::set<std::string> unknown_runs;  // reported at their first use: a misspelt run is one error
      for (const YAML::Node& entry : reader.list(node, "comparison expectations"))
        if (auto check = read_expectation(reader, entry, runs, unknown_runs)) checks.push_back(std::move(*check));
      if (node.IsSequence() && node.size() == 0) reader.error(node, "expected at least one expectation");
      expectations_read = sink_.diagnostics().size() == errors_before_expect;
    }
    top.finish();
    // Only once every expectation was read: a broken one may be the run's user.
    for (const NamedRun& run : runs)
      if (expectations_read && !run.used)
        reader.error(run.key, fmt::format("run '{}' is not used by any expectation", run.name));
    if (sink_.diagnostics().size() != errors_before) return;

    // The check's run indexes are positions in `runs` until here.
    std::vector<std::vector<std::size_t>> plan_index;
    for (const NamedRun& run : runs) {
      const std::string id = path.stem().string() + "." + run.name;
      plan_index.emplace_back();
      if (run.members.empty()) plan_index.back().push_back(run_for(run.scenario, run.overrides, id));
      for (std::size_t m = 0; m < run.members.size(); ++m)
        plan_index.back().push_back(run_for(run.scenario, member_overrides(run, m), fmt::format("{}.{}", id, m + 1)));
    }
    for (RegressCheck& check : checks) {
      check.group = title;
      resolve(check.numerator, runs, plan_index, check.spread);
      if (check.denominator) resolve(*check.denominator, runs, plan_index, "");
      plan_.checks.push_back(std::move(check));
    }
  }

  static std::vector<std::string> member_overrides(const NamedRun& run, std::size_t member) {
    std::vector<std::string> overrides = run.overrides;
    for (std::size_t k = 0; k < run.over_keys.size(); ++k)
      overrides.push_back(run.over_keys[k] + "=" + run.members[member][k]);
    return overrides;
  }

  // From a position in `runs` to the plan's runs; a run with `over:` gets its members and their groups:
  // the value of `spread` (one of its keys) or, without it, each member's own values.
  static void resolve(RunMetric& metric, const std::vector<NamedRun>& runs,
                      const std::vector<std::vector<std::size_t>>& plan_index, const std::string& spread) {
    const NamedRun& run = runs[metric.run];
    const std::vector<std::size_t>& index = plan_index[metric.run];
    metric.run = index.front();
    if (run.members.empty()) return;
    metric.members = index;
    const auto key = std::find(run.over_keys.begin(), run.over_keys.end(), spread);
    for (const std::vector<std::string>& values : run.members) {
      if (key != run.over_keys.end()) {
        metric.groups.push_back(values[static_cast<std::size_t>(key - run.over_keys.begin())]);
      } else {
        std::string all;
        for (const std::string& value : values) all += (all.empty() ? "" : ", ") + value;
        metric.groups.push_back(all);
      }
    }
  }

  // The problems the runs of one comparison file met. Runs that share a scenario, a data file it reads
  // or a `set:` list (a YAML alias) meet its mistakes alike, and one mistake is one error.
  struct RunProblems {
    // A problem of a scenario file, with the runs that met it (reported once all runs are read).
    struct OfScenario {
      std::string text;
      YAML::Node first_scenario_node;
      std::vector<std::string> runs;
    };
    std::vector<OfScenario> of_scenarios;
    std::set<std::tuple<int, int, std::string>> of_overrides;  // reported: line, column, message
    // A problem of an `over:` key, with the values that met it: every value meeting it alike (an unknown
    // key) is one mistake of the key, reported once at the key; otherwise at each value that met it.
    struct OfOverKey {
      OverKey key;
      std::string message;
      std::vector<std::pair<YAML::Node, std::string>> values;  // the value's node, its override
      std::set<std::string> runs;                              // that met it
    };
    std::vector<OfOverKey> of_over_keys;
  };

  std::vector<NamedRun> read_runs(YamlReader& reader, const YAML::Node& node, const fs::path& path) {
    std::vector<NamedRun> runs;
    RunProblems problems;
    if (!node.IsMap() || node.size() == 0) {
      reader.error(node, "expected a mapping of run names to {scenario: FILE, set: [KEY=VALUE, …]}");
      return runs;
    }
    for (const auto& item : node) {
      NamedRun run;
      run.name = item.first.IsScalar() ? item.first.Scalar() : "";
      run.key = item.first;
      if (!is_run_name(run.name))
        reader.error(item.first, fmt::format("a run name uses letters, digits, '_' and '-', got \"{}\"", run.name));
      MapReader map(reader, item.second, fmt::format("run '{}'", run.name));
      const YAML::Node scenario_node = map.require("scenario");
      std::vector<YAML::Node> set_nodes;
      if (const YAML::Node set = map.get("set"); set.IsDefined()) {
        for (const YAML::Node& assignment : reader.list(set, "KEY=VALUE overrides")) {
          if (auto text = reader.string(assignment)) {
            run.overrides.push_back(*text);
            set_nodes.push_back(assignment);
          }
        }
      }
      std::vector<YAML::Node> value_nodes;  // per member, the node of each key's value
      std::vector<OverKey> over_keys;
      if (const YAML::Node over = map.get("over"); over.IsDefined())
        read_over(reader, over, run, value_nodes, over_keys);
      run.over_in_error = map.misspelt("over");
      map.finish();
      if (scenario_node.IsDefined()) {
        if (auto file = reader.string(scenario_node)) {
          const fs::path p(*file);
          run.scenario = p.is_absolute() ? *file : (path.parent_path() / p).lexically_normal().string();
          if (std::error_code refused; !fs::is_regular_file(run.scenario, refused))
            reader.error(scenario_node, fmt::format("cannot open the scenario '{}'", run.scenario));
          else if (run.members.empty())
            validate_run(reader, run, run.overrides, scenario_node, set_nodes, {}, problems);
          else
            for (std::size_t m = 0; m < run.members.size(); ++m) {
              std::vector<YAML::Node> nodes = set_nodes;
              std::vector<const OverKey*> keys(set_nodes.size(), nullptr);
              for (std::size_t k = 0; k < run.over_keys.size(); ++k) {
                nodes.push_back(value_nodes[m * run.over_keys.size() + k]);
                keys.push_back(&over_keys[k]);
              }
              validate_run(reader, run, member_overrides(run, m), scenario_node, nodes, keys, problems);
            }
        }
      }
      runs.push_back(std::move(run));
    }
    for (const RunProblems::OfOverKey& problem : problems.of_over_keys) {
      if (problem.values.size() > 1 && problem.values.size() == problem.key.values) {
        reader.error(problem.key.node, fmt::format("{}: {}", problem.key.node.Scalar(), problem.message));
        for (NamedRun& run : runs) run.over_in_error = run.over_in_error || problem.runs.count(run.name) > 0;
        continue;
      }
      for (const auto& [node, override_text] : problem.values) {
        std::string message = fmt::format("{}: {}", override_text, problem.message);
        if (problems.of_overrides.emplace(node.Mark().line, node.Mark().column, message).second)
          reader.error(node, std::move(message));
      }
    }
    for (const RunProblems::OfScenario& problem : problems.of_scenarios) {
      std::vector<std::string> quoted;
      for (const std::string& name : problem.runs) quoted.push_back(fmt::format("'{}'", name));
      reader.error(problem.first_scenario_node, fmt::format("{} {}: {}", quoted.size() == 1 ? "run" : "runs",
                                                            fmt::join(quoted, ", "), problem.text));
    }
    return runs;
  }

  // `over: {KEY: [v1, v2, …], …}`: one member per combination of the values, the last key varying
  // fastest. `value_nodes` gets, member by member, each key's value node (where its problems go), and
  // `keys` each key.
  void read_over(YamlReader& reader, const YAML::Node& over, NamedRun& run, std::vector<YAML::Node>& value_nodes,
                 std::vector<OverKey>& keys) {
    if (!over.IsMap() || over.size() == 0) {
      reader.error(over, "expected a mapping of scenario keys to lists of values: {workload.seed: [1000, 1001]}");
      return;
    }
    std::vector<std::vector<YAML::Node>> values;
    for (const auto& item : over) {
      const std::string key = item.first.IsScalar() ? item.first.Scalar() : "";
      if (key.empty() || std::find(run.over_keys.begin(), run.over_keys.end(), key) != run.over_keys.end()) {
        reader.error(item.first, "expected each key once, a dotted scenario key such as workload.seed");
        return;
      }
      std::vector<YAML::Node> list;
      for (const YAML::Node& value : reader.list(item.second, "values"))
        if (!value.IsScalar())
          reader.error(value, "expected a scalar value");
        else
          list.push_back(value);
      if (list.empty()) {
        reader.error(item.second, "expected at least one value");
        return;
      }
      run.over_keys.push_back(key);
      keys.push_back(OverKey{item.first, list.size()});
      values.push_back(std::move(list));
    }
    std::vector<std::size_t> at(values.size(), 0);
    for (bool more = true; more;) {
      run.members.emplace_back();
      for (std::size_t k = 0; k < values.size(); ++k) {
        run.members.back().push_back(values[k][at[k]].Scalar());
        value_nodes.push_back(values[k][at[k]]);
      }
      more = false;
      for (std::size_t k = values.size(); k-- > 0 && !more;) {
        more = ++at[k] < values[k].size();
        if (!more) at[k] = 0;
      }
    }
  }

  // Loads the run's scenario with its overrides and notes its workload kind. A problem of a `set:`
  // override is reported at that override, once; one of an `over:` override (its `keys` entry set) goes
  // to `problems`, to be said at its key or its values once every member is read. Any other
  // problem of the scenario goes to `problems`, reported once at the `scenario:` line of the first run
  // that met it, quoting the scenario's own location.
  void validate_run(YamlReader& reader, NamedRun& run, const std::vector<std::string>& overrides,
                    const YAML::Node& scenario_node, const std::vector<YAML::Node>& override_nodes,
                    const std::vector<const OverKey*>& keys, RunProblems& problems) {
    const std::string& name = run.name;
    try {
      run.kinds.insert(load_scenario(run.scenario, overrides).workload_kind);
    } catch (const InputError& e) {
      for (const Diagnostic& d : e.diagnostics()) {
        const auto at_override = std::find_if(overrides.begin(), overrides.end(),
                                              [&](const std::string& o) { return d.location.file == "--set " + o; });
        if (at_override != overrides.end()) {
          const auto index = static_cast<std::size_t>(at_override - overrides.begin());
          const YAML::Node& node = override_nodes[index];
          if (index < keys.size() && keys[index] != nullptr) {
            const OverKey& key = *keys[index];
            auto& of_keys = problems.of_over_keys;
            auto seen = std::find_if(of_keys.begin(), of_keys.end(), [&](const RunProblems::OfOverKey& p) {
              return p.key.node.Mark().line == key.node.Mark().line &&
                     p.key.node.Mark().column == key.node.Mark().column && p.message == d.message;
            });
            if (seen == of_keys.end())
              seen = of_keys.insert(of_keys.end(), RunProblems::OfOverKey{key, d.message, {}, {}});
            seen->runs.insert(name);
            if (std::none_of(seen->values.begin(), seen->values.end(), [&](const auto& v) {
                  return v.first.Mark().line == node.Mark().line && v.first.Mark().column == node.Mark().column;
                }))
              seen->values.emplace_back(node, *at_override);
            continue;
          }
          std::string message = fmt::format("{}: {}", *at_override, d.message);
          if (problems.of_overrides.emplace(node.Mark().line, node.Mark().column, message).second)
            reader.error(node, std::move(message));
        } else {
          const std::string text = format_diagnostic(d);
          auto& seen_problems = problems.of_scenarios;
          auto seen = std::find_if(seen_problems.begin(), seen_problems.end(),
                                   [&](const RunProblems::OfScenario& p) { return p.text == text; });
          if (seen == seen_problems.end())
            seen = seen_problems.insert(seen_problems.end(), RunProblems::OfScenario{text, scenario_node, {}});
          if (std::find(seen->runs.begin(), seen->runs.end(), name) == seen->runs.end()) seen->runs.push_back(name);
        }
      }
    }
  }

  std::optional<RegressCheck> read_expectation(YamlReader& reader, const YAML::Node& entry, std::vector<NamedRun>& runs,
                                               std::set<std::string>& unknown_runs) {
    MapReader map(reader, entry, "a comparison expectation");
    if (!map.valid()) return std::nullopt;
    const std::size_t errors_before = sink_.diagnostics().size();
    RegressCheck check;
    Expectation& e = check.expectation;
    e.where = reader.where(entry);
    const std::optional<std::string> name = map.string("name");
    const YAML::Node metric = map.get("metric");
    const YAML::Node ratio = map.get("ratio");
    read_expectation_target(reader, map, e);
    const YAML::Node spread = map.get("spread");
    map.finish();

    std::string default_name;
    bool operands_read = true;
    const auto operand = [&](const YAML::Node& node) {
      std::optional<RunMetric> read = read_operand(reader, node, runs, unknown_runs);
      operands_read = operands_read && read.has_value();
      return read.value_or(RunMetric{});
    };
    if (metric.IsDefined() == ratio.IsDefined()) {
      // A misspelt 'metric' or 'ratio' is already an unknown key suggesting it.
      if (metric.IsDefined() || !(map.misspelt("metric") || map.misspelt("ratio")))
        reader.error(entry, "give either 'metric: RUN:PATH' or 'ratio: [RUN:PATH, RUN:PATH]'");
      operands_read = false;
    } else if (metric.IsDefined()) {
      check.numerator = operand(metric);
      default_name = metric.IsScalar() ? metric.Scalar() : "";
    } else if (!ratio.IsSequence() || ratio.size() != 2) {
      reader.error(ratio, "expected a ratio as two operands: [RUN:PATH, RUN:PATH] (numerator, denominator)");
      operands_read = false;
    } else {
      check.numerator = operand(ratio[0]);
      check.denominator = operand(ratio[1]);
      default_name = fmt::format("{} / {}", ratio[0].IsScalar() ? ratio[0].Scalar() : "",
                                 ratio[1].IsScalar() ? ratio[1].Scalar() : "");
    }
    e.metric = name.value_or(default_name);
    if (!operands_read) return std::nullopt;
    // A ratio of two metrics never negative is never negative either.
    const auto never_negative = [&](const RunMetric& operand) {
      const auto& kinds = runs[operand.run].kinds;
      return !kinds.empty() && std::all_of(kinds.begin(), kinds.end(), [&](const std::string& kind) {
        return never_negative_field(kind, operand.path);
      });
    };
    if (never_negative(check.numerator) && (!check.denominator || never_negative(*check.denominator)))
      refuse_negative_target(reader, map, e, default_name);
    if (spread.IsDefined() && sink_.diagnostics().size() == errors_before) {
      const NamedRun& run = runs[check.numerator.run];
      check.spread = reader.string(spread).value_or("");
      if (!run.over_in_error &&
          std::find(run.over_keys.begin(), run.over_keys.end(), check.spread) == run.over_keys.end())
        reader.error(spread, run.over_keys.empty()
                                 ? fmt::format("run '{}' has no `over:` to spread over", run.name)
                                 : fmt::format("'{}' is not a key of run '{}''s `over:`{}", check.spread, run.name,
                                               suggestion_suffix(check.spread, run.over_keys)));
    }
    if (sink_.diagnostics().size() != errors_before) return std::nullopt;
    return check;
  }

  // "RUN:PATH": a metric of one of the file's runs; `RunMetric::run` is the run's position in `runs`.
  // A run name found unknown is reported at its first use only (`unknown_runs`): a run whose own name
  // is misspelt is one mistake, however many expectations use it.
  std::optional<RunMetric> read_operand(YamlReader& reader, const YAML::Node& node, std::vector<NamedRun>& runs,
                                        std::set<std::string>& unknown_runs) {
    const auto text = reader.string(node);
    if (!text) return std::nullopt;
    const auto colon = text->find(':');
    if (colon == std::string::npos || !is_metric_path(text->substr(colon + 1))) {
      reader.error(node, fmt::format("expected RUN:PATH, a run name and a dotted path into its summary.json such as "
                                     "gpipe:mean.iteration_time_s, got \"{}\"",
                                     *text));
      return std::nullopt;
    }
    const std::string name = text->substr(0, colon);
    const auto run = std::find_if(runs.begin(), runs.end(), [&](const NamedRun& r) { return r.name == name; });
    if (run == runs.end()) {
      std::vector<std::string> names;
      for (const NamedRun& r : runs) names.push_back(r.name);
      if (unknown_runs.insert(name).second)
        reader.error(node, fmt::format("unknown run '{}'{}", name, suggestion_suffix(name, names)));
      return std::nullopt;
    }
    run->used = true;
    const std::string path = text->substr(colon + 1);
    for (const std::string& kind : run->kinds)
      if (const std::string problem = summary_path_problem(kind, path, true); !problem.empty()) {
        reader.error(node, fmt::format("run '{}': {}", name, problem));
        return std::nullopt;
      }
    return RunMetric{static_cast<std::size_t>(run - runs.begin()), path};
  }

  // The plan's run of `scenario` with `overrides`, added on first use with an id not taken yet
  // (`id_base`, then `id_base-2`, …).
  std::size_t run_for(const std::string& scenario, const std::vector<std::string>& overrides,
                      const std::string& id_base) {
    const auto key = std::pair{fs::weakly_canonical(scenario).string(), overrides};
    if (const auto found = run_index_.find(key); found != run_index_.end()) return found->second;
    std::string id = id_base;
    for (int n = 2; !ids_.insert(id).second; ++n) id = fmt::format("{}-{}", id_base, n);
    plan_.runs.push_back(RegressRun{id, scenario, overrides});
    run_index_.emplace(key, plan_.runs.size() - 1);
    return plan_.runs.size() - 1;
  }

  DiagnosticSink& sink_;
  RegressPlan plan_;
  std::map<std::pair<std::string, std::vector<std::string>>, std::size_t> run_index_;
  std::set<std::string> ids_;
};

}  // namespace

RegressPlan load_regress_plan(const std::vector<std::string>& inputs) {
  DiagnosticSink sink;
  PlanBuilder builder(sink);
  const std::vector<fs::path> files = input_files(inputs, sink);
  for (const fs::path& file : files) builder.add_file(file);
  RegressPlan plan = builder.take();
  if (sink.empty() && plan.checks.empty()) {
    std::string joined;
    for (const std::string& input : inputs) joined += (joined.empty() ? "" : " ") + input;
    sink.error(SourceLocation{joined, 0, 0},
               fmt::format("found no scenario with expectations and no comparison file ({} skipped)",
                           counted(plan.skipped.size(), "YAML file")));
  }
  sink.throw_if_any();
  return plan;
}

}  // namespace dnnsim
