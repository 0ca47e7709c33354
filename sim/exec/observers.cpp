#include "sim/exec/observers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dnnsim {

TimelineRecorder::TimelineRecorder(std::size_t task_count)
    : start_(task_count, std::numeric_limits<double>::quiet_NaN()),
      end_(task_count, std::numeric_limits<double>::quiet_NaN()) {}

void TimelineRecorder::on_tasks_appended(const TaskGraph& graph, TaskId /*first*/) {
  start_.resize(graph.tasks().size(), std::numeric_limits<double>::quiet_NaN());
  end_.resize(graph.tasks().size(), std::numeric_limits<double>::quiet_NaN());
}

MemoryTracker::MemoryTracker(const TaskGraph& graph, std::size_t device_count)
    : graph_(&graph), in_use_(device_count, 0.0), peak_(device_count, 0.0) {
  index_tasks(0);
}

void MemoryTracker::on_tasks_appended(const TaskGraph& graph, TaskId first) {
  graph_ = &graph;
  index_tasks(first);
}

void MemoryTracker::index_tasks(TaskId first) {
  takes_.resize(graph_->tasks().size());
  releases_.resize(graph_->tasks().size());
  for (TaskId id = first; id < graph_->tasks().size(); ++id) {
    takes_[id] = graph_->task(id).alloc_bytes.value() > 0;
    releases_[id] = graph_->task(id).free_bytes.value() > 0;
  }
}

void MemoryTracker::on_task_start(TaskId task, double /*now*/) {
  if (!takes_[task]) return;
  const Task& t = graph_->task(task);
  for (DeviceId d : t.devices()) {
    in_use_[d] += t.alloc_bytes.value();
    peak_[d] = std::max(peak_[d], in_use_[d]);
  }
}

void MemoryTracker::on_task_end(TaskId task, double /*now*/) {
  if (!releases_[task]) return;
  const Task& t = graph_->task(task);
  for (DeviceId d : t.devices()) in_use_[d] -= t.free_bytes.value();
}

LinkTrafficRecorder::LinkTrafficRecorder(const PlatformLayout& layout, const TaskGraph& graph, DeviceTopology topology,
                                         std::vector<std::uint32_t> gpu_of_device, bool keep_flows)
    : layout_(&layout),
      graph_(&graph),
      topology_(std::move(topology)),
      gpu_of_device_(std::move(gpu_of_device)),
      keep_flows_(keep_flows),
      bytes_up_(layout.links.size(), 0.0),
      bytes_down_(layout.links.size(), 0.0),
      ranks_(graph.devices().size()) {
  index_mirrored(0);
}

void LinkTrafficRecorder::on_tasks_appended(const TaskGraph& graph, TaskId first) {
  graph_ = &graph;
  index_mirrored(first);
}

void LinkTrafficRecorder::index_mirrored(TaskId first) {
  mirrored_.resize(graph_->tasks().size(), false);
  for (TaskId id = first; id < graph_->tasks().size(); ++id) {
    const auto* collective = std::get_if<Collective>(&graph_->task(id).op);
    if (collective == nullptr || !(collective->mirrored || collective->alone)) continue;
    mirrored_[id] = true;
    if (collective->mirrored) ranks_[collective->group.front()] = collective->group;
  }
  // A group first seen now changes which flows have translates.
  translated_routes_.clear();
}

bool LinkTrafficRecorder::has_translates(DeviceId src, DeviceId dst) const {
  return ranks_[src].size() > 1 && ranks_[src].size() == ranks_[dst].size();
}

const Route& LinkTrafficRecorder::route(DeviceId src, DeviceId dst) {
  const std::uint64_t key = (std::uint64_t{src} << 32) | dst;
  auto it = routes_.find(key);
  if (it == routes_.end())
    it = routes_.emplace(key, layout_->gpu_route(gpu_of_device_[src], gpu_of_device_[dst])).first;
  return it->second;
}

const Route& LinkTrafficRecorder::translated_route(DeviceId src, DeviceId dst) {
  const std::uint64_t key = (std::uint64_t{src} << 32) | dst;
  auto it = translated_routes_.find(key);
  if (it == translated_routes_.end()) {
    Route hops;
    for (std::size_t r = 0; r < ranks_[src].size(); ++r) {
      const Route& leg = route(ranks_[src][r], ranks_[dst][r]);
      hops.insert(hops.end(), leg.begin(), leg.end());
    }
    it = translated_routes_.emplace(key, std::move(hops)).first;
  }
  return it->second;
}

void LinkTrafficRecorder::add(const Route& route, double bytes) {
  for (const Hop& hop : route) (hop.up ? bytes_up_ : bytes_down_)[hop.link] += bytes;
}

