// Parameter-server (PS) jobs at the cluster level: workers on GPUs push each layer's gradients to k
// parameter servers (parameters striped evenly over them, 1/k of every layer each) and pull the
// updated parameters back. Shared by the speed model (analytical_speed.hpp), the cluster simulation
// (sim/cluster/) and the PS-aware schedulers (SMD, planners/jobs/smd.hpp).
//
// Iteration time — the layered recursion of SMD (Yu et al., INFOCOM'21; papers-cluster.md §5):
// backward runs layers L..1, and layer l's push/pull starts once its backward is done and the link
// has finished layer l+1 (wait-free back-propagation):
//   finish(L+1) = 0,  finish(l) = max(finish(l+1), Σ_{j≥l} b_j) + c_l,
//   T_iter = Σ_l f_l + finish(1)          (the next forward needs layer 1's parameters),
// with f_l, b_l the layer's forward and backward time on the slowest worker and c_l its push + pull.
//
// Push/pull time of a layer of p bytes with locality (Yu et al., "Toward efficient online
// scheduling for distributed ML systems", papers-cluster.md §4: co-located tasks talk over the
// server's internal bus, distributed ones share the NIC): with w_s workers and k_s PSs on server s,
// w and k in all, each worker sends p/k to every PS, so during the push server s's NIC sends
// w_s·p·(k−k_s)/k and receives (w−w_s)·p·k_s/k, and its bus carries w_s·p·k_s/k. Every direction of
// every NIC and bus is a bottleneck the push cannot beat:
//   push = max_s max(send_s / nic_s, receive_s / nic_s, local_s / bus_s) + latency (when any remote),
//   c_l  = 2 × push (the pull mirrors the push once the PSs have aggregated every worker's share).
// This is the bottleneck bound of a max-min fair network; the simulator's flows (network mode)
// measure what sharing with other jobs adds on top.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "models/common/units.hpp"
#include "planners/jobs/cluster_state.hpp"
#include "planners/jobs/job_speed.hpp"

namespace dnnsim {

// How many PSs a job runs with `workers` workers by default: ceil(workers × ps_per_worker), ≥ 1.
[[nodiscard]] int default_ps_count(const JobRecord& job, int workers);

// The layout the speed model assumes when a placement has no PSs yet: `k` PSs dealt one at a time
// over the worker servers in placement order (co-located, the locality every PS layout starts from).
[[nodiscard]] std::vector<std::pair<int, int>> colocated_ps_layout(const Placement& workers, int k);

// Where `k` PSs of `cores` cores each go given the free cores per server: dealt round-robin over the
// worker servers while they have cores (locality first), then over the other servers, most free
// cores first (ties: lower index). nullopt when the cluster's free cores cannot hold them all.
[[nodiscard]] std::optional<std::vector<std::pair<int, int>>> place_parameter_servers(const std::vector<int>& free_cpus,
                                                                                      const Placement& workers, int k,
                                                                                      int cores);

// The (workers, PSs) choices the PS-aware schedulers consider for a job asking for `requested` GPUs
// with at most `max_gpus` free: w ∈ {1, 2, 4, …} ∪ {requested}, k ∈ {⌈w/4⌉, ⌈w/2⌉, w} ∪ {the
// default}; k = 0 for ring all-reduce jobs.
[[nodiscard]] std::vector<std::pair<int, int>> worker_ps_choices(const JobRecord& job, int requested, int max_gpus);

// What the PS-aware schedulers price a (w, k) choice at before placing it: the job's iterations per
// second on `w` GPUs consolidated on an empty cluster (nominal_placement) with `k` PSs co-located
// (k = 0: none, a ring all-reduce job).
[[nodiscard]] double nominal_rate(const JobSpeedModel& speed, const std::vector<ServerInfo>& servers,
                                  const JobRecord& job, int w, int k);

// nominal_rate at the GPUs the job asked for, with its default PSs: what waiting is priced at.
[[nodiscard]] double requested_rate(const JobSpeedModel& speed, const std::vector<ServerInfo>& servers,
                                    const JobView& job);

// The wait a queued job is priced at when a scheduler leaves it queued: until GPUs next free up,
// the earliest oracle end of a running job; with none running, `otherwise`.
[[nodiscard]] double time_to_next_release(const ClusterState& state, double otherwise);

// What leaving the jobs of a scheduler's window queued costs: each job's requested_rate, and the
// wait (time_to_next_release) with none running priced as the longest any window job needs at its
// requested rate, so that starting a job is never worse than idling.
struct WaitingPrice {
  std::vector<double> rate;  // per window job
  double wait = 0;           // seconds
};
[[nodiscard]] WaitingPrice waiting_price(const JobSpeedModel& speed, const ClusterState& state,
                                         const std::vector<const JobView*>& window);

// c_l above for one layer of `bytes`, on `placement` (its ps must be set).
[[nodiscard]] Seconds ps_layer_sync_time(Bytes bytes, const Placement& placement,
                                         const std::vector<ServerInfo>& servers);

struct PsLayerTimes {
  Seconds forward, backward;
  Seconds sync;  // c_l
};

struct PsIteration {
  Seconds forward, backward;  // Σ f_l, Σ b_l
  Seconds finish;             // finish(1): from the start of backward to the last pull
  [[nodiscard]] Seconds total() const { return forward + finish; }
  [[nodiscard]] Seconds exposed_sync() const { return finish - backward; }
};

// The recursion above; layers in forward order.
[[nodiscard]] PsIteration ps_iteration(const std::vector<PsLayerTimes>& layers);

}  // namespace dnnsim
