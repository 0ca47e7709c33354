#include "planners/jobs/marl/teacher.hpp"

#include <array>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace dnnsim {

namespace {

// The best-fit server for candidate c (action), or −1 when it cannot be placed: where it fits alone
// with the fewest free GPUs left (else the fewest servers spanned), then the fastest placement, then
// the lowest index.
int best_fit(const MarlObservation& o, int c) {
  const int S = o.servers;
  int best = -1;
  std::tuple<float, float, float, float> best_key;
  for (int s = 0; s < S; ++s) {
    const int action = o.place_action_of(c, s);
    if (o.mask[static_cast<std::size_t>(action)] == 0) continue;
    const float* f = &o.place_action[static_cast<std::size_t>((c * S + s) * MarlObservation::kActionFeatures)];
    const float* server = &o.server[static_cast<std::size_t>(s * MarlObservation::kServerFeatures)];
    // free share × GPUs / the largest server's GPUs: free GPUs, on one scale for every server
    const auto key = std::tuple(-f[0], f[1], server[0] * server[1], -f[2]);
    if (best < 0 || key < best_key) best = action, best_key = key;
  }
  return best;
}

// Stop when nothing can be placed (never packs); packing only if stop is not offered (the mask never
// offers packing without stop today): the first pack offered.
int when_nothing_fits(const MarlObservation& o) {
  if (o.mask[static_cast<std::size_t>(o.stop_action())] != 0) return o.stop_action();
  for (int a = 0; a < o.stop_action(); ++a)
    if (o.mask[static_cast<std::size_t>(a)] != 0) return a;
  throw std::logic_error("marl teacher: no feasible action");
}

}  // namespace

int consolidating_teacher(const MarlObservation& o) {
  for (int c = 0; c < o.candidates; ++c)
    if (const int action = best_fit(o, c); action >= 0) return action;
  return when_nothing_fits(o);
}

int shortest_first_teacher(const MarlObservation& o) {
  int best = -1;
  float shortest = 0.0f;
  for (int c = 0; c < o.candidates; ++c) {
    const int action = best_fit(o, c);
    const float remaining = o.job[static_cast<std::size_t>(c * MarlObservation::kJobFeatures + 1)];
    if (action >= 0 && (best < 0 || remaining < shortest)) best = action, shortest = remaining;
  }
  return best >= 0 ? best : when_nothing_fits(o);
}

namespace {

// The one list of teachers by name: both the command line's choices and the lookup read it.
constexpr std::array<std::pair<std::string_view, MarlTeacher>, 2> kTeachers{{
    {"consolidate", &consolidating_teacher},
    {"shortest-first", &shortest_first_teacher},
}};

}  // namespace

std::vector<std::string> marl_teacher_names() {
  std::vector<std::string> names;
  for (const auto& [name, teacher] : kTeachers) names.emplace_back(name);
  return names;
}

std::optional<MarlTeacher> marl_teacher(std::string_view name) {
  for (const auto& [known, teacher] : kTeachers)
    if (known == name) return teacher;
  return std::nullopt;
}

}  // namespace dnnsim
