// Symmetric windows of data-parallel replicas (docs/collectives.md, "Symmetric windows"): when
// translating every stage's replicas by k whole nodes maps the platform and the traffic onto
// themselves, the replicas on a stage's first k nodes are simulated and the others mirror them
// (Collective::copies, TaskGraph::set_mirror), which the pipeline and data-parallel kinds offer as
// `data_parallel_fidelity: replicas | window | auto`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/common/yaml_reader.hpp"
#include "models/program/task_graph.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

// `replicas`: every replica simulated; `window`: a window, an error where it would not be exact;
// `automatic` (YAML `auto`): a window where exact, every replica elsewhere, and the report says why.
enum class ReplicaFidelity { replicas, window, automatic };

// The window of `stages` (each the devices of one stage's replicas, in replica order: groups of
// `ranks` consecutive GPUs), each replica taking micro_batch / replicas samples: the replicas per
// stage that data_parallel_fidelity: window simulates, or the reasons no window is exact. Exact when
// the stages have the same number of replicas, each with the same share of a micro-batch, every
// stage fills whole consecutive nodes of one node type, a replica's tensor × context parallel group
// (its `ranks`) stays inside a node, the nodes meet on one non-blocking switch, and the all-reduce is
// a ring or hierarchical (whose rings wrap within the window). The window is the stage's replicas
// on k nodes, k the smallest divisor ≥ 2 of its n nodes below n (none: no window saves anything).
struct ReplicaWindow {
  int replicas = 0;
  std::vector<std::string> problems;
};
// `batch_name` names the samples split in messages ("a micro-batch", "the global batch").
[[nodiscard]] ReplicaWindow replica_window(const Cluster& cluster, const std::vector<std::vector<DeviceId>>& stages,
                                           int ranks, int micro_batch, const std::string& collective_algorithm,
                                           const std::string& batch_name);

// What replica_window checks without the stages' placement: the interconnect and the algorithm.
[[nodiscard]] std::vector<std::string> replica_window_platform_problems(const Cluster& cluster,
                                                                        const std::string& collective_algorithm);

// Unset, `data_parallel_fidelity` and `tensor_parallel_fidelity` are `auto` on clusters of more than
// this many GPUs, and every GPU is simulated on smaller ones: mirroring is exact where `auto` takes
// it, and it is what makes a 1,024–16,384-GPU run take seconds instead of minutes
// (docs/performance.md), while the reports of smaller runs keep every GPU's tasks and trace, which
// users read GPU by GPU.
inline constexpr std::size_t kMirroringByDefaultAbove = 256;
// Whether `map` leaves the fidelity `key` unset on a cluster above that size: it is then `auto`.
[[nodiscard]] bool mirrors_by_default(MapReader& map, std::string_view key, const Cluster& cluster);

// Reads `data_parallel_fidelity: replicas | window | auto` from `map` (unset: kMirroringByDefaultAbove);
// for `window`, the platform problems are errors at the key.
[[nodiscard]] ReplicaFidelity read_replica_fidelity(YamlReader& reader, MapReader& map, const Cluster& cluster,
                                                    const std::string& collective_algorithm);

// Why a scenario asking for `data_parallel_fidelity: window` cannot have a network section (both
// kinds' WorkloadSpec::network_unsupported).
inline constexpr std::string_view kWindowRefusesNetwork =
    "data_parallel_fidelity: window simulates a window of the data-parallel replicas, so it cannot apply network "
    "conditions, failures or background flows to the others; use data_parallel_fidelity: replicas or auto";

// Why the scenario's network section rules out mirroring `what` (link conditions, failures and
// background flows would touch the mirrored devices' links), or empty. Shared by the data-parallel
// window ("replicas'") and mirrored tensor-parallel ranks ("GPUs'").
[[nodiscard]] std::string network_breaks_mirroring(const NetworkConditions& network, std::string_view what);

// Whether nodes meet on one non-blocking switch: the one inter-node fabric under which devices on
// different nodes are translates of one another (a backplane or spine links are shared by all).
[[nodiscard]] bool one_non_blocking_switch(const Cluster& cluster);

// The message of a window refused for `problem`.
[[nodiscard]] std::string window_refused(const std::string& problem);

}  // namespace dnnsim
