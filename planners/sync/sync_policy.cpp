#include "planners/sync/sync_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/common/builtin_registry.hpp"

namespace dnnsim {

bool SyncPolicy::may_release(int, const std::vector<long>&) const { return true; }
void SyncPolicy::on_tick(double, double) {}

namespace {

// Bulk synchronous: every step is a round; the slowest worker sets the pace.
class Bsp final : public SyncPolicy {
 public:
  bool synchronous() const override { return true; }
  bool commit_after_step(int, long, double, double) const override { return true; }
};

// Total asynchrony (ASP; ADSP's "TAP"): every step is committed and applied at once; nobody waits.
class Asp final : public SyncPolicy {
 public:
  bool synchronous() const override { return false; }
  bool commit_after_step(int, long, double, double) const override { return true; }
};

// Stale synchronous parallel (Ho et al., NIPS'13): asynchronous, but a worker that has committed more
// than s steps beyond the slowest one waits for it before it pulls (and so before its next step).
class Ssp final : public SyncPolicy {
 public:
  explicit Ssp(int staleness) : staleness_(staleness) {}
  bool synchronous() const override { return false; }
  bool commit_after_step(int, long, double, double) const override { return true; }
  bool may_release(int worker, const std::vector<long>& commits) const override {
    const long slowest = *std::min_element(commits.begin(), commits.end());
    return commits[static_cast<std::size_t>(worker)] - slowest <= staleness_;
  }
  std::string state() const override { return fmt::format("staleness bound {}", staleness_); }

 private:
  long staleness_;
};

OptionSchema ssp_options() {
  OptionSchema schema;
  schema.integer("staleness", 40, "s, the steps a worker may run ahead of the slowest (ADSP's SSP baseline: 40)")
      .range(0, 1 << 30);
  return schema;
}

// Periodic averaging (local SGD): τ local steps, then a synchronous average. ADACOMM (Wang & Joshi,
// SysML'19, §4) starts with τ0 and every T0 seconds sets τ = ⌈τ0·√(F(now)/F(0))⌉: long local runs
// early, when the loss falls fast and communication dominates, short ones near the error floor.
class PeriodicAveraging final : public SyncPolicy {
 public:
  PeriodicAveraging(int tau, bool adaptive, Seconds period)
      : tau0_(tau), tau_(tau), adaptive_(adaptive), period_(period.value()) {}
  bool synchronous() const override { return true; }
  bool commit_after_step(int, long steps, double, double) const override { return steps >= tau_; }
  double tick_period() const override { return adaptive_ ? period_ : 0.0; }
  void on_tick(double, double loss) override {
    if (initial_loss_ < 0) initial_loss_ = loss;
    if (initial_loss_ <= 0) return;
    tau_ = std::max(1L, static_cast<long>(std::ceil(tau0_ * std::sqrt(std::max(0.0, loss) / initial_loss_))));
  }
  std::string state() const override {
    return adaptive_ ? fmt::format("τ {} → {}", tau0_, tau_) : fmt::format("τ {} (fixed)", tau_);
  }

 private:
  long tau0_, tau_;
  bool adaptive_;
  double period_;
  double initial_loss_ = -1;
};

OptionSchema adacomm_options() {
  OptionSchema schema;
  schema.integer("local_steps", 8, "τ, local steps between averages (τ0 when adaptive)").range(1, 1 << 30);
  schema.boolean("adaptive", true, "τ shrinks with the loss every check_period (Wang & Joshi, SysML'19, eq. 14)");
  schema.quantity<Seconds>("check_period", Seconds(60), "T0, how often the adaptive τ is re-chosen").at_least(1e-9);
  return schema;
}

// ADSP (Hu, Wang, Wu, AAAI'20; papers-cluster.md §6, from strain.py): no worker ever waits; worker k
// commits every Δt_k = max(min_interval, Γ/c − its commit cost) seconds, so every worker commits c
// times per Γ however fast it is (a fast one accumulates more local steps per commit). The server
// searches c by hill climbing: probe c and c + 1 for Γ each, keep climbing while the reward (1/the
// predicted time to the target loss) grows; it searches again every search_period, or at once when
// the loss rose by search_trigger over one check.
// The probe is a state machine on ticks of Γ/2: the loss at a probe's start, middle and end.
class Adsp final : public SyncPolicy {
 public:
  Adsp(const Options& options, double target_loss)
      : gamma_(options.quantity<Seconds>("check_period").value()),
        min_interval_(options.quantity<Seconds>("min_commit_interval").value()),
        search_period_(options.quantity<Seconds>("search_period").value()),
        trigger_(options.number("search_trigger")),
        target_(target_loss),
        rate_(static_cast<int>(options.integer("initial_commit_rate"))) {}

  static OptionSchema options() {
    OptionSchema schema;
    schema.quantity<Seconds>("check_period", Seconds(60), "Γ, the period commits are counted over (strain.py: 60 s)")
        .at_least(1e-9);
    schema.quantity<Seconds>("min_commit_interval", Seconds(10), "MIN_TIME_TO_COMMIT (strain.py: 10 s)");
    schema
        .quantity<Seconds>("search_period", Seconds(1000),
                           "a new search of the commit rate every this long (strain.py: 1000 ticks of 1 s)")
        .at_least(1e-9);
    schema.number("search_trigger", 0.3, "a search also starts when the loss rises by this fraction over one check")
        .range(1e-9, 1e9);
    schema.integer("initial_commit_rate", 1, "commits per worker per Γ before the first search").range(1, 1 << 20);
    return schema;
  }

