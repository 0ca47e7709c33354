// Teachers for the multi-agent scheduler's imitation pre-training (behaviour cloning, `dnnsim
// train-scheduler --imitate`): hand-written rules that choose an action in the policy's own action
// space (observation.hpp: candidate × server × place/pack, or stop) from the observation alone, under
// the agent's mask. Warm-starting a learned scheduler from a heuristic's decisions is common practice
// in learned scheduling (e.g. Decima, Mao et al. SIGCOMM'19, and DL2, Peng et al. 2019, pre-train
// on an existing scheduler's decisions before reinforcement learning); which teacher is dnnsim's
// choice, not Zhao & Wu's (their paper was not read beyond the abstract).
//   consolidate  first-fit with backfill and best-fit consolidation, as the `fifo-backfill` scheduler
//                with `consolidated` placement does, inside the agent's mask: the first candidate of
//                the window (arrival order) that can be placed; on the server where it fits alone
//                with the fewest free GPUs left (else the fewest servers spanned), then the fastest
//                placement, then the lowest index; never packs (stop when nothing can be placed).
//   shortest-first  the same placement, but of the placeable candidate with the least remaining solo
//                time (shortest remaining time first, the order that minimises mean completion time on
//                one machine, Schrage 1968; window order on ties).
//   fit-first    consolidate, informed by the whole cluster's free GPUs (the observation's server free
//                shares, every server's, not only the agent's): the first candidate that fits alone on
//                a server the agent may use; when none does, the first that fits alone on no server of
//                the cluster (it spans under any placement, as first-fit would span it), else the
//                smallest (it fills the agent's fragments, and the others go where they fit alone
//                once its servers are full — under the default `remote`, remote placement is
//                offered only then; with `when_no_local_fit` a job that fits alone on none of the
//                agent's servers is offered the servers where it fits, and fit-first serves it first).
//   shortest-fit-first  fit-first with candidates in shortest-remaining-time order.
//   fit-first-pack, shortest-fit-first-pack  the same, and when nothing can be placed they pack
//                (Gandiva-like, Xiao et al. OSDI'18 §4.3, as the `gandiva` scheduler's `packing` with
//                its min_throughput, here 1.2, chosen on the validation streams): the first
//                candidate (serving order) with a partner whose predicted combined throughput
//                1/ŝ_gh + 1/ŝ_hg (the pack action's feature) is ≥ 1.2, beside the best such partner;
//                else stop.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planners/jobs/marl/observation.hpp"

namespace dnnsim {

// A teacher's action for an observation with at least one feasible action (the mask's).
using MarlTeacher = int (*)(const MarlObservation&);

// The teachers by name, for the command line.
[[nodiscard]] std::vector<std::string> marl_teacher_names();
[[nodiscard]] std::optional<MarlTeacher> marl_teacher(std::string_view name);

}  // namespace dnnsim
