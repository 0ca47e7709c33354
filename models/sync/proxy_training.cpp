#include "models/sync/proxy_training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>

#include "dnnsim/source_paths.hpp"
#include "models/common/diagnostics.hpp"
#include "models/common/parse_number.hpp"
#include "models/common/random.hpp"

namespace dnnsim {
namespace {

constexpr int kPixels = 64;
constexpr int kInputs = kPixels + 1;  // + bias
constexpr int kClasses = 10;
constexpr int kMaxPixel = 16;
constexpr int kFitPoints = 64;

// Uniform index in [0, n): rejection of the top partial block of 2^64 values, then modulo, so that
// the draw is unbiased and the same on every platform.
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = n;
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t value = rng();
  while (value >= limit) value = rng();
  return static_cast<std::size_t>(value % range);
}

// SplitMix64 (Steele et al., "Fast splittable pseudorandom number generators", OOPSLA'14): one
// independent-looking seed per (run seed, regime, replica), so that adding a regime leaves the others'
// streams unchanged.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t regime, std::uint64_t replica) {
  return splitmix64_mix(seed ^ (regime * kSplitMix64Increment) ^ (replica * 0xD1B54A32D192ED03ULL));
}

using Weights = Eigen::VectorXd;  // a ProxyModel's flat parameters

// Softmax regression on the whole data set; W (kInputs × kClasses) is the flat vector, column-major.
class Softmax final : public ProxyModel {
 public:
  explicit Softmax(const DigitsData& data) : data_(data) {}

  Weights initial_parameters() const override { return Weights::Zero(kInputs * kClasses); }

  // Mean cross-entropy over all samples: log Σ_k exp(z_k) − z_label, with the row maximum
  // subtracted before exp for range.
  double loss(const Weights& flat) const override {
    const Eigen::MatrixXd z = data_.inputs * matrix(flat);
    double total = 0.0;
    for (Eigen::Index i = 0; i < z.rows(); ++i) {
      const double top = z.row(i).maxCoeff();
      total += top + std::log((z.row(i).array() - top).exp().sum()) - z(i, data_.labels[static_cast<std::size_t>(i)]);
    }
    return total / static_cast<double>(z.rows());
  }

  // B_simple in closed form: the per-sample gradients g_i = x_i ⊗ (p_i − y_i) have squared norms
  // |x_i|²·|p_i − y_i|².
  double noise_scale(const Weights& flat) override {
    Eigen::MatrixXd p = data_.inputs * matrix(flat);
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
      p.row(i).array() -= p.row(i).maxCoeff();
      p.row(i) = p.row(i).array().exp().matrix();
      p.row(i) /= p.row(i).sum();
      p(i, data_.labels[static_cast<std::size_t>(i)]) -= 1.0;
    }
    const double n = static_cast<double>(p.rows());
    const double mean_sq = (data_.inputs.rowwise().squaredNorm().array() * p.rowwise().squaredNorm().array()).sum() / n;
    const double g_sq = (data_.inputs.transpose() * p / n).squaredNorm();
    return (mean_sq - g_sq) / g_sq;
  }

  // Xbᵀ(softmax(Xb·W) − Y)/B over the samples.
  void gradient(const Weights& flat, const std::vector<std::size_t>& samples, Weights& out) override {
    const auto batch = static_cast<Eigen::Index>(samples.size());
    xb_.resize(batch, kInputs);
    onehot_.setZero(batch, kClasses);
    for (Eigen::Index r = 0; r < batch; ++r) {
      const std::size_t i = samples[static_cast<std::size_t>(r)];
      xb_.row(r) = data_.inputs.row(static_cast<Eigen::Index>(i));
      onehot_(r, data_.labels[i]) = 1.0;
    }
    Eigen::MatrixXd p = xb_ * matrix(flat);
    for (Eigen::Index r = 0; r < p.rows(); ++r) {
      p.row(r).array() -= p.row(r).maxCoeff();
      p.row(r) = p.row(r).array().exp().matrix();
      p.row(r) /= p.row(r).sum();
    }
    out.resize(kInputs * kClasses);
    Eigen::Map<Eigen::MatrixXd>(out.data(), kInputs, kClasses).noalias() =
        xb_.transpose() * (p - onehot_) / static_cast<double>(batch);
  }

  std::size_t sample_count() const override { return data_.labels.size(); }
  std::string description() const override {
    return fmt::format("softmax regression (64 pixels + bias -> 10 classes, mean cross-entropy over all {} samples)",
                       data_.labels.size());
  }

 private:
  static Eigen::Map<const Eigen::MatrixXd> matrix(const Weights& flat) {
    return Eigen::Map<const Eigen::MatrixXd>(flat.data(), kInputs, kClasses);
  }

  const DigitsData& data_;
  Eigen::MatrixXd xb_, onehot_;
};

