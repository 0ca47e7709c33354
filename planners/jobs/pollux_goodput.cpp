#include "planners/jobs/pollux_goodput.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/common/located_csv.hpp"

namespace dnnsim {
namespace {

constexpr int kBatchCandidates = 50;  // goodput.py optimize: np.geomspace's default count
constexpr double kEps = 1e-8;         // goodput.py: tolerance of its floor/ceil operations

// Epochs every validation file has (the artifact's max_epochs: rows of the shortest).
std::size_t epochs_of(const PolluxSpeedModel::Application& app) {
  std::size_t epochs = app.validation.front().progress.size();
  for (const auto& v : app.validation) epochs = std::min(epochs, v.progress.size());
  return epochs;
}

// Progress at the end of epoch e: the least over the batch sizes (applications.py get_progress).
double epoch_end(const PolluxSpeedModel::Application& app, std::size_t e) {
  double end = 1e300;
  for (const auto& v : app.validation) end = std::min(end, v.progress[e]);
  return end;
}

}  // namespace

Placement balanced_placement(int nodes, int replicas) {
  Placement placement;
  for (int n = 0; n < nodes; ++n) placement.slices.emplace_back(n, replicas / nodes + (n < replicas % nodes ? 1 : 0));
  return placement;
}

void PolluxGoodput::read_settings(const std::string& csv) {
  DiagnosticSink sink;
  const LocatedCsv table = LocatedCsv::parse(LocatedCsv::read_file(csv), csv, sink, ',');
  if (table.require({"application", "max_local_bsz", "fixed_batch_size", "max_replicas"}, sink)) {
    for (const LocatedCsvRow& row : table.rows()) {
      const auto name = table.text(row, "application", sink);
      PolluxApplicationSettings s;
      const auto optional_number = [&](const char* column, double& into) {
        if (table.text(row, column, sink).value_or("").empty()) return;
        if (auto value = table.number(row, column, sink, 1.0)) into = *value;
      };
      double replicas = 0;
      optional_number("max_local_bsz", s.max_local_bsz);
      optional_number("fixed_batch_size", s.fixed_batch_size);
      optional_number("max_replicas", replicas);
      s.max_replicas = static_cast<int>(replicas);
      if (name) settings_[*name] = s;
    }
  }
  sink.throw_if_any();
}

const PolluxApplicationSettings& PolluxGoodput::settings(const JobRecord& job) const {
  static const PolluxApplicationSettings none;
  const auto it = settings_.find(job.model);
  return it == settings_.end() ? none : it->second;
}

double PolluxGoodput::max_local(const JobRecord& job) const {
  const double measured = speed_->application(job).max_local_bsz;
  const double limit = settings(job).max_local_bsz;
  return limit > 0 ? std::min(limit, measured) : measured;
}

double PolluxGoodput::target_progress(const JobRecord& job) const {
  const auto& app = speed_->application(job);
  return epoch_end(app, epochs_of(app) - 1);
}

const std::vector<double>& PolluxGoodput::epoch_ends(const JobRecord& job) const {
  const auto it = ends_.find(job.model);
  if (it != ends_.end()) return it->second;
  const auto& app = speed_->application(job);
  std::vector<double> ends;
  for (std::size_t e = 0; e < epochs_of(app); ++e) ends.push_back(epoch_end(app, e));
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

PolluxGoodput::Stats PolluxGoodput::stats(const PolluxSpeedModel::Application& app, double batch, int epoch) const {
  // applications.py get_grad_stats: linear in the batch between the measured batches around it.
  const auto& v = app.validation;
  const auto e = static_cast<std::size_t>(epoch);
  const auto at = [&](const PolluxSpeedModel::Validation& table) {
    const std::size_t row = std::min(e, table.grad_sqr.size() - 1);
    return Stats{table.grad_sqr[row], table.grad_var[row]};
  };
  if (batch <= v.front().batch) return at(v.front());
  if (batch >= v.back().batch) return at(v.back());
  const auto hi = std::upper_bound(v.begin(), v.end(), batch, [](double b, const auto& t) { return b < t.batch; });
  const auto lo = hi - 1;
  const double t = (batch - lo->batch) / (hi->batch - lo->batch);
  const Stats a = at(*lo), b = at(*hi);
  return Stats{a.sqr + t * (b.sqr - a.sqr), a.var + t * (b.var - a.var)};
}

double PolluxGoodput::gain(const PolluxSpeedModel::Application& app, double batch, const Stats& s) const {
  // goodput.py efficiency × scale: (var + sqr) / (var / scale + sqr), 1 when undefined.
  const double scale = batch / app.validation.front().batch;
  const double denominator = s.var / scale + s.sqr;
  return denominator > 0 ? (s.var + s.sqr) / denominator : 1.0;
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
  c.rate = total > 0 ? gain(app, c.batch, stats(app, c.batch, epoch)) / total : 0.0;
  return c;
}

PolluxGoodput::Config PolluxGoodput::best(const JobRecord& job, const Placement& placement, int epoch) const {
  auto key = std::tuple{job.model, placement.shape(), epoch};
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  return cache_[std::move(key)] = pick(job, placement, epoch);
}

PolluxGoodput::Config PolluxGoodput::pick(const JobRecord& job, const Placement& placement, int epoch) const {
  const auto& app = speed_->application(job);
  const int replicas = placement.gpus();
  const double min_local = app.min_local_bsz;
  const double largest_local = max_local(job);
  const double initial = app.validation.front().batch;
  const double largest = app.validation.back().batch;
  const auto split = [&](double local, bool at_least_one) {
    // goodput.py optimize with accumulation: accum so that atomic ≤ the largest local batch; one
    // replica above the initial batch accumulates at least once.
    int accum = static_cast<int>(std::ceil(local / largest_local - kEps)) - 1;
    if (at_least_one) accum = std::max(accum, 1);
    const int atomic = static_cast<int>(std::ceil(local / (accum + 1) - kEps));
    return std::pair{atomic, accum};
  };
  if (const double fixed = settings(job).fixed_batch_size; fixed > 0) {
    // simulator.py update_local_bsz with a target batch size.
    const double local = std::ceil(fixed / replicas - kEps);
    auto [atomic, accum] = split(local, replicas == 1 && fixed > initial);
    atomic = std::min(atomic, static_cast<int>(largest / (replicas * (accum + 1))));
    return atomic >= 1 ? evaluate(job, placement, atomic, accum, epoch) : Config{};
  }
  const Stats pick = stats(app, initial, epoch);
  const double low = std::max(initial, min_local * replicas);
  if (low > largest + kEps) return Config{};
  Config best_config;
  double best_score = 0.0;
  for (int k = 0; k < kBatchCandidates; ++k) {
    const double batch = low * std::pow(largest / low, static_cast<double>(k) / (kBatchCandidates - 1));
    const double local = batch / replicas;
    const auto [atomic, accum] = split(local, replicas == 1 && local > initial + kEps);
    if (atomic < min_local - kEps || atomic > largest_local + kEps) continue;
    // Ranked by the goodput the agent predicts (gain at the smallest batch's statistics).
    const double b = static_cast<double>(replicas) * atomic * (accum + 1);
    const IterationCost step = speed_->measured(job, placement, atomic);
    const double total = step.total().value() + accum * step.compute.value();
    const double score = total > 0 ? gain(app, b, pick) / total : 0.0;
    if (score > best_score) {
      best_score = score;
      best_config = evaluate(job, placement, atomic, accum, epoch);
    }
  }
  return best_config;
}

PolluxGoodput::Config PolluxGoodput::best(const JobRecord& job, int nodes, int replicas, int epoch) const {
  return best(job, balanced_placement(nodes, replicas), epoch);
}

std::vector<PolluxGoodput::Segment> PolluxGoodput::segments(const JobRecord& job, const Placement& placement,
                                                            double progress) const {
  const auto& app = speed_->application(job);
  std::vector<Segment> result;
  for (auto e = static_cast<std::size_t>(epoch(job, progress)); e < epochs_of(app); ++e)
    result.push_back(Segment{epoch_end(app, e), best(job, placement, static_cast<int>(e)).rate});
  return result;
}

}  // namespace dnnsim
