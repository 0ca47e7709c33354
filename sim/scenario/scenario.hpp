// A scenario: the cluster, the network conditions, the workload, run settings, outputs and
// expectations, as read from YAML (docs/scenarios.md describes every key).
//
// Reading goes parse → validate → build: `load_scenario` reads and checks the whole file and
// reports every problem at once (InputError, "file:line:col: error: …"); what it returns is
// consistent (every name resolves, every quantity has its unit) and needs no further checks.
// This header is pure C++ (no SimGrid): `dnnsim validate` and the unit tests use it without an engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/common/diagnostics.hpp"
#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/task_graph.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "traces/network/bandwidth_schedule.hpp"

namespace YAML {
class Node;
}

namespace dnnsim {

// ---- cluster -------------------------------------------------------------------------------

enum class IntraNodeFabric {
  nvswitch,     // every GPU on its own NVLink port of a switch: GPU i → j crosses port i up, port j down
  nvlink_mesh,  // a direct NVLink between every pair of GPUs (e.g. 4-GPU boards, DGX-1 approximated)
  pcie,         // every GPU on a PCIe x16 link to the root complex; optional shared host bridge
};

struct NodeType {
  std::string name;
  GpuSpec gpu;                      // catalog entry with the scenario's overrides applied
  double compute_efficiency = 1.0;  // fraction of peak FLOP/s and memory bandwidth reached by kernels
  // Calibrated efficiency curves for this GPU (scenario key `calibration`); when present they
  // replace compute_efficiency in the roofline (models/cost/compute_cost.hpp).
  std::shared_ptr<const CalibrationTable> calibration;
  int gpus_per_node = 1;
  IntraNodeFabric fabric = IntraNodeFabric::nvswitch;
  BytesPerSecond gpu_link_bandwidth;  // per direction: NVSwitch port, NVLink pair, or PCIe link
  Seconds gpu_link_latency;
  BytesPerSecond pcie_bandwidth;  // GPU ↔ NIC path (per direction)
  Seconds pcie_latency;
  // GPU ↔ its host's memory, per direction: the PCIe link, or the GPU's own host link where the
  // catalog names one (GpuSpec::host_link: NVLink-C2C on GB200/GB300).
  BytesPerSecond host_link_bandwidth;
  Seconds host_link_latency;
  bool own_host_link = false;                           // host_link is a link of its own, not the PCIe link
  std::optional<BytesPerSecond> host_bridge_bandwidth;  // pcie fabric: shared by all GPU↔GPU and GPU↔NIC traffic
  BytesPerSecond nic_bandwidth;
  Seconds nic_latency;
  bool nic_per_gpu = false;  // one NIC per GPU (rail-optimised) instead of one per node
  // `nvlink_domain: N` (GB200/GB300 NVL72 racks: trays of 4 GPUs, 72 in one NVLink switch fabric):
  // the scenario's nodes of this type are read as domains of N GPUs, each one simulated node whose
  // GPUs meet on its NVSwitch (gpus_per_node = N), standing for `domain_nodes` of the scenario's
  // nodes. 1: the node is its own domain.
  int domain_nodes = 1;
  // Host CPU cores (all sockets): where a GNN workload samples and gathers features
  // (sim/workloads/gnn); nullopt when the scenario does not say, and kinds that need it report so.
  std::optional<int> cpu_cores;
  // Memory traffic (bytes read + written per second) the node's CPU sockets sustain together: the
  // resource the gnn kind's measured interference model shares between its stages; nullopt when the
  // scenario does not say.
  std::optional<BytesPerSecond> cpu_memory_bandwidth;
  // Keys of this node type whose values the reader refused (and reported): a workload's check of a
  // figure it needs skips them rather than report the figure missing as well.
  std::vector<std::string> refused;
  [[nodiscard]] bool refused_key(std::string_view key) const {
    return std::find(refused.begin(), refused.end(), key) != refused.end();
  }
};

struct NodeInstance {
  std::string name;      // "node0"
  std::size_t type = 0;  // index into Cluster::node_types
};

enum class InterNodeKind { single_switch, leaf_spine, explicit_links };

struct ExplicitLink {
  std::string name;
  std::string a, b;  // endpoints: node names or switch names
  BytesPerSecond bandwidth;
  Seconds latency;
};

struct ExplicitRoute {
  std::string from, to;            // node names
  std::vector<std::string> links;  // explicit link names, in order from `from` to `to`
};

struct InterNodeNetwork {
  InterNodeKind kind = InterNodeKind::single_switch;
  // single_switch: the switch backplane; nullopt = non-blocking (only the NICs limit traffic)
  std::optional<BytesPerSecond> switch_bandwidth;
  Seconds switch_latency{0};
  // leaf_spine: nodes_per_leaf nodes under each leaf; every leaf has one uplink to each spine of
  // bandwidth nodes_per_leaf·NIC / (oversubscription·spines); a flow between leaves takes spine
  // (src_leaf + dst_leaf + src_node + dst_node) mod spines — a deterministic stand-in for ECMP.
  int nodes_per_leaf = 1;
  int spines = 1;
  double oversubscription = 1.0;
  Seconds uplink_latency{0};
  // explicit_links: any topology; routes not listed take the fewest-hop path (ties: lowest names).
  std::vector<std::string> switches;
  std::vector<ExplicitLink> links;
  std::vector<ExplicitRoute> routes;
};

// Where a GPU of the cluster sits.
struct ClusterGpu {
  std::uint32_t node = 0;  // index into Cluster::nodes
  const NodeType* type = nullptr;
};

struct Cluster {
  std::vector<NodeType> node_types;
  std::vector<NodeInstance> nodes;
  InterNodeNetwork network;

