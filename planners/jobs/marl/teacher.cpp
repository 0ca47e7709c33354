#include "planners/jobs/marl/teacher.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace dnnsim {

namespace {

const float* place_features(const MarlObservation& o, int c, int s) {
  return &o.place_action[static_cast<std::size_t>((c * o.servers + s) * MarlObservation::kActionFeatures)];
}

const float* pack_features(const MarlObservation& o, int c, int s) {
  return &o.pack_action[static_cast<std::size_t>((c * o.servers + s) * MarlObservation::kActionFeatures)];
}

// Free GPUs of server s and GPUs of candidate c, both / the largest server's GPUs (the observation's
// scales: free share × GPU-count feature, and the job's GPU feature).
float free_gpus(const MarlObservation& o, int s) {
  const float* server = &o.server[static_cast<std::size_t>(s * MarlObservation::kServerFeatures)];
  return server[0] * server[1];
}
float job_gpus(const MarlObservation& o, int c) {
  return o.job[static_cast<std::size_t>(c * MarlObservation::kJobFeatures)];
}

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
    const float* f = place_features(o, c, s);
    const auto key = std::tuple(-f[0], f[1], free_gpus(o, s), -f[2]);
    if (best < 0 || key < best_key) best = action, best_key = key;
  }
  return best;
}

// Whether placing candidate c by `place_action` keeps it on one server.
bool fits_alone(const MarlObservation& o, int c, int place_action) {
  return place_features(o, c, place_action - o.place_action_of(c, 0))[0] > 0.5f;
}

// Whether candidate c would fit on one server of the whole cluster, masked or not (the observation
// holds every server's free share, not only the agent's).
bool fits_alone_anywhere(const MarlObservation& o, int c) {
  constexpr float kRounding = 1e-4f;  // both sides are multiples of 1 / the largest server's GPUs
  for (int s = 0; s < o.servers; ++s)
    if (free_gpus(o, s) + kRounding >= job_gpus(o, c)) return true;
  return false;
}

// Nothing can be placed: pack the first candidate (serving order) that has a partner of predicted
// combined throughput ≥ pack_at (its best server, lowest index on ties) when pack_at > 0; else stop;
// packing only if stop is not offered (the mask never offers packing without stop today): the
// first pack offered.
int when_nothing_fits(const MarlObservation& o, const std::vector<int>& order, double pack_at) {
  if (pack_at > 0.0)
    for (int c : order) {
      int best = -1;
      float best_throughput = 0.0f;
      for (int s = 0; s < o.servers; ++s) {
        const int action = o.pack_action_of(c, s);
        const float throughput = 1.0f + pack_features(o, c, s)[3];
        if (o.mask[static_cast<std::size_t>(action)] != 0 && throughput >= pack_at &&
            (best < 0 || throughput > best_throughput))
          best = action, best_throughput = throughput;
      }
      if (best >= 0) return best;
    }
  if (o.mask[static_cast<std::size_t>(o.stop_action())] != 0) return o.stop_action();
  for (int a = 0; a < o.stop_action(); ++a)
    if (o.mask[static_cast<std::size_t>(a)] != 0) return a;
  throw std::logic_error("marl teacher: no feasible action");
}

// The rules the teachers are made of (teacher.hpp).
enum class Serve { arrival, shortest };
struct Rule {
  Serve serve;
  bool fit_first;  // candidates that fit alone on a server they may use come first
  double pack_at;  // pack when nothing can be placed and the pair's predicted throughput ≥ this; 0: never
};

int act(const MarlObservation& o, const Rule& rule) {
  std::vector<int> order(static_cast<std::size_t>(o.candidates));
  std::iota(order.begin(), order.end(), 0);
  if (rule.serve == Serve::shortest)
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return o.job[static_cast<std::size_t>(a * MarlObservation::kJobFeatures + 1)] <
             o.job[static_cast<std::size_t>(b * MarlObservation::kJobFeatures + 1)];
    });
  if (rule.fit_first) {
    for (int c : order)
      if (const int action = best_fit(o, c); action >= 0 && fits_alone(o, c, action)) return action;
    // None fits alone where it may go: one that would span under any placement first; else all of
    // them would fit alone on a server outside the agent's mask, and the smallest fills the agent's
    // fragments, so that the others go where they fit once its own servers are full.
    int smallest = -1, smallest_action = -1;
    for (int c : order) {
      const int action = best_fit(o, c);
      if (action < 0) continue;
      if (!fits_alone_anywhere(o, c)) return action;
      if (smallest < 0 || job_gpus(o, c) < job_gpus(o, smallest)) smallest = c, smallest_action = action;
    }
    if (smallest >= 0) return smallest_action;
  } else {
    for (int c : order)
      if (const int action = best_fit(o, c); action >= 0) return action;
  }
  return when_nothing_fits(o, order, rule.pack_at);
}

template <const Rule& rule>
int teacher(const MarlObservation& o) {
  return act(o, rule);
}

constexpr Rule kConsolidate{Serve::arrival, false, 0.0};
constexpr Rule kShortestFirst{Serve::shortest, false, 0.0};
constexpr Rule kFitFirst{Serve::arrival, true, 0.0};
// Gandiva packs pairs whose combined throughput is ≥ 1 (its `min_throughput`); 1.2 was chosen on the
// validation streams (2000–2004) among 1.0, 1.2 and 1.4 (docs/cluster.md).
constexpr double kPackAt = 1.2;
constexpr Rule kFitFirstPack{Serve::arrival, true, kPackAt};
constexpr Rule kShortestFitFirst{Serve::shortest, true, 0.0};
constexpr Rule kShortestFitFirstPack{Serve::shortest, true, kPackAt};

// The one list of teachers by name: both the command line's choices and the lookup read it.
constexpr std::array<std::pair<std::string_view, MarlTeacher>, 6> kTeachers{{
    {"consolidate", &teacher<kConsolidate>},
    {"shortest-first", &teacher<kShortestFirst>},
    {"fit-first", &teacher<kFitFirst>},
    {"fit-first-pack", &teacher<kFitFirstPack>},
    {"shortest-fit-first", &teacher<kShortestFitFirst>},
    {"shortest-fit-first-pack", &teacher<kShortestFitFirstPack>},
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
