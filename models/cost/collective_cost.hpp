// Analytical time of point-to-point transfers and collectives, for planners that must rank many
// configurations without running the simulator (docs/collectives.md, "Analytical costs").
//
// A path between two devices costs α + size/β (Hockney 1994, "The communication challenge for MPP:
// Intel Paragon and Meiko CS-2", Parallel Computing 20(3)): α its latency, β its bandwidth when
// nothing else crosses it. A collective is costed on exactly the point-to-point steps its algorithm
// expands into (models/program/collective_algorithms.hpp) with the executor's two rules: a step
// starts once the steps it depends on have finished and once its sender's previous step (in
// expansion order) has finished. Its time is the longest path through those steps, each weighted by
// the α + size/β of its (src, dst) path. That is what the simulator measures whenever the steps that
// overlap in time share no link; where the algorithm's own concurrent steps share one, the caller
// states it through the path costs (see collective_time). Links are allowed to differ: a ring is
// bound by its slowest edge, a tree by its slowest root-to-leaf chain.
//
// Receiver contention (the double binary tree sends two children's chunks into one parent at once)
// is modelled on request, as a fluid max-min share of the receiver's ingress (CollectiveCostOptions).
// Not modelled: traffic of other collectives or jobs on the same links, time-varying links, and
// sharing of links other than the receiver's ingress that the caller's path costs do not describe.
#pragma once

#include <functional>

#include "models/common/units.hpp"
#include "models/program/collective_algorithms.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// The cost of moving bytes between two devices with nothing else on the path: α + size/β (Hockney).
// For a routed path: the sum of its links' latencies and the smallest of their bandwidths.
struct PathCost {
  Seconds latency{0};
  BytesPerSecond bandwidth{0};
};

// The path cost of a step from `src` to `dst` (DeviceIds of the Collective's group). A caller that
// knows the algorithm makes concurrent steps share a link (g local ranks crossing one node NIC in
// the inter-node phase of "hierarchical") passes that link's bandwidth divided by the number of
// flows that cross it together: the steps of one round run in lockstep on uniform links, so each
// gets an equal share for the whole step.
using PathCostFn = std::function<PathCost(DeviceId src, DeviceId dst)>;

// α + size/β. A zero size costs the latency alone.
[[nodiscard]] Seconds point_to_point_time(Bytes size, const PathCost& path);

// The capacity of the one link that every path into `device` crosses (its NVSwitch port, its only
// NIC), for algorithms whose concurrent steps converge on one receiver.
using IngressFn = std::function<BytesPerSecond(DeviceId device)>;

struct CollectiveCostOptions {
  // Empty (the default): every step sees its path alone, α + size/β; the collective's time is the
  // longest path through its steps. Exact when the steps that overlap in time share no link (ring,
  // direct and hierarchical on uniform links, where every device receives from one peer at a time).
  // Set: a fluid model of receiver contention (needed for "tree", whose parents receive from two
  // children at once and whose members receive both halves at once). A step spends its latency α
  // first, taking no bandwidth (as SimGrid's CM02 does), then transfers at its max-min fair share
  // of shared_ingress(dst) among the steps transferring into dst at that moment, never above its
  // path's β. A sender's steps still run one after another, so no link out of a device is shared.
  IngressFn shared_ingress;
};

// The time of `expansion` from its start (time 0), under `options` (see above): a step starts when
// its deps and its sender's previous step (in expansion order) have finished. `path` is called
// once per distinct (src, dst) pair.
[[nodiscard]] Seconds expansion_time(const CollectiveExpansion& expansion, const PathCostFn& path,
                                     const CollectiveCostOptions& options = {});

// Time of `c` with the algorithm it names, or the default rule (default_collective_algorithm).
//  - ring all_reduce / all_gather / reduce_scatter, closed form over the ring edges e = (group[i],
//    group[i+1 mod p]): rounds · max_e (α_e + (S/p)/β_e), rounds = 2(p−1) or p−1. Every round's
//    send waits for the previous round's send into its sender, so the slowest edge bounds every
//    round; on uniform links 2(p−1)(α + S/(pB)) and (p−1)(α + S/(pB)). A ring member receives from
//    its predecessor only, one step at a time, so `options` changes nothing.
//  - everything else (ring broadcast, tree, hierarchical, direct): expansion_time of the expansion;
//    on uniform links this gives the formulas of docs/collectives.md, e.g. (p+k−2)(α + S/(kB)) for
//    the ring broadcast and 2(g−1)(α_in + S/(gB_in)) + 2(n−1)(α_out + S/(gnB_out)) for hierarchical.
// A group of one device costs nothing. With Collective::copies, p is logical_size(c) and the edges
// are the window's (its last member's edge to group[0] standing for the edge into the next copy).
// @throw InputError as expand_collective (unknown algorithm, unsupported kind, rejected collective).
// @throw std::out_of_range if a group member is not in `topology` (default rule, hierarchical).
[[nodiscard]] Seconds collective_time(const Collective& c, const DeviceTopology& topology, const PathCostFn& path,
                                      const CollectiveCostOptions& options = {});

// Closed forms for planners that know only the group size and a representative edge (the slowest
// one of a ring). `p` ≥ 1; p = 1 costs nothing.
// Ring all-reduce: 2(p−1)·(α + S/(pβ)).
[[nodiscard]] Seconds ring_all_reduce_time(Bytes size, int p, const PathCost& slowest_edge);
// Ring all-gather (S = the output) or reduce-scatter (S = the input): (p−1)·(α + S/(pβ)).
[[nodiscard]] Seconds ring_all_gather_time(Bytes size, int p, const PathCost& slowest_edge);
// Hierarchical all-reduce over `nodes` × `per_node` devices, intra-node rings on `intra`, one
// inter-node ring per local rank on `inter` (pass the NIC bandwidth already divided among the
// per_node rings when they share one NIC):
//   2(g−1)(α_in + S/(g·β_in)) + 2(n−1)(α_out + S/(g·n·β_out)),  g = per_node, n = nodes.
// Exact for the expansion when all intra edges cost `intra` and all inter edges `inter`.
[[nodiscard]] Seconds hierarchical_all_reduce_time(Bytes size, int nodes, int per_node, const PathCost& intra,
                                                   const PathCost& inter);

// How long a computation of `compute` seconds and a communication of `communication` seconds that
// start together take until both are done, when the communication takes `share` of the GPU from the
// computation while it runs (CollectiveCalibration::compute_share, as the executor runs it): the
// computation advances at (1 − share) under the communication, so it ends at
//   C + share · min(O, C / (1 − share))
// (all of it under the communication when O ≥ C / (1 − share)), and the pair at the later of that and O.
// share 0: max(C, O), the overlap that hides completely.
[[nodiscard]] Seconds overlapped_span(Seconds compute, Seconds communication, double share);

}  // namespace dnnsim
