#include "models/program/task_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "models/common/enum_names.hpp"

namespace dnnsim {
namespace {

// Indexed by the enum values, in declaration order.
constexpr std::array<std::string_view, 7> kPhaseNames{"forward",       "backward", "weight_grad", "optimizer",
                                                      "communication", "other",    "recompute"};
constexpr std::array<std::string_view, kDtypeCount> kDtypeNames{"fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8"};
static_assert(!kDtypeNames.back().empty(), "a name for every Dtype");
constexpr std::array<std::string_view, 5> kCollectiveNames{"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                                           "all_to_all"};
constexpr std::array<std::string_view, 2> kFidelityNames{"step", "flow"};
constexpr std::array<std::string_view, 3> kHostCopyNames{"none", "to_host", "from_host"};
constexpr std::array<std::string_view, 5> kGemmOpNames{"nn", "nt", "tn", "backward", "backward_nt"};

}  // namespace

std::string_view phase_name(Phase phase) { return kPhaseNames.at(static_cast<std::size_t>(phase)); }
std::optional<Phase> phase_from_name(std::string_view name) { return enum_from_name<Phase>(kPhaseNames, name); }
std::vector<std::string> phase_names() { return enum_names(kPhaseNames); }

std::string_view dtype_name(Dtype dtype) { return kDtypeNames.at(static_cast<std::size_t>(dtype)); }
std::optional<Dtype> dtype_from_name(std::string_view name) { return enum_from_name<Dtype>(kDtypeNames, name); }
std::vector<std::string> dtype_names() { return enum_names(kDtypeNames); }

double dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
    case Dtype::tf32:
      return 4;
    case Dtype::fp16:
    case Dtype::bf16:
      return 2;
    case Dtype::fp8:
    case Dtype::mxfp8:
      return 1;
  }
  return 4;
}

std::string_view collective_kind_name(CollectiveKind kind) {
  return kCollectiveNames.at(static_cast<std::size_t>(kind));
}
std::optional<CollectiveKind> collective_kind_from_name(std::string_view name) {
  return enum_from_name<CollectiveKind>(kCollectiveNames, name);
}
std::vector<std::string> collective_kind_names() { return enum_names(kCollectiveNames); }

std::string_view collective_fidelity_name(CollectiveFidelity fidelity) {
  return kFidelityNames.at(static_cast<std::size_t>(fidelity));
}
std::optional<CollectiveFidelity> collective_fidelity_from_name(std::string_view name) {
  return enum_from_name<CollectiveFidelity>(kFidelityNames, name);
}
std::vector<std::string> collective_fidelity_names() { return enum_names(kFidelityNames); }

std::string_view host_copy_name(HostCopy copy) { return kHostCopyNames.at(static_cast<std::size_t>(copy)); }
std::optional<HostCopy> host_copy_from_name(std::string_view name) {
  return enum_from_name<HostCopy>(kHostCopyNames, name);
}
std::vector<std::string> host_copy_names() { return enum_names(kHostCopyNames); }

std::string_view gemm_op_name(GemmOp op) { return kGemmOpNames.at(static_cast<std::size_t>(op)); }
std::optional<GemmOp> gemm_op_from_name(std::string_view name) { return enum_from_name<GemmOp>(kGemmOpNames, name); }
std::vector<std::string> gemm_op_names() { return enum_names(kGemmOpNames); }

std::vector<DeviceId> Task::devices() const {
  struct Visitor {
    std::vector<DeviceId> operator()(const Compute& c) const { return {c.device}; }
    std::vector<DeviceId> operator()(const Transfer& t) const { return {t.src}; }
    std::vector<DeviceId> operator()(const Collective& c) const {
      return c.mirrored || c.alone ? std::vector<DeviceId>{c.group.front()} : c.group;
    }
  };
  return std::visit(Visitor{}, op);
}

void TaskGraph::set_mirror(DeviceId copy, DeviceId source) { mirrors_.emplace_back(copy, source); }

DeviceId TaskGraph::add_device(std::string name) {
  devices_.push_back(std::move(name));
  return static_cast<DeviceId>(devices_.size() - 1);
}

StreamId TaskGraph::add_stream(std::string name) {
  streams_.push_back(std::move(name));
  return static_cast<StreamId>(streams_.size() - 1);
}

StreamId TaskGraph::stream(const std::string& name) {
  auto it = std::find(streams_.begin(), streams_.end(), name);
  if (it != streams_.end()) return static_cast<StreamId>(it - streams_.begin());
  return add_stream(name);
}

TaskId TaskGraph::add(Task task, const SourceLocation& origin) {
  tasks_.push_back(std::move(task));
  if (!origin.file.empty() || origin.line != 0 || !origins_.empty()) {
    origins_.resize(tasks_.size());
    origins_.back() = origin;
  }
  return static_cast<TaskId>(tasks_.size() - 1);
}

void TaskGraph::drop_dependencies() {
  for (Task& task : tasks_) std::vector<TaskId>().swap(task.deps);
}

SourceLocation TaskGraph::origin(TaskId id) const {
  return id < origins_.size() ? SourceLocation(origins_[id]) : SourceLocation{};
}

std::optional<DeviceId> TaskGraph::device_by_name(std::string_view name) const {
  auto it = std::find(devices_.begin(), devices_.end(), name);
  if (it == devices_.end()) return std::nullopt;
  return static_cast<DeviceId>(it - devices_.begin());
}

std::uint32_t TaskGraph::iteration_count() const {
  std::uint32_t count = 0;
  for (const Task& task : tasks_) count = std::max(count, task.iteration + 1);
  return count;
}