  bool synchronous() const override { return false; }
  bool commit_after_step(int, long, double since_commit, double commit_cost) const override {
    return since_commit >= std::max(min_interval_, gamma_ / rate_ - commit_cost);
  }
  double tick_period() const override { return gamma_ / 2; }

  void on_tick(double now, double loss) override {
    ++ticks_;
    if (!searching_) {
      const bool first = ticks_ == 1;
      const bool due = now - last_search_end_ >= search_period_;
      // A check every Γ (two ticks): a loss that jumped means the rate in force has gone bad.
      const bool jumped = ticks_ % 2 == 1 && check_loss_ > 0 && (loss - check_loss_) / check_loss_ >= trigger_;
      if (ticks_ % 2 == 1) check_loss_ = loss;
      if (!(first || due || jumped)) return;
      searching_ = true;
      ++searches_;
      best_rate_ = rate_;
      best_reward_ = -1;
      begin_probe(rate_, loss);
      return;
    }
    samples_.push_back(loss);
    if (samples_.size() < 3) return;
    const double reward = adsp_probe_reward(samples_[0], samples_[1], samples_[2], gamma_, target_);
    if (best_reward_ < 0 || reward > best_reward_) {
      // The first probe measures the rate in force; each later one that beats it moves the climb up.
      best_rate_ = rate_;
      best_reward_ = reward;
      begin_probe(rate_ + 1, loss);
      return;
    }
    rate_ = best_rate_;
    searching_ = false;
    last_search_end_ = now;
    check_loss_ = loss;
  }

  std::string state() const override {
    return fmt::format("commit rate {} per {:g} s after {} search{}", rate_, gamma_, searches_,
                       searches_ == 1 ? "" : "es");
  }

 private:
  void begin_probe(int rate, double loss) {
    rate_ = rate;
    samples_.assign(1, loss);
  }

  double gamma_, min_interval_, search_period_, trigger_, target_;
  int rate_;
  bool searching_ = false;
  long ticks_ = 0;
  int searches_ = 0;
  int best_rate_ = 1;
  double best_reward_ = -1;
  double last_search_end_ = 0;
  double check_loss_ = -1;
  std::vector<double> samples_;
};

}  // namespace

// l(t) = 1/(a t + b) + c through (0, l0), (h, l1), (2h, l2): 1/(l − c) is linear in t, so
// 1/(l0 − c) + 1/(l2 − c) = 2/(l1 − c); multiplied out the c² terms cancel and
//   c = (2·l0·l2 − (l0 + l2)·l1) / (l0 + l2 − 2·l1).
// Then b = 1/(l0 − c), a = (1/(l2 − c) − b)/(2h) and t* = (1/(target − c) − b)/a.
double adsp_probe_reward(double l0, double l1, double l2, double h, double target) {
  if (!(l2 < l0)) return 0.0;
  if (l2 <= target) return std::numeric_limits<double>::infinity();
  const double curvature = l0 + l2 - 2 * l1;
  if (curvature > 1e-9 * l0) {  // convex descent: the curve's form applies (not a rounding residue of a line)
    const double c = (2 * l0 * l2 - (l0 + l2) * l1) / curvature;
    if (c < l2 && c < target) {
      const double b = 1 / (l0 - c);
      const double a = (1 / (l2 - c) - b) / (2 * h);
      if (a > 0) return 1 / ((1 / (target - c) - b) / a);
    }
    // A fitted floor at or above the target (three points from the steep start of a probe) predicts
    // "never", which would make every probe tie at zero: the mean descent rate ranks them instead.
  }
  const double rate = (l0 - l2) / (2 * h);
  return 1 / ((l0 - target) / rate);
}

void register_builtin_sync_policies(SyncPolicyRegistry& registry) {
  registry.add("bsp", "bulk synchronous: every step is averaged over all workers; the slowest sets the pace",
               "Valiant 1990; ADSP's BSP baseline (AAAI'20)",
               [](const Options&, const SyncContext&) { return std::make_unique<Bsp>(); });
  registry.add(
      "ssp", "stale synchronous: asynchronous, a worker waits when it is more than `staleness` steps ahead",
      "Ho et al., NIPS'13",
      [](const Options& o, const SyncContext&) {
        return std::make_unique<Ssp>(static_cast<int>(o.integer("staleness")));
      },
      ssp_options());
  registry.add("asp", "total asynchrony (TAP): every step applied at once, nobody waits",
               "Recht et al., Hogwild!, NIPS'11; Dean et al., DistBelief, NIPS'12",
               [](const Options&, const SyncContext&) { return std::make_unique<Asp>(); });
  registry.add(
      "adacomm", "ADACOMM-like periodic averaging, τ = ⌈τ0·√(F(t)/F(0))⌉ every T0 (adaptive: false fixes τ)",
      "Wang & Joshi, SysML'19, §4",
      [](const Options& o, const SyncContext&) {
        return std::make_unique<PeriodicAveraging>(static_cast<int>(o.integer("local_steps")), o.flag("adaptive"),
                                                   o.quantity<Seconds>("check_period"));
      },
      adacomm_options());
  registry.add(
      "adsp", "ADSP-like: no waiting; commit intervals equalise commits per Γ; commit rate hill-climbed online",
      "Hu, Wang, Wu, AAAI'20 (joapolarbear/adsp strain.py)",
      [](const Options& o, const SyncContext& c) { return std::make_unique<Adsp>(o, c.target_loss); }, Adsp::options());
}

const SyncPolicyRegistry& builtin_sync_policies() {
  return builtin_registry<SyncPolicyRegistry, register_builtin_sync_policies>("sync policy");
}

}  // namespace dnnsim
