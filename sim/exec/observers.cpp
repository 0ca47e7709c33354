#include "sim/exec/observers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dnnsim {

TimelineRecorder::TimelineRecorder(std::size_t task_count)
    : start_(task_count, std::numeric_limits<double>::quiet_NaN()),
      end_(task_count, std::numeric_limits<double>::quiet_NaN()) {}

MemoryTracker::MemoryTracker(const TaskGraph& graph, std::size_t device_count)
    : graph_(&graph),
      takes_(graph.tasks().size()),
      releases_(graph.tasks().size()),
      in_use_(device_count, 0.0),
      peak_(device_count, 0.0) {
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    takes_[id] = graph.task(id).alloc_bytes.value() > 0;
    releases_[id] = graph.task(id).free_bytes.value() > 0;
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

LinkTrafficRecorder::LinkTrafficRecorder(const PlatformLayout& layout, std::vector<std::uint32_t> gpu_of_device,
                                         bool keep_flows)
    : layout_(&layout),
      gpu_of_device_(std::move(gpu_of_device)),
      keep_flows_(keep_flows),
      bytes_up_(layout.links.size(), 0.0),
      bytes_down_(layout.links.size(), 0.0) {}

const Route& LinkTrafficRecorder::route(DeviceId src, DeviceId dst) {
  auto it = routes_.find({src, dst});
  if (it == routes_.end()) it = routes_.emplace(std::pair{src, dst}, layout_->gpu_route(gpu_of_device_[src], gpu_of_device_[dst])).first;
  return it->second;
}

void LinkTrafficRecorder::on_transfer(TaskId /*task*/, DeviceId src, DeviceId dst, double bytes, double start,
                                      double end) {
  for (const Hop& hop : route(src, dst)) (hop.up ? bytes_up_ : bytes_down_)[hop.link] += bytes;
  if (keep_flows_) flows_.push_back(Flow{src, dst, bytes, start, end});
}

}  // namespace dnnsim