std::vector<Diagnostic> TaskGraph::validate() const {
  std::vector<Diagnostic> problems;
  const auto report = [&](const Task& task, TaskId id, std::string message) {
    problems.push_back(Diagnostic{origin(id), fmt::format("task {} ('{}'): {}", id, task.label, message)});
  };
  const auto check_device = [&](const Task& task, TaskId id, DeviceId device, std::string_view role) {
    if (device >= devices_.size())
      report(task, id, fmt::format("{} device index {} is out of range ({} devices)", role, device, devices_.size()));
  };

  for (TaskId id = 0; id < tasks_.size(); ++id) {
    const Task& task = tasks_[id];
    if (task.stream >= streams_.size())
      report(task, id, fmt::format("stream index {} is out of range ({} streams)", task.stream, streams_.size()));
    for (TaskId dep : task.deps) {
      if (dep >= tasks_.size()) report(task, id, fmt::format("depends on task {}, which does not exist", dep));
      if (dep == id) report(task, id, "depends on itself");
    }
    if (const auto* compute = std::get_if<Compute>(&task.op)) {
      check_device(task, id, compute->device, "compute");
    } else if (const auto* transfer = std::get_if<Transfer>(&task.op)) {
      check_device(task, id, transfer->src, "source");
      check_device(task, id, transfer->dst, "destination");
      if (transfer->host == HostCopy::none && transfer->src == transfer->dst)
        report(task, id, "a transfer needs two different devices");
      if (transfer->host != HostCopy::none && transfer->src != transfer->dst)
        report(task, id, "a host copy has one device, its source and destination");
    } else if (const auto* collective = std::get_if<Collective>(&task.op)) {
      if (collective->group.size() < 2) report(task, id, "a collective needs a group of at least two devices");
      std::set<DeviceId> seen;
      for (DeviceId device : collective->group) {
        check_device(task, id, device, "group");
        if (!seen.insert(device).second) report(task, id, fmt::format("device {} appears twice in the group", device));
      }
      if (collective->kind == CollectiveKind::broadcast && !seen.contains(collective->root))
        report(task, id, "the broadcast root is not in the group");
      if (collective->copies < 1) report(task, id, "a collective stands for at least one copy of its group");
    }
  }
  std::set<DeviceId> copies;
  for (const auto& [copy, source] : mirrors_) {
    const auto where = fmt::format("device mirror {} → {}", copy, source);
    if (copy >= devices_.size() || source >= devices_.size())
      problems.push_back(Diagnostic{SourceLocation{},
                                    fmt::format("{}: device index out of range ({} devices)", where, devices_.size())});
    else if (copy == source)
      problems.push_back(Diagnostic{SourceLocation{}, fmt::format("{}: a device cannot mirror itself", where)});
    else if (!copies.insert(copy).second)
      problems.push_back(
          Diagnostic{SourceLocation{}, fmt::format("{}: device {} already mirrors another", where, copy)});
  }
  if (!problems.empty()) return problems;

  // Cycle detection by Kahn's algorithm over the dependencies plus the stream order (a task waits
  // for the previous task of each of its (device, stream) queues, so an order that contradicts the
  // dependencies would deadlock). A task left over lies on or behind a cycle; one cycle is then
  // walked from a leftover task so that the message names it.
  std::vector<std::vector<TaskId>> predecessors(tasks_.size());
  std::map<std::pair<DeviceId, StreamId>, TaskId> last_on_stream;
  for (TaskId id = 0; id < tasks_.size(); ++id) {
    predecessors[id] = tasks_[id].deps;
    for (DeviceId device : tasks_[id].devices()) {
      auto [it, first] = last_on_stream.try_emplace({device, tasks_[id].stream}, id);
      if (!first) {
        predecessors[id].push_back(it->second);
        it->second = id;
      }
    }
  }
  std::vector<std::uint32_t> pending(tasks_.size());
  std::vector<std::vector<TaskId>> successors(tasks_.size());
  for (TaskId id = 0; id < tasks_.size(); ++id) {
    for (TaskId before : predecessors[id]) successors[before].push_back(id);
    pending[id] = static_cast<std::uint32_t>(predecessors[id].size());
  }
  std::vector<TaskId> ready;
  for (TaskId id = 0; id < tasks_.size(); ++id)
    if (pending[id] == 0) ready.push_back(id);
  std::size_t done = 0;
  while (!ready.empty()) {
    const TaskId id = ready.back();
    ready.pop_back();
    ++done;
    for (TaskId next : successors[id])
      if (--pending[next] == 0) ready.push_back(next);
  }
  if (done == tasks_.size()) return problems;

  TaskId start = 0;
  while (pending[start] == 0) ++start;
  // Follow unresolved predecessors until a task repeats: that loop is a cycle.
  std::vector<TaskId> path;
  std::vector<int> position(tasks_.size(), -1);
  TaskId current = start;
  while (position[current] < 0) {
    position[current] = static_cast<int>(path.size());
    path.push_back(current);
    for (TaskId before : predecessors[current])
      if (pending[before] > 0) {
        current = before;
        break;
      }
  }
  std::vector<std::string> names;
  for (std::size_t i = static_cast<std::size_t>(position[current]); i < path.size(); ++i)
    names.push_back(fmt::format("{} ('{}')", path[i], tasks_[path[i]].label));
  names.push_back(fmt::format("{} ('{}')", current, tasks_[current].label));
  report(tasks_[current], current,
         fmt::format("dependency cycle (dependencies and stream order): {}", fmt::join(names, " waits for ")));
  return problems;
}

}  // namespace dnnsim