void LinkTrafficRecorder::on_transfer(TaskId /*task*/, DeviceId src, DeviceId dst, double bytes, double start,
                                      double end) {
  if (!has_translates(src, dst)) {
    add(route(src, dst), bytes);
    if (keep_flows_) flows_.push_back(Flow{src, dst, bytes, start, end});
    return;
  }
  add(translated_route(src, dst), bytes);
  if (keep_flows_)
    for (std::size_t r = 0; r < ranks_[src].size(); ++r)
      flows_.push_back(Flow{ranks_[src][r], ranks_[dst][r], bytes, start, end});
}

void LinkTrafficRecorder::on_task_start(TaskId task, double now) {
  if (keep_flows_ && mirrored_[task]) mirrored_start_[task] = now;
}

void LinkTrafficRecorder::on_task_end(TaskId task, double now) {
  if (!mirrored_[task]) return;
  const auto& collective = std::get<Collective>(graph_->task(task).op);
  // An alone collective is group[0]'s part of an exchange every member issues, its group rotated so
  // that it leads (planners/schedules/step_communication.cpp). Its flows are those it sends in the one
  // plan all the members' parts belong to: the rotation that starts at the group's smallest device.
  // Planned from each member's own rotation, a channelled ring (whose channels follow the members'
  // order on each node) sent every member's share across nodes to the same GPU of the next node.
  std::vector<DeviceId> group = collective.group;
  if (collective.alone) std::rotate(group.begin(), std::min_element(group.begin(), group.end()), group.end());
  auto [shape, added] = collective_flows_.try_emplace(CollectiveShape{
      collective.kind, collective.algorithm, collective.size.value(), collective.root, collective.copies, group});
  if (added) {
    Collective planned = collective;
    planned.group = std::move(group);
    // Only the volumes are used: any route cost gives the same flows. An all-to-all has no flow
    // form; its steps carry the same volumes.
    if (planned.kind == CollectiveKind::all_to_all) {
      for (const CollectiveStep& step : expand_collective(planned, topology_).steps)
        shape->second.push_back(CollectiveFlow{step.src, step.dst, step.size, Seconds(0)});
    } else {
      const CollectiveFlowPlan plan = plan_collective_flows(planned, topology_, [](DeviceId, DeviceId) {
        return RouteCost{Seconds(0), BytesPerSecond(1)};
      });
      for (const std::vector<CollectiveFlow>& phase : plan.phases)
        shape->second.insert(shape->second.end(), phase.begin(), phase.end());
    }
  }
  // The trace's counters spread each flow over the collective: its phases' timing is not simulated.
  const double start = keep_flows_ ? mirrored_start_[task] : now;
  for (const CollectiveFlow& flow : shape->second) {
    // An alone collective is group[0]'s part of an exchange each member issues: its flows only.
    if (collective.alone && flow.src != collective.group.front()) continue;
    add(route(flow.src, flow.dst), flow.size.value());
    if (keep_flows_) flows_.push_back(Flow{flow.src, flow.dst, flow.size.value(), start, now});
  }
  mirrored_start_.erase(task);
}

IterationBarrier::IterationBarrier(const TaskGraph& graph)
    : mutex_(simgrid::s4u::Mutex::create()), iteration_ended_(simgrid::s4u::ConditionVariable::create()) {
  count_tasks(graph, 0);
}

void IterationBarrier::count_tasks(const TaskGraph& graph, TaskId first) {
  for (TaskId id = first; id < graph.tasks().size(); ++id) {
    const std::uint32_t iteration = graph.task(id).iteration;
    iteration_of_task_.push_back(iteration);
    if (iteration >= task_count_.size()) {
      task_count_.resize(iteration + 1, 0);
      finished_count_.resize(iteration + 1, 0);
    }
    ++task_count_[iteration];
  }
}

void IterationBarrier::on_tasks_appended(const TaskGraph& graph, TaskId first) { count_tasks(graph, first); }

void IterationBarrier::on_task_end(TaskId task, double /*now*/) {
  const std::uint32_t iteration = iteration_of_task_[task];
  if (++finished_count_[iteration] == task_count_[iteration]) iteration_ended_->notify_all();
}

bool IterationBarrier::iteration_done(std::uint32_t iteration) const {
  return iteration >= task_count_.size() || finished_count_[iteration] == task_count_[iteration];
}

void IterationBarrier::wait_until_iteration_done(std::uint32_t iteration) {
  std::unique_lock lock(*mutex_);
  iteration_ended_->wait(lock, [&] { return iteration_done(iteration); });
}

}  // namespace dnnsim
