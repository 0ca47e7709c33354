#include "planners/jobs/interference_mlp.hpp"

#include "planners/jobs/marl/torch_plugin.hpp"

namespace dnnsim {

std::unique_ptr<InterferencePredictor> fit_interference_mlp(const std::vector<ColocatedPair>& pairs,
                                                            std::uint64_t seed) {
  return torch_plugin().fit_mlp(pairs, seed);
}

}  // namespace dnnsim
