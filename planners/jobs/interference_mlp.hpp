// The MLP variant of the job interference model (interference.hpp): the "learned" predictor of the
// interference-aware multi-agent scheduler, -like reconstruction of Zhao & Wu, IEEE TNSM 2021 (arXiv
// 2112.13354; papers-cluster.md §2 [D]: "keep an optional MLP … output log s_i"). Gavel's pairs carry
// job types, not usage vectors, so the input is the two types one-hot, [victim ‖ aggressor] (a type
// the fit never saw is all zeros), through one hidden layer of 16 ReLUs to log ŝ_ij; trained on log
// slowdowns by mean squared error, full batch, Adam (lr 0.01, 600 epochs), weights drawn from `seed`
// (libtorch). Several co-runners add their excess slowdowns as in the additive model. Held-out error
// against the additive model: docs/cluster.md "Job interference model". Runs in the libtorch
// plugin (planners/torch/plugin.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "planners/jobs/interference.hpp"

namespace dnnsim {

// Fitted on `pairs` (not empty) in the libtorch plugin (marl/torch_plugin.hpp).
// @throw std::runtime_error when the plugin cannot be loaded.
[[nodiscard]] std::unique_ptr<InterferencePredictor> fit_interference_mlp(const std::vector<ColocatedPair>& pairs,
                                                                          std::uint64_t seed);

}  // namespace dnnsim