enum class RegimeKind { sequential, synchronous, local, asynchronous };

struct Regime {
  RegimeKind kind = RegimeKind::sequential;
  int workers = 1;
  int local_steps = 1;
  std::uint64_t id = 0;  // seed stream
};

// One replica of a regime: global parameters and what the regime keeps besides.
class Run {
 public:
  Run(const Regime& regime, const DigitsData& data, const ProxyOptions& options, std::uint64_t seed)
      : regime_(regime),
        model_(options.model ? options.model(data) : softmax_proxy(data)),
        eta_(options.learning_rate),
        skew_(options.label_skew),
        data_size_(data.labels.size()),
        samples_(static_cast<std::size_t>(options.batch)),
        rng_(seed),
        w_(model_->initial_parameters()),
        g_(w_.size()),
        sum_(w_.size()) {
    // The ring holds W_{t−σ} … W_t; at the start every worker pulled W_0.
    if (regime.kind == RegimeKind::asynchronous) history_.assign(static_cast<std::size_t>(regime.workers), w_);
    // Worker k's own samples under label skew: the digits l with l mod g = k mod g, g = min(n, 10) —
    // McMahan et al.'s pathological partition by label (FedAvg, AISTATS'17), one or more classes each.
    if (skew_ > 0.0 && regime.kind != RegimeKind::sequential) {
      const int groups = std::min(regime.workers, kClasses);
      shards_.resize(static_cast<std::size_t>(regime.workers));
      for (int k = 0; k < regime.workers; ++k)
        for (std::size_t i = 0; i < data.labels.size(); ++i)
          if (data.labels[i] % groups == k % groups) shards_[static_cast<std::size_t>(k)].push_back(i);
    }
  }

  // One update of the global model: a step, a round or a commit.
  void advance() {
    switch (regime_.kind) {
      case RegimeKind::sequential:
        gradient(w_, nullptr);
        w_ -= eta_ * g_;
        break;
      case RegimeKind::synchronous:
        sum_.setZero();
        for (int k = 0; k < regime_.workers; ++k) {
          gradient(w_, shard(k));
          sum_ += g_;
        }
        w_ -= eta_ * sum_ / static_cast<double>(regime_.workers);
        break;
      case RegimeKind::local: {
        sum_.setZero();
        for (int k = 0; k < regime_.workers; ++k) {
          Weights local = w_;
          for (int s = 0; s < regime_.local_steps; ++s) {
            gradient(local, shard(k));
            local -= eta_ * g_;
          }
          sum_ += local;
        }
        w_ = sum_ / static_cast<double>(regime_.workers);
        break;
      }
      case RegimeKind::asynchronous: {
        // Commit t applies the gradient taken at W_{t−σ}, σ = n − 1 (W_0 for the first n − 1 commits).
        // The ring keeps W_u in slot u mod n, so W_{t−n+1} is in slot (t + 1) mod n, which then
        // receives W_{t+1}.
        const std::size_t slot = static_cast<std::size_t>((commits_ + 1) % regime_.workers);
        gradient(history_[slot], shard(static_cast<int>(commits_ % regime_.workers)));
        w_ -= eta_ * g_;
        history_[slot] = w_;
        ++commits_;
        break;
      }
    }
  }
  [[nodiscard]] double loss() const { return model_->loss(w_); }
  [[nodiscard]] double noise_scale() const { return model_->noise_scale(w_); }

 private:
  // The gradient at `w` of B samples drawn with replacement into g_: each from `shard` with
  // probability `skew` (a worker's own data, non-i.i.d.), else from all samples.
  void gradient(const Weights& w, const std::vector<std::size_t>* shard) {
    const std::size_t n = data_size_;
    for (std::size_t& i : samples_) {
      const bool own = shard != nullptr && skew_ > 0.0 && uniform_draw(rng_) < skew_;
      i = own ? (*shard)[draw_index(rng_, shard->size())] : draw_index(rng_, n);
    }
    model_->gradient(w, samples_, g_);
  }

