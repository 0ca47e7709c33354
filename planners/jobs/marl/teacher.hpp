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
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planners/jobs/marl/observation.hpp"

namespace dnnsim {

// A teacher's action for an observation with at least one feasible action (the mask's).
using MarlTeacher = int (*)(const MarlObservation&);

[[nodiscard]] int consolidating_teacher(const MarlObservation& observation);
[[nodiscard]] int shortest_first_teacher(const MarlObservation& observation);

// The teachers by name, for the command line.
[[nodiscard]] std::vector<std::string> marl_teacher_names();
[[nodiscard]] std::optional<MarlTeacher> marl_teacher(std::string_view name);

}  // namespace dnnsim
