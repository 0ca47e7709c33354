// `marl`: the interference-aware multi-agent scheduler, -like reconstruction of Zhao & Wu, "Large-scale
// Machine Learning Cluster Scheduling via Multi-agent Graph Reinforcement Learning", IEEE TNSM 2021
// (arXiv 2112.13354; docs/research/papers-cluster.md §2 [D]; docs/cluster.md "Multi-agent RL").
//   agents      `agents` (4) schedulers, each owning a contiguous block of the servers in topology
//               order (racks stay together) and a sub-queue of the arriving jobs — the paper's
//               partitions and sub-queues; `dispatch` decides which sub-queue a job joins on arrival
//               (dnnsim's choice: the paper does not say): `job_id`, id mod agents; `best_fit`, the
//               agent owning the server where it fits alone with the fewest GPUs left, counting its
//               sub-queue's waiting GPUs as taken, else the agent waiting for the fewest GPUs (6.4%
//               lower mean JCT for the packing teacher on the validation streams, docs/cluster.md);
//   decisions   on every event the agents take turns, one move each, until none has one left; a move
//               chooses one of the first `window` (8) waiting jobs of the agent's sub-queue and what
//               to do with it: place it anchored on a server of its partition (that server's free
//               GPUs first, then its rack's, then any, most free first; on any server when its own
//               servers are full, and with `remote: when_no_local_fit` also a job that fits alone on
//               none of its own servers — without it such a job is spread over the partition's
//               fragments and its rack: 11% higher mean JCT for the first-fit-like teacher on the
//               validation streams, docs/cluster.md), or pack it (one GPU) beside a running
//               single-GPU job on a server of its partition (the partner with the highest predicted combined throughput
//               there). Work-conserving: while a candidate fits, one is placed somewhere; "stop" (the
//               paper's skip) is offered only as the alternative to packing when none fits. (A skip
//               offered always was learnt: a greedy run of that policy left free GPUs idle, mean JCT
//               457,209 s against 11,925 s for first-fit.)
//   predictor   the job interference model (interference.hpp) fitted on the Gavel tables given as
//               `interference` (every 5th pair held out, as in docs/cluster.md) supplies the agents'
//               sensitivity/pressure features and picks the packing partner (with `mlp: 1` the
//               partner and the shaping's predicted slowdowns come from its MLP variant,
//               interference_mlp.hpp); the simulator's slowdown of a packed pair stays the speed
//               model's measured one;
//   policy      `policy`: a file written by `dnnsim train-scheduler` (planners/jobs/marl/policy.hpp);
//               greedy actions in runs, sampled ones in training episodes (SchedulerContext::learning).
// `agents: 1` is the single-agent baseline (one scheduler over the whole cluster, DL2/Harmony-style).
#pragma once

#include <memory>

#include "planners/jobs/job_scheduler.hpp"

namespace dnnsim {

// Options: policy (required), agents, window, packing, remote, dispatch, interference (Gavel's tables), mlp.
[[nodiscard]] OptionSchema marl_options();
// @throw InputError (at the option) for an unreadable policy.
[[nodiscard]] std::unique_ptr<JobScheduler> make_marl_scheduler(const SchedulerContext& context);

}  // namespace dnnsim
