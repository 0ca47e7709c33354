#include "planners/jobs/marl/teacher.hpp"

#include <stdexcept>
#include <tuple>

namespace dnnsim {

int consolidating_teacher(const MarlObservation& o) {
  const int S = o.servers;
  const auto feasible = [&](int action) { return o.mask[static_cast<std::size_t>(action)] != 0; };
  for (int c = 0; c < o.candidates; ++c) {
    int best = -1;
    std::tuple<float, float, float, float> best_key;
    for (int s = 0; s < S; ++s) {
      const int action = o.place_action_of(c, s);
      if (!feasible(action)) continue;
      const float* f = &o.place_action[static_cast<std::size_t>((c * S + s) * MarlObservation::kActionFeatures)];
      const float* server = &o.server[static_cast<std::size_t>(s * MarlObservation::kServerFeatures)];
      // free share × GPUs / the largest server's GPUs: free GPUs, on one scale for every server
      const auto key = std::tuple(-f[0], f[1], server[0] * server[1], -f[2]);
      if (best < 0 || key < best_key) best = action, best_key = key;
    }
    if (best >= 0) return best;
  }
  if (feasible(o.stop_action())) return o.stop_action();
  // Only packing is feasible (the mask never offers it without stop today): the first pack offered.
  for (int a = 0; a < o.stop_action(); ++a)
    if (feasible(a)) return a;
  throw std::logic_error("consolidating_teacher: no feasible action");
}

std::vector<std::string> marl_teacher_names() { return {"consolidate"}; }

std::optional<MarlTeacher> marl_teacher(std::string_view name) {
  if (name == "consolidate") return &consolidating_teacher;
  return std::nullopt;
}

}  // namespace dnnsim
