// The `kind: gnn` workload section read into a GnnWorkload (docs/scenarios.md, "gnn"): the graph (a
// file or a generator), features, partitioner, sampling, cache, model, CPU pipeline and costs, every
// problem located and reported at once.
#pragma once

#include <memory>

#include "sim/workloads/gnn/gnn_kind.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

[[nodiscard]] std::shared_ptr<GnnWorkload> read_gnn_workload(WorkloadParseContext& ctx);

}  // namespace dnnsim
