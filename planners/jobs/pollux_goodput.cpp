#include "planners/jobs/pollux_goodput.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dnnsim {
namespace {

constexpr int kBatchCandidates = 50;  // goodput.py optimize: np.geomspace's default count

}  // namespace

Placement balanced_placement(int nodes, int replicas) {
  Placement placement;
  for (int n = 0; n < nodes; ++n) placement.slices.emplace_back(n, replicas / nodes + (n < replicas % nodes ? 1 : 0));
  return placement;
}

const PolluxApplicationSettings& PolluxGoodput::settings(const JobRecord& job) const {
  static const PolluxApplicationSettings none;
  const auto it = settings_.find(job.model);
  return it == settings_.end() ? none : it->second;
}

double PolluxGoodput::max_local(const JobRecord& job) const { return speed_->largest_local(job, settings_); }

double PolluxGoodput::target_progress(const JobRecord& job) const {
  const auto& app = speed_->application(job);
  return app.epoch_end(app.epochs() - 1);
}

const std::vector<double>& PolluxGoodput::epoch_ends(const JobRecord& job) const {
  const auto it = ends_.find(job.model);
  if (it != ends_.end()) return it->second;
  const auto& app = speed_->application(job);
  std::vector<double> ends;
  for (std::size_t e = 0; e < app.epochs(); ++e) ends.push_back(app.epoch_end(e));
  return ends_[job.model] = std::move(ends);
}

int PolluxGoodput::epoch(const JobRecord& job, double progress) const {
  // applications.py get_epoch: the epoch whose end (the least progress over the batch sizes at that
  // row) has not been reached.
  const std::vector<double>& ends = epoch_ends(job);
  const auto e = std::upper_bound(ends.begin(), ends.end(), progress) - ends.begin();
  return static_cast<int>(std::min<std::ptrdiff_t>(e, static_cast<std::ptrdiff_t>(ends.size()) - 1));
}

namespace {
constexpr int kRateNodes = 16, kRateReplicas = 64;  // the artifact's node cap and replica cap
}  // namespace

PolluxGoodput::Rates PolluxGoodput::rates(const JobRecord& job, int epoch) const {
  auto& tables = rates_[job.model];
  // Sized once, so that the handles of one round stay valid while other epochs fill in.
  if (tables.empty()) tables.resize(epoch_ends(job).size());
  auto& cells = tables.at(static_cast<std::size_t>(epoch));
  if (cells.empty()) cells.assign(static_cast<std::size_t>((kRateNodes + 1) * (kRateReplicas + 1)), std::nan(""));
  return Rates(*this, job, epoch, cells);
}

double PolluxGoodput::Rates::operator()(int nodes, int replicas) const {
  if (nodes > kRateNodes || replicas > kRateReplicas) return goodput_->best(*job_, nodes, replicas, epoch_).rate;
  double& cell = (*cells_)[static_cast<std::size_t>(nodes * (kRateReplicas + 1) + replicas)];
  if (std::isnan(cell)) cell = goodput_->best(*job_, nodes, replicas, epoch_).rate;
  return cell;
}

int PolluxGoodput::max_replicas(const JobRecord& job) const {
  return max_replicas(job, speed_->application(job).validation.back().batch);
}

int PolluxGoodput::max_replicas(const JobRecord& job, double batch) const {
  const auto& s = settings(job);
  if (s.max_replicas > 0) return s.max_replicas;
  return std::max(1, static_cast<int>(batch / speed_->application(job).min_local_bsz));
}

PolluxGoodput::Config PolluxGoodput::evaluate(const JobRecord& job, const Placement& placement, int atomic, int accum,
                                              int epoch) const {
  const auto& app = speed_->application(job);
  Config c;
  c.atomic = atomic;
  c.accum = accum;
  c.batch = static_cast<double>(placement.gpus()) * atomic * (accum + 1);
  const IterationCost step = speed_->measured(job, placement, atomic);
  const double total = step.total().value() + accum * step.compute.value();
  // The rate of the configuration as it runs: the gain at its own batch's statistics.
  c.rate = total > 0 ? app.gain(c.batch, app.grad_stats(c.batch, epoch)) / total : 0.0;
  return c;
}

PolluxGoodput::Config PolluxGoodput::best(const JobRecord& job, const Placement& placement, int epoch) const {
  auto key = std::tuple{job.model, placement.shape(), epoch};
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  return cache_[std::move(key)] = pick(job, placement, epoch);
}

PolluxGoodput::Config PolluxGoodput::pick(const JobRecord& job, const Placement& placement, int epoch) const {
  const auto& app = speed_->application(job);
  const double initial = app.validation.front().batch;
  if (const double fixed = settings(job).fixed_batch_size; fixed > 0) {
    const PolluxMicroSteps steps = app.fixed_batch_steps(fixed, placement.gpus(), max_local(job));
    return steps.atomic >= 1 ? evaluate(job, placement, steps.atomic, steps.accum, epoch) : Config{};
  }
  if (!running_batch_) return rank(job, placement, epoch, initial);
  // The agent's re-picks: rank at the running batch's statistics until the choice is that batch
  // (a handful of steps; a cycle, which the agent would keep running round, ends at the cap).
  constexpr int kRepicks = 16;
  double running = initial;
  if (epoch > 0)
    if (const Config before = best(job, placement, epoch - 1); before.rate > 0) running = before.batch;
  Config choice;
  for (int k = 0; k < kRepicks; ++k) {
    choice = rank(job, placement, epoch, running);
    if (choice.rate <= 0 || choice.batch == running) break;
    running = choice.batch;
  }
  return choice;
}

