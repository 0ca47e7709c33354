// `import dnnsim` (docs/python.md): the simulator from Python, as thin as the CLI.
//   dnnsim.run(scenario, set=[], out=None)  → the summary as a dict, plus "tasks": one list per
//                                              tasks.csv column (pandas.DataFrame(result["tasks"]))
//   dnnsim.validate(scenario, set=[])       → what would run ("ok (8 GPUs, 120 tasks)")
//   dnnsim.plan(scenario, planner=None, set=[]) → a pipeline workload's plan (summary.json's "pipeline")
//   dnnsim.list(what)                        → the entries of a registry or catalog, as dicts
// A scenario is a path, a YAML string or a dict. Bad input raises dnnsim.InputError (a ValueError)
// whose text is exactly what the CLI prints (format_input_error).
// SimGrid keeps one engine per process (its clock never resets): run() simulates in a forked child
// and reads the summary back through a pipe, so a notebook can call it any number of times.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "models/dnn/zoo.hpp"
#include "models/gnn/feature_cache.hpp"
#include "models/gnn/partitioner.hpp"
#include "models/gnn/sampler.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/collective_algorithms.hpp"
#include "planners/jobs/admission.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/placement.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/schedules/schedule.hpp"
#include "planners/spmd/spmd_planner.hpp"
#include "planners/sync/sync_policy.hpp"
#include "sim/process/child_process.hpp"
#include "sim/report/report.hpp"
#include "sim/run/registries.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"

namespace py = pybind11;

namespace dnnsim {
namespace {

PyObject* input_error_type = nullptr;

// A path that exists is a file; a dict or text with a newline or a colon is YAML; anything else a
// path (whose absence is then reported as the CLI reports it).
Scenario load(const py::object& scenario, const std::vector<std::string>& overrides,
              const ScenarioTreeEdit& edit = {}) {
  if (py::isinstance<py::dict>(scenario)) {
    const std::string text = py::module_::import("json").attr("dumps")(scenario).cast<std::string>();
    return load_scenario_text(text, "<dict>", overrides, edit);
  }
  const std::string text = py::str(scenario).cast<std::string>();
  std::error_code not_a_path;  // a long YAML text is no file name
  if (!std::filesystem::exists(text, not_a_path) &&
      (text.find('\n') != std::string::npos || text.find(':') != std::string::npos))
    return load_scenario_text(text, "<string>", overrides, edit);
  return load_scenario(text, overrides, edit);
}

py::object to_python(const nlohmann::ordered_json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

// tasks.csv as columns.
nlohmann::ordered_json task_columns(const SimulationResult& result) {
  using nlohmann::ordered_json;
  ordered_json columns;
  for (const char* name : {"id", "label", "kind", "phase", "iteration", "devices", "stream", "start_s", "end_s",
                           "duration_s", "bytes", "flops"})
    columns[name] = ordered_json::array();
  const TaskGraph& graph = result.graph;
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const Task& task = graph.task(id);
    const auto [kind, devices, bytes, flops] = describe_task(graph, id);
    const double start = result.task_start[id], end = result.task_end[id];
    columns["id"].push_back(id);
    columns["label"].push_back(task.label);
    columns["kind"].push_back(kind);
    columns["phase"].push_back(std::string(phase_name(task.phase)));
    columns["iteration"].push_back(task.iteration);
    columns["devices"].push_back(devices);
    columns["stream"].push_back(graph.streams()[task.stream]);
    columns["start_s"].push_back(start);  // NaN (a task that never ran) is written as null
    columns["end_s"].push_back(end);
    columns["duration_s"].push_back(end - start);
    columns["bytes"].push_back(bytes);
    columns["flops"].push_back(flops);
  }
  return columns;
}

// The simulation of `scenario` in a forked child: its summary (and, with `tasks`, the task columns)
// as JSON text, or the error it raised. The parent waits without the GIL.
nlohmann::ordered_json simulate_in_child(const Scenario& scenario, const std::string& out, bool tasks) {
  ChildProcess child = ChildProcess::run_function([&]() -> std::string {
    try {
      const SimulationResult result = run_scenario(scenario, SimulationOptions{!out.empty() && scenario.outputs.trace});
      nlohmann::ordered_json summary = make_summary(scenario, result);
      if (!out.empty()) write_reports(scenario, result, summary, out);
      if (tasks) summary["tasks"] = task_columns(result);
      return "S" + summary.dump();
    } catch (const InputError& e) {
      return "E" + format_input_error(e);
    } catch (const std::exception& e) {
      return std::string("X") + e.what();
    }
  });
  ChildResult run;
  {
    py::gil_scoped_release unlocked;
    run = child.wait();
  }
  const std::string& text = run.output;
  if (text.empty())
    throw std::runtime_error(run.exit.how == ChildExit::How::killed_by_signal
                                 ? "dnnsim.run: the simulation died of signal " + std::to_string(run.exit.code)
                                 : "dnnsim.run: the simulation ended without a result");
  if (text[0] == 'E') {
    PyErr_SetString(input_error_type, text.substr(1).c_str());
    throw py::error_already_set();
  }
  if (text[0] == 'X') throw std::runtime_error("dnnsim.run: " + text.substr(1));
  return nlohmann::ordered_json::parse(text.substr(1));
}

// An entry's declared options as dicts: name, type, default, range (as written in YAML) and doc.
py::list option_dicts(const OptionSchema& schema) {
  py::list list;
  for (const OptionSpec& spec : schema.specs())
    list.append(py::dict(py::arg("name") = spec.name, py::arg("type") = spec.type_text(),
                         py::arg("default") = spec.default_text(), py::arg("range") = spec.range_text(),
                         py::arg("doc") = spec.doc));
  return list;
}

// `dnnsim.list()`: as `dnnsim list` alone, the registries' and the GPU catalog's name, what they
// hold and their number of entries.
py::list list_overview() {
  py::list overview;
  overview.append(py::dict(py::arg("name") = "gpus", py::arg("what") = kGpusWhat,
                           py::arg("entries") = HardwareCatalog::builtin().gpus().size()));
  for (const RegistryListing& listing : builtin_registry_listings())
    overview.append(py::dict(py::arg("name") = listing.name, py::arg("what") = listing.what,
                             py::arg("entries") = listing.entries.size()));
  return overview;
}

py::list list(const std::optional<std::string>& what_arg) {
  if (!what_arg) return list_overview();
  const std::string& what = *what_arg;
  for (const RegistryListing& listing : builtin_registry_listings()) {
    if (listing.name != what) continue;
    py::list list;
    for (const ListedEntry& entry : listing.entries)
      list.append(py::dict(py::arg("name") = entry.name, py::arg("description") = entry.description,
                           py::arg("source") = entry.source, py::arg("options") = option_dicts(*entry.options)));
    return list;
  }
  if (what == "gpus") {
    py::list gpus;
    for (const GpuSpec& gpu : HardwareCatalog::builtin().gpus()) {
      py::dict entry;
      entry["name"] = gpu.name;
      entry["memory_bytes"] = gpu.memory.value();
      entry["memory_bandwidth_bytes_per_s"] = gpu.memory_bandwidth.value();
      for (const std::string& name : dtype_names()) {
        const auto peak = gpu.peak(*dtype_from_name(name));
        entry[py::str("peak_" + name + "_flops_per_s")] =
            peak ? py::object(py::float_(peak->value())) : py::object(py::none());
      }
      gpus.append(entry);
    }
    return gpus;
  }
  std::string names = "gpus";
  for (const RegistryListing& listing : builtin_registry_listings()) names += ", " + listing.name;
  PyErr_SetString(PyExc_ValueError, ("dnnsim.list: unknown '" + what + "'; one of " + names).c_str());
  throw py::error_already_set();
}

py::object plan(const py::object& scenario_arg, const std::optional<std::string>& planner,
                const std::vector<std::string>& overrides) {
  // As `dnnsim plan --planner`: the planner replaced in the tree, before any check.
  if (planner) (void)builtin_planners().at(*planner, SourceLocation{"planner=" + *planner, 0, 0});
  Scenario scenario = load(scenario_arg, overrides, planner ? replace_planner(*planner) : ScenarioTreeEdit{});
  PipelineSetup setup = plan_pipeline(scenario, *plannable_spec(scenario));
  // The kind writes the plan as summary.json's "pipeline" section.
  SimulationResult planned;
  planned.gpu_names = scenario.cluster.gpu_names();
  planned.workload_result = std::make_shared<PipelineRunReport>(std::move(setup.report));
  nlohmann::ordered_json summary;
  builtin_workload_kinds().at(scenario.workload_kind).value->add_to_summary(scenario, planned, summary);
  return to_python(summary["pipeline"]);
}

}  // namespace
}  // namespace dnnsim

