// Every built-in workload kind, registered explicitly (static self-registration would be dropped by
// the static library). A new kind: its folder under sim/workloads/ and one line here.
#include "models/common/builtin_registry.hpp"
#include "sim/workloads/chakra/chakra_kind.hpp"
#include "sim/workloads/cluster/cluster_kind.hpp"
#include "sim/workloads/data_parallel/data_parallel_kind.hpp"
#include "sim/workloads/gnn/gnn_kind.hpp"
#include "sim/workloads/jobs/jobs_kind.hpp"
#include "sim/workloads/parameter_server/parameter_server_kind.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "sim/workloads/spmd/spmd_kind.hpp"
#include "sim/workloads/taskgraph/taskgraph_kind.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {
namespace {

void register_builtin_workload_kinds(WorkloadKindRegistry& r) {
  r.add("chakra", "MLCommons Chakra execution traces, one file per rank (docs/chakra.md)",
        "Sridharan et al., Chakra, arXiv:2305.14516, 2023", make_chakra_kind());
  r.add("cluster",
        "a job stream (trace or generator) under a job scheduler and placement policy, job level or with the network",
        "Tiresias NSDI'19, Gavel OSDI'20, Pollux OSDI'21 (docs/cluster.md)", make_cluster_kind());
  r.add("data_parallel", "every GPU holds the model; bucketed gradient all-reduce overlapped with backward (DDP)",
        "Li et al., PyTorch Distributed, VLDB 2020", make_data_parallel_kind());
  r.add("gnn",
        "sampled GNN training: graph-store servers sample and gather on CPU cores, a feature cache, GPUs train "
        "(pipelined)",
        "Liu et al., BGL, NSDI'23; Zheng et al., DistDGL, IA3'20 (docs/gnn.md)", make_gnn_kind());
  r.add("jobs",
        "several training jobs on disjoint nodes of one cluster, simulated together: their traffic contends on "
        "shared links",
        "dnnsim; the multi-tenant setting of Gandiva OSDI'18 and Gavel OSDI'20 at operation level", make_jobs_kind());
  r.add("parameter_server", "workers push and pull through parameter servers under a sync policy until a target loss",
        "Li et al., OSDI'14 (parameter server); Hu, Wang, Wu, ADSP, AAAI'20 (docs/parameter-server.md)",
        make_parameter_server_kind());
  r.add("pipeline", "model cut into stages by a planner or by hand, run under a pipeline schedule (× data parallel)",
        "GPipe (Huang 2019), PipeDream (Narayanan 2019), DAPPLE (Fan 2021)", make_pipeline_kind());
  r.add("spmd", "operator graph sharded op by op over all GPUs (HAP-like, SBP-like, DP, Megatron TP), uneven shards",
        "Zhang et al., HAP, EuroSys'24; Yuan et al., OneFlow SBP, arXiv 2110.15032", make_spmd_kind());
  r.add("taskgraph", "a TaskGraph JSON file simulated as given", "dnnsim (docs/taskgraph.md)", make_taskgraph_kind());
}

}  // namespace

const WorkloadKindRegistry& builtin_workload_kinds() {
  return builtin_registry<WorkloadKindRegistry, register_builtin_workload_kinds>("workload kind");
}

}  // namespace dnnsim
