// Writes a TaskGraph as JSON (see task_graph_json.hpp; reading is task_graph_json.cpp).
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "models/common/diagnostics.hpp"
#include "models/program/task_graph_json.hpp"

namespace dnnsim {
namespace {

// The JSON value of a raw amount: an integer when the double is one exactly, so that "1000000"
// stays "1000000" rather than "1000000.0"; otherwise nlohmann's shortest round-trip form.
nlohmann::ordered_json amount(double value) {
  constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53
  if (std::isfinite(value) && std::trunc(value) == value && std::fabs(value) < kExactIntegerLimit)
    return static_cast<std::int64_t>(value);
  return value;
}

const std::string& name_at(const std::vector<std::string>& names, std::uint32_t index, std::string_view what,
                           TaskId task) {
  if (index >= names.size())
    throw std::invalid_argument(fmt::format("dump_task_graph: task {} refers to {} index {}, but the graph has {}",
                                            task, what, index, names.size()));
  return names[index];
}

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
// Aggregate deduction is C++20, but clang 14 (the fuzz build) lacks it.
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

// One task as an object, keys in a fixed order: id and kind, where it runs, the schedule keys
// (stream, phase, iteration, label), the amounts, then dependencies and memory. Compute tasks put
// the schedule keys before their amounts, as the example of docs/taskgraph.md does.
nlohmann::ordered_json task_json(const TaskGraph& graph, TaskId id) {
  using nlohmann::ordered_json;
  const Task& task = graph.task(id);
  ordered_json object;
  const auto device_name = [&](DeviceId device) -> const std::string& {
    return name_at(graph.devices(), device, "device", id);
  };
  const auto schedule = [&] {
    object["stream"] = name_at(graph.streams(), task.stream, "stream", id);
    object["phase"] = phase_name(task.phase);
    object["iteration"] = task.iteration;
    object["label"] = task.label;
  };

  object["id"] = id;
  std::visit(Overloaded{
                 [&](const Compute& compute) {
                   object["kind"] = "compute";
                   object["device"] = device_name(compute.device);
                   schedule();
                   object["flops"] = amount(compute.flops.value());
                   object["bytes_accessed"] = amount(compute.bytes_accessed.value());
                   object["dtype"] = dtype_name(compute.dtype);
                   object["kernel"] = layer_kind_name(compute.kernel);
                   if (compute.gemm.known() && compute.gemm.op == GemmOp::nn)
                     object["gemm"] = {compute.gemm.m, compute.gemm.n, compute.gemm.k};
                   else if (compute.gemm.known())
                     object["gemm"] = {compute.gemm.m, compute.gemm.n, compute.gemm.k,
                                       std::string(gemm_op_name(compute.gemm.op))};
                   if (compute.launches != 1) object["launches"] = compute.launches;
                   if (compute.measured_time) {
                     object["measured_time_s"] = amount(compute.measured_time->value());
                     object["measured_on"] = compute.measured_on;
                   }
                 },
                 [&](const Transfer& transfer) {
                   object["kind"] = "transfer";
                   object["src"] = device_name(transfer.src);
                   object["dst"] = device_name(transfer.dst);
                   object["size_bytes"] = amount(transfer.size.value());
                   if (transfer.host != HostCopy::none) object["host_copy"] = host_copy_name(transfer.host);
                   schedule();
                 },
                 [&](const Collective& collective) {
                   object["kind"] = "collective";
                   object["collective"] = collective_kind_name(collective.kind);
                   ordered_json group = ordered_json::array();
                   for (DeviceId device : collective.group) group.push_back(device_name(device));
                   object["group"] = std::move(group);
                   object["size_bytes"] = amount(collective.size.value());
                   object["algorithm"] = collective.algorithm;
                   if (collective.kind == CollectiveKind::broadcast) object["root"] = device_name(collective.root);
                   if (collective.fidelity) object["fidelity"] = collective_fidelity_name(*collective.fidelity);
                   if (collective.calls != 1) object["calls"] = collective.calls;
                   if (collective.mirrored) object["mirrored"] = true;
                   if (collective.alone) object["alone"] = true;
                   if (collective.copies != 1) object["copies"] = collective.copies;
                   schedule();
                 },
             },
             task.op);
  object["deps"] = task.deps;
  object["alloc_bytes"] = amount(task.alloc_bytes.value());
  object["free_bytes"] = amount(task.free_bytes.value());
  return object;
}

}  // namespace

std::string dump_task_graph(const TaskGraph& graph) {
  nlohmann::ordered_json document;
  document["format"] = kTaskGraphFormat;
  document["version"] = kTaskGraphVersion;
  document["devices"] = graph.devices();
  document["streams"] = graph.streams();
  if (!graph.mirrors().empty()) {
    nlohmann::ordered_json mirrors = nlohmann::ordered_json::object();
    for (const auto& [copy, source] : graph.mirrors()) mirrors[graph.devices().at(copy)] = graph.devices().at(source);
    document["mirrors"] = std::move(mirrors);
  }
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (TaskId id = 0; id < graph.tasks().size(); ++id) tasks.push_back(task_json(graph, id));
  document["tasks"] = std::move(tasks);
  // Invalid UTF-8 in a name or label is replaced (U+FFFD) rather than thrown on.
  return document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void save_task_graph(const TaskGraph& graph, const std::string& path) {
  const std::string text = dump_task_graph(graph);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(SourceLocation{path, 0, 0}, fmt::format("cannot write file: {}", std::strerror(errno)));
  out << text;
  out.close();
  if (!out) throw InputError(SourceLocation{path, 0, 0}, "cannot write file: write failed");
}

}  // namespace dnnsim