PYBIND11_MODULE(dnnsim, m) {
  using namespace dnnsim;
  m.doc() = "dnnsim: simulate distributed deep-learning training on GPU clusters (docs/python.md)";
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  input_error_type = input_error.ptr();
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const InputError& e) {
      PyErr_SetString(input_error_type, format_input_error(e).c_str());
    }
  });
  m.def(
      "run",
      [](const py::object& scenario, const std::vector<std::string>& set, const std::optional<std::string>& out,
         bool tasks) {
        const Scenario loaded = load(scenario, set);
        return to_python(simulate_in_child(loaded, out.value_or(""), tasks));
      },
      py::arg("scenario"), py::arg("set") = std::vector<std::string>{}, py::arg("out") = py::none(),
      py::arg("tasks") = true,
      "Simulates a scenario (path, YAML string or dict) in a child process; returns summary.json as a dict with "
      "'tasks' added (tasks.csv as columns; tasks=False leaves them out: ~2.5 kB a task of memory at the peaks, "
      "docs/python.md). "
      "out: also write the reports there. set: overrides as for --set.");
  m.def(
      "validate",
      [](const py::object& scenario, const std::vector<std::string>& set) {
        const Scenario loaded = load(scenario, set);
        return builtin_workload_kinds().at(loaded.workload_kind).value->check(loaded);
      },
      py::arg("scenario"), py::arg("set") = std::vector<std::string>{},
      "Reads and checks a scenario as dnnsim validate does; returns what would run, raises InputError otherwise.");
  m.def("plan", &plan, py::arg("scenario"), py::arg("planner") = py::none(),
        py::arg("set") = std::vector<std::string>{},
        "The plan of a pipeline workload (summary.json's 'pipeline' section), as dnnsim plan; nothing simulated.");
  m.def("list", &list, py::arg("what") = py::none(),
        "Entries of a catalog or registry: gpus, workloads, collectives, models, schedules, planners, spmd, graphs, "
        "schedulers, placements, speed-models, sync-policies, admissions, job-traces, partitioners, samplers, "
        "orderings, caches or interference; with no argument, each of them with what it holds and its entry count.");
  m.attr("__version__") = DNNSIM_VERSION;
}