const std::vector<PolluxGoodput::BatchCandidate>& PolluxGoodput::candidates(const JobRecord& job, int replicas) const {
  auto key = std::pair{job.model, replicas};
  if (const auto it = candidates_.find(key); it != candidates_.end()) return it->second;
  const auto& app = speed_->application(job);
  const double min_local = app.min_local_bsz;
  const double largest_local = max_local(job);
  const double initial = app.validation.front().batch;
  const double largest = app.validation.back().batch;
  const double low = std::max(initial, min_local * replicas);
  std::vector<BatchCandidate> result;
  for (int k = 0; k < kBatchCandidates && low <= largest + kPolluxRounding; ++k) {
    const double batch = low * std::pow(largest / low, static_cast<double>(k) / (kBatchCandidates - 1));
    const double local = batch / replicas;
    const auto [atomic, accum] =
        split_local_batch(local, largest_local, replicas == 1 && local > initial + kPolluxRounding);
    if (atomic < min_local - kPolluxRounding || atomic > largest_local + kPolluxRounding) continue;
    result.push_back(BatchCandidate{atomic, accum, static_cast<double>(replicas) * atomic * (accum + 1)});
  }
  return candidates_[std::move(key)] = std::move(result);
}

PolluxGoodput::Candidate PolluxGoodput::search(const JobRecord& job, int replicas, int epoch, double stats_batch,
                                               const std::vector<StepTimes>& times) const {
  const auto& app = speed_->application(job);
  const PolluxSpeedModel::GradStats pick = app.grad_stats(stats_batch, epoch);
  const std::vector<BatchCandidate>& all = candidates(job, replicas);
  Candidate best;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const StepTimes& t = times[k];
    const double total = t.step + all[k].accum * t.micro;
    const double score = total > 0 ? app.gain(all[k].batch, pick) / total : 0.0;
    if (score > best.score) best = Candidate{all[k].atomic, all[k].accum, score};
  }
  return best;
}

PolluxGoodput::Config PolluxGoodput::rank(const JobRecord& job, const Placement& placement, int epoch,
                                          double stats_batch) const {
  // Ranked by the goodput the agent predicts (gain at the statistics of `stats_batch`), valued as it runs.
  std::vector<StepTimes> measured;
  for (const BatchCandidate& c : candidates(job, placement.gpus())) {
    const IterationCost step = speed_->measured(job, placement, c.atomic);
    measured.push_back(StepTimes{step.total().value(), step.compute.value()});
  }
  const Candidate best = search(job, placement.gpus(), epoch, stats_batch, measured);
  return best.score > 0 ? evaluate(job, placement, best.atomic, best.accum, epoch) : Config{};
}

std::vector<PolluxGoodput::StepTimes> PolluxGoodput::predicted_times(const JobRecord& job,
                                                                     const PolluxPerfParams& params, int nodes,
                                                                     int replicas) const {
  std::vector<StepTimes> times;
  for (const BatchCandidate& c : candidates(job, replicas))
    times.push_back(
        StepTimes{pollux_step_time(params, nodes, replicas, c.atomic), pollux_accum_time(params, c.atomic)});
  return times;
}

double PolluxGoodput::predicted(const JobRecord& job, const std::vector<StepTimes>& times, int replicas, int epoch,
                                double stats_batch) const {
  return search(job, replicas, epoch, stats_batch, times).score;
}

PolluxGoodput::Config PolluxGoodput::chosen(const JobRecord& job, const Placement& placement,
                                            const PolluxPerfParams* params, int epoch, double stats_batch,
                                            int stats_epoch) const {
  const auto& app = speed_->application(job);
  const int replicas = placement.gpus();
  const double fixed = settings(job).fixed_batch_size;
  if (fixed > 0 || params == nullptr) {
    const double batch = fixed > 0 ? fixed : std::max(app.validation.front().batch, app.min_local_bsz * replicas);
    const PolluxMicroSteps steps = app.fixed_batch_steps(batch, replicas, max_local(job));
    return steps.atomic >= 1 ? evaluate(job, placement, steps.atomic, steps.accum, epoch) : Config{};
  }
  const int nodes = static_cast<int>(placement.slices.size());
  const Candidate best =
      search(job, replicas, stats_epoch, stats_batch, predicted_times(job, *params, nodes, replicas));
  if (best.score <= 0) return Config{};
  const int cap = static_cast<int>(app.validation.back().batch / (replicas * (best.accum + 1)));
  return evaluate(job, placement, std::max(1, std::min(best.atomic, cap)), best.accum, epoch);
}

PolluxGoodput::Config PolluxGoodput::best(const JobRecord& job, int nodes, int replicas, int epoch) const {
  return best(job, balanced_placement(nodes, replicas), epoch);
}

std::vector<PolluxGoodput::Segment> PolluxGoodput::segments(const JobRecord& job, const Placement& placement,
                                                            double progress) const {
  const auto& app = speed_->application(job);
  std::vector<Segment> result;
  for (auto e = static_cast<std::size_t>(epoch(job, progress)); e < app.epochs(); ++e)
    result.push_back(Segment{app.epoch_end(e), best(job, placement, static_cast<int>(e)).rate});
  return result;
}

}  // namespace dnnsim