  [[nodiscard]] const std::vector<std::size_t>* shard(int worker) const {
    return shards_.empty() ? nullptr : &shards_[static_cast<std::size_t>(worker)];
  }

  Regime regime_;
  std::unique_ptr<ProxyModel> model_;
  double eta_;
  double skew_;
  std::size_t data_size_ = 0;
  std::vector<std::size_t> samples_;
  std::vector<std::vector<std::size_t>> shards_;
  std::mt19937_64 rng_;
  Weights w_, g_, sum_;
  std::vector<Weights> history_;
  long commits_ = 0;
};

// The next update count at which the loss is evaluated: every update up to 16, then about 6 % apart.
long next_evaluation(long u) { return u + std::max(1L, (u + 15) / 16); }

// The replicas' mean global loss at the evaluation points, until the mean falls to `stop_loss` or
// `max_updates` have been made.
struct Trajectory {
  std::vector<double> updates, loss;
  double final_noise_scale = 0.0;  // replicas' mean B_simple at the end
};

Trajectory run_regime(const Regime& regime, const DigitsData& data, const ProxyOptions& options, long max_updates,
                      double stop_loss) {
  std::vector<Run> runs;
  runs.reserve(static_cast<std::size_t>(options.replicas));
  for (int r = 0; r < options.replicas; ++r)
    runs.emplace_back(regime, data, options, derive_seed(options.seed, regime.id, static_cast<std::uint64_t>(r)));
  Trajectory t;
  auto evaluate = [&](long u) {
    double sum = 0.0;
    for (const Run& run : runs) sum += run.loss();
    t.updates.push_back(static_cast<double>(u));
    t.loss.push_back(sum / static_cast<double>(runs.size()));
  };
  evaluate(0);
  long u = 0;
  while (u < max_updates && t.loss.back() > stop_loss) {
    const long next = std::min(next_evaluation(u), max_updates);
    for (Run& run : runs)
      for (long i = u; i < next; ++i) run.advance();
    u = next;
    evaluate(u);
  }
  for (const Run& run : runs) t.final_noise_scale += run.noise_scale() / static_cast<double>(runs.size());
  return t;
}

