// The TaskGraph-file workload kind (`workload.kind: taskgraph`, docs/taskgraph.md): a TaskGraph
// written by another tool or by `dnnsim`, simulated as given; its devices must be GPUs of the cluster.
#pragma once

#include <memory>
#include <string>

#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

struct TaskGraphWorkload : WorkloadSpec {
  std::string path;  // resolved against the scenario's folder
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_taskgraph_kind();

}  // namespace dnnsim