  [[nodiscard]] std::size_t gpu_count() const;
  // "node3/gpu1", in node order then GPU order: the device order of the workload.
  [[nodiscard]] std::vector<std::string> gpu_names() const;
  [[nodiscard]] std::vector<std::uint32_t> node_of_gpu() const;
  // Each of `devices` (GPU names, e.g. a TaskGraph's) located by a hashed lookup (16k-GPU graphs
  // ask for 16k names); empty for a name that is no GPU of the cluster.
  [[nodiscard]] std::vector<std::optional<ClusterGpu>> locate_gpus(const std::vector<std::string>& devices) const;
  [[nodiscard]] const NodeType& type_of(const NodeInstance& node) const { return node_types.at(node.type); }
};

// ---- network conditions --------------------------------------------------------------------

struct ConstantBandwidth {
  BytesPerSecond bandwidth;
};
struct PreemptionSpec {
  Seconds mean_busy;
  Seconds mean_idle;
  double busy_fraction = 0.0;  // share of the nominal bandwidth left while another tenant holds the link
};
// Applies to every link whose name matches `links` (a glob: `node*/nic`, `leaf0/spine*`).
struct LinkCondition {
  std::string links;
  SourceLocation where;
  // A schedule (inline or from a CSV trace) has absolute bandwidths; a preemption process is relative
  // to each link's nominal bandwidth and is drawn independently per link from the run seed.
  std::variant<ConstantBandwidth, BandwidthSchedule, PreemptionSpec> model;
};

struct BackgroundFlow {
  std::string from, to;  // GPU names
  Bytes size;
  Seconds start{0};
  std::optional<Seconds> interval;  // repeat every interval (from start to start) …
  std::optional<int> count;         // … this many times (unbounded: until the workload ends)
};

struct FailureWindow {
  bool is_host = false;
  std::string target;  // glob over link names, or a GPU name
  Seconds from, to;
  SourceLocation where;
};

struct NetworkConditions {
  std::vector<LinkCondition> conditions;
  std::vector<BackgroundFlow> background_flows;
  std::vector<FailureWindow> failures;
  // Other jobs' traffic shares the fabric (a job of the `jobs` workload kind): not read from YAML, set
  // on each job's own view of the scenario so that nothing mirrors GPUs whose links carry it.
  bool shared_with_other_jobs = false;
};

// ---- run, outputs, expectations ------------------------------------------------------------

struct RunSettings {
  int iterations = 1;
  std::uint64_t seed = 1;
  // The workload's collectives (models/program/task_graph.hpp CollectiveFidelity); unset: by group
  // size (effective_collective_fidelity). A TaskGraph collective's own `fidelity` wins.
  std::optional<CollectiveFidelity> collective_fidelity;
  // The most memory the run may take (sim/run/resource_guard.hpp); empty: half of physical memory.
  std::optional<Bytes> memory_budget;
  SourceLocation memory_budget_where;
};

struct Outputs {
  std::string dir;  // empty: out/<scenario name>
  bool tasks_csv = true;
  bool trace = true;
};

enum class Comparison { approx, at_most, at_least };

struct Expectation {
  std::string metric;  // dotted path into summary.json: "mean.iteration_time_s"
  Comparison comparison = Comparison::approx;
  double value = 0.0;
  double tolerance = 0.0;  // absolute, or relative when `relative`
  bool relative = false;
  std::string source;
  // A target the simulator is known to miss (a paper's number it does not reproduce): the reason and
  // the measured value. Still compared and reported, as "known gap" instead of a miss, so that it is
  // never hidden and never fails a run (docs/regress.md).
  std::string known_gap;
  SourceLocation where;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  Cluster cluster;
  NetworkConditions network;
  // The workload section, read by its kind (sim/workloads/): a name of builtin_workload_kinds() and
  // that kind's spec.
  std::string workload_kind;
  std::shared_ptr<const WorkloadSpec> workload;
  RunSettings run;
  Outputs outputs;
  std::vector<Expectation> expectations;

  // The workload's spec as the kind's own type, or nullptr when the workload is of another kind.
  template <class Spec>
  [[nodiscard]] const Spec* workload_as() const {
    return dynamic_cast<const Spec*>(workload.get());
  }
};

// An edit of the YAML tree applied after the overrides, before the tree is read, so that every
// check sees it (`dnnsim plan --planner`: replace_planner, sim/workloads/pipeline/pipeline_workload.hpp).
using ScenarioTreeEdit = std::function<void(YAML::Node& root)>;

// `overrides` are "dotted.key.path=value" strings applied to the YAML tree before it is read (the
// CLI's --set), then `edit`. @throw InputError with every problem of the file.
[[nodiscard]] Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {},
                                     const ScenarioTreeEdit& edit = {});
// A scenario given as YAML text (the Python module's strings and dicts): `name` stands for the file
// in messages ("<string>:3:7: error: …") and its folder, none for "<string>", is where relative
// paths start; `overrides` and `edit` as for load_scenario. @throw InputError
[[nodiscard]] Scenario load_scenario_text(const std::string& text, const std::string& name,
                                          const std::vector<std::string>& overrides = {},
                                          const ScenarioTreeEdit& edit = {});

}  // namespace dnnsim
