#include "planners/jobs/pollux_marginal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>

namespace dnnsim {
namespace {

constexpr int kKeep = -1;  // a wanted count meaning "keep the current row"

// Per job: kKeep, 0 (no GPUs) or the replicas of a new row. Rows are placed in job order; a kept row
// stays. Strict: nothing when a job's count does not fit whole on at most max_job_nodes nodes;
// otherwise such a job takes the room left on those nodes.
std::optional<PolluxAllocation> place(const PolluxProblem& pb, const std::vector<int>& want, bool strict) {
  PolluxAllocation chosen = pb.current;
  std::vector<int> free = pb.capacity;
  for (int j = 0; j < pb.jobs; ++j) {
    if (want[static_cast<std::size_t>(j)] != kKeep) chosen.rows[static_cast<std::size_t>(j)].clear();
    for (const auto& [node, count] : chosen.rows[static_cast<std::size_t>(j)])
      free[static_cast<std::size_t>(node)] -= count;
  }
  std::vector<bool> distributed_on(pb.capacity.size(), false);
  for (const PolluxRow& row : chosen.rows)
    if (row.size() > 1)
      for (const auto& [node, count] : row) distributed_on[static_cast<std::size_t>(node)] = true;
  std::vector<int> order(pb.capacity.size());
  for (int j = 0; j < pb.jobs; ++j) {
    int left = want[static_cast<std::size_t>(j)];
    if (left <= 0) continue;
    PolluxRow& row = chosen.rows[static_cast<std::size_t>(j)];
    // Best fit: the node with the least room that holds it whole, else the roomiest nodes.
    int fit = -1;
    for (int n = 0; n < pb.nodes(); ++n)
      if (free[static_cast<std::size_t>(n)] >= left &&
          (fit < 0 || free[static_cast<std::size_t>(n)] < free[static_cast<std::size_t>(fit)]))
        fit = n;
    if (fit >= 0) {
      row = {{fit, left}};
      free[static_cast<std::size_t>(fit)] -= left;
      continue;
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return free[static_cast<std::size_t>(a)] > free[static_cast<std::size_t>(b)];
    });
    for (const int n : order) {
      const int take = std::min(left, free[static_cast<std::size_t>(n)]);
      if (left == 0 || take <= 0 || (!strict && static_cast<int>(row.size()) == pb.max_job_nodes)) break;
      if (distributed_on[static_cast<std::size_t>(n)]) continue;
      row.emplace_back(n, take);
      free[static_cast<std::size_t>(n)] -= take;
      left -= take;
    }
    if (strict && (left > 0 || static_cast<int>(row.size()) > pb.max_job_nodes)) return std::nullopt;
    normalise(row);
    if (row.size() > 1)
      for (const auto& [node, count] : row) distributed_on[static_cast<std::size_t>(node)] = true;
  }
  return chosen;
}

int largest_node(const PolluxProblem& pb) { return *std::max_element(pb.capacity.begin(), pb.capacity.end()); }

// One job's choices by GPU count: the best utility at each count (a new row of that many replicas on
// the fewest nodes, or its current row, which keeps a tie) and what is wanted for it; −∞: none.
struct Choices {
  std::vector<double> utility;
  std::vector<int> want;
};

Choices choices(const PolluxProblem& pb, int j, int per_node) {
  const double p = pb.fairness;
  const auto utility = [p](double s) {
    if (p == 0.0) return std::log(std::max(s, kPolluxFloor));
    return p < 0 ? -std::pow(s + kPolluxFloor, p) : std::pow(s + kPolluxFloor, p);
  };
  const PolluxRow& current = pb.current.rows[static_cast<std::size_t>(j)];
  const int kept = replicas_of(current);
  const int most = std::min(pb.max_replicas[static_cast<std::size_t>(j)], per_node * pb.max_job_nodes);
  Choices c;
  c.utility.assign(static_cast<std::size_t>(std::max(most, kept) + 1), -std::numeric_limits<double>::infinity());
  c.want.assign(c.utility.size(), kKeep);
  c.utility[0] = utility(0.0);
  c.want[0] = current.empty() ? kKeep : 0;
  for (int r = 1; r <= most; ++r) {
    c.utility[static_cast<std::size_t>(r)] = utility(pb.scaled(j, (r + per_node - 1) / per_node, r, true));
    c.want[static_cast<std::size_t>(r)] = r;
  }
  if (kept > 0) {
    const double u = utility(pb.scaled(j, current));
    if (u >= c.utility[static_cast<std::size_t>(kept)]) {
      c.utility[static_cast<std::size_t>(kept)] = u;
      c.want[static_cast<std::size_t>(kept)] = kKeep;
    }
  }
  return c;
}

}  // namespace

