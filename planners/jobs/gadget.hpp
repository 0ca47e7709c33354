// GADGET-like scheduling of ring-all-reduce jobs: Yu, Tian, Ji, Wu, Rajan, Liu, "GADGET: Online
// Resource Optimization for Scheduling Ring-All-Reduce Learning Jobs", INFOCOM 2022
// (arXiv 2202.01158). The paper's text beyond its abstract was not available: the model and the
// greedy below are the reconstruction of docs/research/papers-cluster.md §1 (marked [D] there),
// hence "-like".
//
// Ring model. A job on w GPUs all-reduces over one ring through them, each server's GPUs contiguous,
// so a multi-server ring crosses each of its servers' NICs once out and once in:
//   T_ar   = S / b_ring + 2(w − 1)·α
//   b_ring = b_intra                                          (one server)
//          = min(b_intra, min over the ring's servers s of b_nic(s) / n_rings(s))   (several)
// S: bytes each member sends per iteration (2(w − 1)/w of the gradients, IterationCost::sync_bytes);
// α: one hop's latency; n_rings(s): multi-server rings through server s's NIC, this one included —
// the contention term. An iteration is t_iter = compute + T_ar (no overlap).
//
// Utility of the next slot of length Δ for job i on w GPUs embedded as E, with progress
// x = min(Δ / t_iter, remaining iterations) and K_i the iterations the job needs:
//   excess   U = x / K_i                           no credit for training beyond the target
//   energy   U = x / K_i − ε · w · Δ / 3600 s      ε = `energy_weight` per GPU-hour
//   fair     U = (x / K_i)^(1 − a) / (1 − a)       α-fairness, a = `alpha` in [0, 1)
//
// Greedy (per event): candidates (i, w) for every active job and w ∈ {1, 2, 4, …} ∪ {W_i} (W_i the
// GPUs it asked for), each with its best embedding on the residual GPUs — the best-fit server with
// ≥ w free GPUs, else the rack (then the cluster) whose servers, taken by descending free GPUs, reach
// w on the fewest servers — and its marginal gain per GPU, (U(w) − U(w_now)) / (w − w_now), w_now the
// GPUs the greedy has given the job so far (0 at first). The best candidate is committed (the job
// moves to its new embedding), residual GPUs and ring counts are updated, and the job's larger counts
// are priced again from there; until no candidate gains. Commits of other jobs only consume GPUs and
// add contention, so a candidate's gain can only fall: the greedy is evaluated lazily (a heap of
// possibly stale gains, re-evaluated when on top: Minoux's accelerated greedy). Arrivals and
// completions place queued jobs on free GPUs; every `slot_s` the whole allocation is redone, running
// jobs keeping their GPUs when they get the same count.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "planners/jobs/cluster_state.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/job_speed.hpp"

namespace dnnsim {

// The ring a placement forms: its bottleneck bandwidth given the multi-server rings already through
// each server (`rings_through`, this one not included), and its all-reduce time.
struct RingEstimate {
  BytesPerSecond bandwidth{0};  // b_ring
  Seconds all_reduce{0};        // T_ar
  Seconds iteration{0};         // compute + T_ar
};

[[nodiscard]] RingEstimate ring_estimate(const IterationCost& solo, const Placement& placement,
                                         const std::vector<ServerInfo>& servers, const std::vector<int>& rings_through);

// The GADGET-like embedding of `w` GPUs on the free GPUs, or nothing when they do not fit.
[[nodiscard]] std::optional<Placement> ring_embedding(const std::vector<ServerInfo>& servers,
                                                      const std::vector<int>& free, int w);

enum class GadgetUtility { excess, energy, fair };

// Options (scenario's `scheduler:` section): slot (Δ and the re-allocation period, default 600 s), and
// by utility energy_weight (ε, default 0.01 per GPU-hour) or alpha (a, default 0.5).
[[nodiscard]] OptionSchema gadget_options(GadgetUtility utility);
[[nodiscard]] std::unique_ptr<JobScheduler> make_gadget_scheduler(const SchedulerContext& context,
                                                                  GadgetUtility utility);

}  // namespace dnnsim