// Updates at which the trajectory first falls to `level`, linear between evaluations; NaN if never.
double crossing(const Trajectory& t, double level) {
  for (std::size_t i = 1; i < t.loss.size(); ++i) {
    if (t.loss[i] <= level) {
      const double l0 = t.loss[i - 1], l1 = t.loss[i];
      const double f = l0 > l1 ? (l0 - level) / (l0 - l1) : 1.0;
      return t.updates[i - 1] + f * (t.updates[i] - t.updates[i - 1]);
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The trajectory's loss after `updates`, linear between evaluations (updates within its range).
double loss_at(const Trajectory& t, double updates) {
  const auto it = std::lower_bound(t.updates.begin(), t.updates.end(), updates);
  const std::size_t i = static_cast<std::size_t>(it - t.updates.begin());
  if (i == 0) return t.loss.front();
  if (i == t.updates.size()) return t.loss.back();
  const double f = (updates - t.updates[i - 1]) / (t.updates[i] - t.updates[i - 1]);
  return t.loss[i - 1] + f * (t.loss[i] - t.loss[i - 1]);
}

// The worth of a regime: least squares of K(ℓ) = w·R(ℓ) over the levels reached, w = ΣKR / ΣR².
WorthPoint measure_worth(const Trajectory& t, const std::vector<double>& levels, const std::vector<double>& level_steps,
                         int x) {
  WorthPoint point;
  point.x = x;
  double kr = 0.0, rr = 0.0;
  for (std::size_t j = 0; j < levels.size(); ++j) {
    const double r = crossing(t, levels[j]);
    if (std::isnan(r)) continue;
    kr += level_steps[j] * r;
    rr += r * r;
    point.level_worth.push_back(level_steps[j] / r);
    ++point.levels_reached;
  }
  // A regime that reached no level within its updates (diverged, or stalled above the first level:
  // the tanh network's asynchronous commits at a large η·σ) is worth nothing, not left out of the
  // fit: its worth is below K(ℓ₁)/updates, a few hundredths of a step.
  point.worth = rr > 0.0 ? kr / rr : 0.0;
  return point;
}

// 1-D least squares of factor(x) = model(x, p) over p ≥ 0: p = s/(1 − s) on s ∈ [0, 1) covers
// [0, ∞); a grid of 200 finds the basin, golden section refines it between the grid neighbours.
template <typename Model>
OneParameterFit fit_one_parameter(std::vector<WorthPoint> points, Model model) {
  auto sse = [&](double s) {
    const double p = s / (1.0 - s);
    double total = 0.0;
    for (const WorthPoint& point : points)
      if (std::isfinite(point.factor)) total += std::pow(point.factor - model(point.x, p), 2);
    return total;
  };
  constexpr int kGrid = 200;
  constexpr double kTop = 1.0 - 1e-6;  // p up to 10⁶
  int best = 0;
  double best_sse = sse(0.0);
  for (int i = 1; i <= kGrid; ++i) {
    const double e = sse(kTop * i / kGrid);
    if (e < best_sse) best_sse = e, best = i;
  }
  double lo = kTop * std::max(0, best - 1) / kGrid, hi = kTop * std::min(kGrid, best + 1) / kGrid;
  const double inv_phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double m1 = hi - inv_phi * (hi - lo), m2 = lo + inv_phi * (hi - lo);
  double e1 = sse(m1), e2 = sse(m2);
  for (int iter = 0; iter < 100; ++iter) {
    if (e1 < e2) {
      hi = m2, m2 = m1, e2 = e1;
      m1 = hi - inv_phi * (hi - lo), e1 = sse(m1);
    } else {
      lo = m1, m1 = m2, e1 = e2;
      m2 = lo + inv_phi * (hi - lo), e2 = sse(m2);
    }
  }
  // The basin may be the grid point itself, p = 0 above all (the bound): keep the best of the three,
  // the smallest on a tie, so that a clamped parameter is 0 and not 10⁻¹⁷.
  double s = (lo + hi) / 2.0;
  if (best_sse <= sse(s)) s = kTop * best / kGrid;
  if (sse(0.0) <= sse(s)) s = 0.0;
  OneParameterFit fit;
  fit.value = s / (1.0 - s);
  int counted = 0;
  double total = 0.0;
  for (const WorthPoint& point : points)
    if (std::isfinite(point.factor)) total += std::pow(point.factor - model(point.x, fit.value), 2), ++counted;
  fit.rms = counted > 0 ? std::sqrt(total / counted) : std::numeric_limits<double>::quiet_NaN();
  fit.points = std::move(points);
  return fit;
}

double averaging_gain(int n, double beta) { return (1.0 + beta) / (1.0 + beta / n); }

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(".nan"); }

}  // namespace

std::unique_ptr<ProxyModel> softmax_proxy(const DigitsData& data) { return std::make_unique<Softmax>(data); }

DigitsData load_digits(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "cannot open the digits file");
  DiagnosticSink sink;
  DigitsData data;
  std::vector<double> rows;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::size_t pos = 0;
    int field = 0;
    bool bad = false;
    std::vector<int> values;
    while (pos <= line.size() && !bad) {
      const std::size_t end = std::min(line.find(',', pos), line.size());
      const std::string text = line.substr(pos, end - pos);
      const int column = static_cast<int>(pos) + 1;
      if (field == kPixels + 1) {
        sink.error({path, line_no, column}, "expected the end of the line after the label (65 fields)");
        bad = true;
        break;
      }
      const int top = field < kPixels ? kMaxPixel : kClasses - 1;
      const int value = parse_number<int>(text).value_or(-1);
      if (value < 0 || value > top) {
        sink.error({path, line_no, column}, fmt::format("expected {} 0..{}, got '{}'",
                                                        field < kPixels ? "a pixel value" : "a label", top, text));
        bad = true;
      }
      values.push_back(value);
      ++field;
      pos = end + 1;
    }
    if (!bad && field != kPixels + 1) {
      sink.error({path, line_no, static_cast<int>(line.size()) + 1},
                 fmt::format("expected 65 fields (64 pixels, then the label), got {}", field));
      bad = true;
    }
    if (bad) continue;
    for (int k = 0; k < kPixels; ++k)
      rows.push_back(values[static_cast<std::size_t>(k)] / static_cast<double>(kMaxPixel));
    rows.push_back(1.0);
    data.labels.push_back(values.back());
  }
  if (data.labels.empty() && sink.empty()) sink.error({path, 0, 0}, "no samples");
  sink.throw_if_any();
  data.inputs = Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      rows.data(), static_cast<Eigen::Index>(data.labels.size()), kInputs);
  return data;
}