std::optional<PolluxAllocation> pollux_uncontended(const PolluxProblem& pb) {
  const int per_node = largest_node(pb);
  std::vector<int> want(static_cast<std::size_t>(pb.jobs), kKeep);
  int total = 0;
  for (int j = 0; j < pb.jobs; ++j) {
    const PolluxRow& current = pb.current.rows[static_cast<std::size_t>(j)];
    double best = pb.scaled(j, current);
    for (int r = 1; r <= pb.max_replicas[static_cast<std::size_t>(j)]; ++r) {
      const int nodes = (r + per_node - 1) / per_node;
      if (nodes > pb.max_job_nodes) break;
      const double s = pb.scaled(j, nodes, r, true);  // a count, never the job's current row
      if (s > best) {
        best = s;
        want[static_cast<std::size_t>(j)] = r;
      }
    }
    total += want[static_cast<std::size_t>(j)] != kKeep ? want[static_cast<std::size_t>(j)] : replicas_of(current);
    if (total > pb.total_gpus) return std::nullopt;
  }
  return place(pb, want, true);
}

PolluxAllocation pollux_marginal(const PolluxProblem& pb) {
  const int per_node = largest_node(pb);
  std::vector<Choices> jobs;
  for (int j = 0; j < pb.jobs; ++j) jobs.push_back(choices(pb, j, per_node));
  std::vector<int> at(static_cast<std::size_t>(pb.jobs), 0);  // each job's GPU count so far
  int room = pb.total_gpus;
  // A job's best jump from its count within `room`: the count of highest utility gained per GPU
  // (the smallest such count on a tie); nothing when no count gains.
  struct Jump {
    double slope;
    int job, to;
  };
  const auto jump = [&](int j) -> std::optional<Jump> {
    const Choices& c = jobs[static_cast<std::size_t>(j)];
    const int from = at[static_cast<std::size_t>(j)];
    const int last = std::min(static_cast<int>(c.utility.size()) - 1, from + room);
    std::optional<Jump> best;
    for (int g = from + 1; g <= last; ++g) {
      const double gain = c.utility[static_cast<std::size_t>(g)] - c.utility[static_cast<std::size_t>(from)];
      if (!(gain > 0)) continue;
      const double slope = gain / (g - from);
      if (!best || slope > best->slope) best = Jump{slope, j, g};
    }
    return best;
  };
  // Highest slope first, then job order (the priority of attained GPU-time): a deterministic order.
  const auto later = [](const Jump& a, const Jump& b) {
    return a.slope != b.slope ? a.slope < b.slope : a.job > b.job;
  };
  std::priority_queue<Jump, std::vector<Jump>, decltype(later)> queue(later);
  for (int j = 0; j < pb.jobs; ++j)
    if (const auto first = jump(j)) queue.push(*first);
  while (!queue.empty()) {
    const Jump next = queue.top();
    queue.pop();
    int& count = at[static_cast<std::size_t>(next.job)];
    if (next.to - count <= room) {  // else the room shrank since it was queued: look again
      room -= next.to - count;
      count = next.to;
    }
    if (const auto again = jump(next.job)) queue.push(*again);
  }
  std::vector<int> want(static_cast<std::size_t>(pb.jobs));
  for (int j = 0; j < pb.jobs; ++j)
    want[static_cast<std::size_t>(j)] =
        jobs[static_cast<std::size_t>(j)].want[static_cast<std::size_t>(at[static_cast<std::size_t>(j)])];
  return *place(pb, want, false);
}

}  // namespace dnnsim