const DigitsData& shipped_digits() {
  static const DigitsData data = load_digits(std::string(DNNSIM_DATA_DIR) + "/convergence/digits.csv");
  return data;
}

ProxyOptions ProxyOptions::quick_options() {
  ProxyOptions options;
  options.sequential_steps = 600;
  options.replicas = 2;
  options.levels = 5;
  options.quick = true;
  return options;
}

ConvergenceCalibration calibrate_convergence(const DigitsData& data, const ProxyOptions& options,
                                             const std::function<void(const std::string&)>& progress) {
  if (options.batch < 1 || options.replicas < 1 || options.levels < 1 || options.sequential_steps < 2 ||
      !(options.learning_rate > 0.0) || !(options.label_skew >= 0.0 && options.label_skew <= 1.0))
    throw std::invalid_argument("calibrate_convergence: batch, replicas, levels, steps and η must be positive");
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  ConvergenceCalibration cal;
  cal.options = options;
  std::uint64_t next_id = 0;
  const long k_max = options.sequential_steps;

  const Trajectory sequential = run_regime({RegimeKind::sequential, 1, 1, next_id++}, data, options, k_max,
                                           -std::numeric_limits<double>::infinity());
  cal.initial_loss = sequential.loss.front();
  const std::unique_ptr<ProxyModel> model = options.model ? options.model(data) : softmax_proxy(data);
  cal.initial_noise_scale = model->noise_scale(model->initial_parameters());
  cal.final_noise_scale = sequential.final_noise_scale;
  cal.final_loss = sequential.loss.back();
  // The curve is fitted on the trajectory resampled at 65 evenly spaced steps, not at the evaluation
  // points (crowded at the start): the model is asked how many steps a loss takes, and most steps
  // are spent late.
  std::vector<double> fit_steps, fit_loss;
  for (int i = 0; i <= kFitPoints; ++i) {
    fit_steps.push_back(static_cast<double>(k_max) * i / kFitPoints);
    fit_loss.push_back(loss_at(sequential, fit_steps.back()));
  }
  cal.curve = fit_loss_curve(fit_steps, fit_loss);
  say(fmt::format("sequential: {} steps, loss {:.4f} → {:.4f}; L(K) = 1/({:.4g}·K + {:.4g}) + {:.4g}, rms {:.3g}",
                  k_max, cal.initial_loss, cal.final_loss, cal.curve.a, cal.curve.b, cal.curve.c, cal.curve.rms));

  // Levels at K_max/2, K_max/4, …: the mean sequential loss there (interpolated), highest first.
  for (int j = options.levels; j >= 1; --j) {
    const double level = loss_at(sequential, static_cast<double>(k_max) / std::pow(2.0, j));
    // A noisy average can rise between evaluations; a level must lie strictly below the previous one.
    if (!cal.levels.empty() && level >= cal.levels.back()) continue;
    cal.levels.push_back(level);
    cal.level_steps.push_back(crossing(sequential, level));
    cal.level_steps_fitted.push_back(level > cal.curve.c ? (1.0 / (level - cal.curve.c) - cal.curve.b) / cal.curve.a
                                                         : std::numeric_limits<double>::infinity());
  }
  const double lowest = cal.levels.back();

  std::vector<WorthPoint> sync_points;
  for (int n : options.sync_workers) {
    const Trajectory t = run_regime({RegimeKind::synchronous, n, 1, next_id++}, data, options, k_max, lowest);
    WorthPoint p = measure_worth(t, cal.levels, cal.level_steps, n);
    p.factor = p.worth;
    say(fmt::format("synchronous n={}: worth {:.3f} steps per step ({} of {} levels)", n, p.worth, p.levels_reached,
                    cal.levels.size()));
    sync_points.push_back(std::move(p));
  }
  cal.beta = fit_one_parameter(std::move(sync_points), [](int n, double beta) { return averaging_gain(n, beta); });
  say(fmt::format("β = {:.4g} (rms {:.3g}); McCandlish's B_simple/B: {:.3g} at the start, {:.3g} after {} steps",
                  cal.beta.value, cal.beta.rms, cal.initial_noise_scale / options.batch,
                  cal.final_noise_scale / options.batch, k_max));

  const double gain = averaging_gain(options.local_workers, cal.beta.value);
  std::vector<WorthPoint> local_points;
  for (int m : options.local_steps) {
    const Trajectory t =
        run_regime({RegimeKind::local, options.local_workers, m, next_id++}, data, options, k_max, lowest);
    WorthPoint p = measure_worth(t, cal.levels, cal.level_steps, m);
    p.factor = p.worth / (m * gain);
    say(fmt::format("local SGD n={} m={}: worth {:.3f} steps per round, φ_local {:.3f}", options.local_workers, m,
                    p.worth, p.factor));
    local_points.push_back(std::move(p));
  }
  cal.mu = fit_one_parameter(std::move(local_points), [](int m, double mu) { return 1.0 / (1.0 + mu * (m - 1)); });
  say(fmt::format("μ = {:.4g} (rms {:.3g})", cal.mu.value, cal.mu.rms));

  std::vector<WorthPoint> async_points;
  for (int n : options.async_workers) {
    const Trajectory t = run_regime({RegimeKind::asynchronous, n, 1, next_id++}, data, options, 2 * k_max, lowest);
    WorthPoint p = measure_worth(t, cal.levels, cal.level_steps, n - 1);
    p.factor = p.worth;
    say(fmt::format("asynchronous n={} (σ={}): worth {:.3f} steps per commit ({} of {} levels)", n, n - 1, p.worth,
                    p.levels_reached, cal.levels.size()));
    async_points.push_back(std::move(p));
  }
  cal.lambda =
      fit_one_parameter(std::move(async_points), [](int sigma, double lambda) { return 1.0 / (1.0 + lambda * sigma); });
  say(fmt::format("λ = {:.4g} (rms {:.3g})", cal.lambda.value, cal.lambda.rms));

  cal.source = fmt::format(
      "{} trained by minibatch SGD on the UCI optical digits (data/convergence/digits.csv), B = {}, eta = {}, seed {}, "
      "{} sequential steps, {} replicas per regime{}{}",
      model->description(), options.batch, options.learning_rate, options.seed, k_max, options.replicas,
      options.label_skew > 0 ? fmt::format(", label skew {} (worker k draws that share of its samples from the digits "
                                           "l = k mod min(n, 10))",
                                           options.label_skew)
                             : "",
      options.quick ? " (quick)" : "");
  return cal;
}

std::string dump_convergence_calibration(const ConvergenceCalibration& cal) {
  std::string out =
      "# dnnsim statistical-efficiency parameters (models/sync/statistical_efficiency.hpp), written by\n"
      "# `dnnsim calibrate convergence` (docs/calibration.md, \"Statistical efficiency\").\n";
  out += fmt::format("a: {}\nb: {}\nc: {}\n", number(cal.curve.a), number(cal.curve.b), number(cal.curve.c));
  out += fmt::format("beta: {}\nmu: {}\nlambda: {}\n", number(cal.beta.value), number(cal.mu.value),
                     number(cal.lambda.value));
  out += fmt::format("source: {}\n", quoted(cal.source));
  out += "fit:\n";
  out +=
      fmt::format("  loss_curve: {{rms: {}, converged: {}, initial_loss: {}, final_loss: {}}}\n", number(cal.curve.rms),
                  cal.curve.ok ? "true" : "false", number(cal.initial_loss), number(cal.final_loss));
  auto list = [](const std::vector<double>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + number(values[i]);
    return text + "]";
  };
  out += fmt::format("  levels: {}\n", list(cal.levels));
  out += fmt::format("  level_steps: {}\n", list(cal.level_steps));
  out += fmt::format("  level_steps_fitted: {}\n", list(cal.level_steps_fitted));
  auto section = [&](const char* name, const char* x, const char* factor, const OneParameterFit& fit) {
    out += fmt::format("  {}:\n    rms: {}\n    points:\n", name, number(fit.rms));
    for (const WorthPoint& p : fit.points)
      out += fmt::format("      - {{{}: {}, worth: {}, {}: {}, levels_reached: {}, level_worth: {}}}\n", x, p.x,
                         number(p.worth), factor, number(p.factor), p.levels_reached, list(p.level_worth));
  };
  section("beta", "n", "g", cal.beta);
  out += fmt::format("    noise_scale: {{B_simple_initial: {}, B_simple_final: {}}}\n", number(cal.initial_noise_scale),
                     number(cal.final_noise_scale));
  section("mu", "m", "phi_local", cal.mu);
  section("lambda", "sigma", "phi_stale", cal.lambda);
  return out;
}

}  // namespace dnnsim
