#include "sim/cluster/train_scheduler.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>

#include "models/common/diagnostics.hpp"
#include "models/common/input_file.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/marl/policy.hpp"
#include "planners/jobs/placement.hpp"
#include "sim/process/child_process.hpp"
#include "sim/report/report.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/cluster/cluster_kind.hpp"

namespace dnnsim {
namespace {

struct EpisodeOutcome {
  EpisodeRecord record;
  std::vector<float> gradient;
  std::vector<LabelledState> labelled;
};

// The child's message: 'S' + the record's numbers + the gradient, or 'E' + an error text.
ChildProcess start_episode(const TrainSchedulerOptions& options, const std::vector<std::string>& overrides,
                           const MarlPolicy& policy, const MarlTrainingOptions& training, int episode) {
  return ChildProcess::run_function([&]() -> std::string {
    try {
      const std::uint64_t seed = options.seed + static_cast<std::uint64_t>(episode);
      std::vector<std::string> episode_overrides = overrides;
      episode_overrides.push_back(fmt::format("workload.seed={}", seed));
      const Scenario scenario = load_scenario(options.scenario, episode_overrides);
      LearningEpisode learning(policy, seed, training);
      SimulationOptions sim_options;
      sim_options.learning = &learning;
      const SimulationResult result = run_scenario(scenario, sim_options);
      const auto summary = make_summary(scenario, result);
      const auto outcome = learning.finish(result.makespan_s);
      const double numbers[] = {static_cast<double>(seed),
                                summary.at("cluster").at("jct_s").at("mean").get<double>(),
                                outcome.episode_return,
                                outcome.loss,
                                outcome.entropy,
                                outcome.cross_entropy,
                                static_cast<double>(outcome.steps),
                                outcome.agreement,
                                static_cast<double>(outcome.gradient.size())};
      std::string message = "S";
      message.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
      message.append(reinterpret_cast<const char*>(outcome.gradient.data()), outcome.gradient.size() * sizeof(float));
      for (const LabelledState& state : outcome.labelled) append_labelled(message, state);
      return message;
    } catch (const InputError& error) {
      return "E" + format_input_error(error);
    } catch (const std::exception& error) {
      return std::string("E") + error.what();
    }
  });
}

EpisodeOutcome finish_episode(ChildProcess& child, int episode, const MarlTrainingOptions& phase) {
  const ChildResult run = child.wait();
  const std::string& bytes = run.output;
  if (bytes.empty())
    throw std::runtime_error(run.exit.how == ChildExit::How::killed_by_signal
                                 ? fmt::format("train-scheduler: episode {} died of signal {}", episode, run.exit.code)
                                 : fmt::format("train-scheduler: episode {} ended without a result", episode));
  if (bytes[0] == 'E')
    throw std::runtime_error(fmt::format("train-scheduler: episode {}: {}", episode, bytes.substr(1)));
  double numbers[9];
  if (bytes.size() < 1 + sizeof numbers)
    throw std::runtime_error(fmt::format("train-scheduler: episode {}: truncated result", episode));
  std::memcpy(numbers, bytes.data() + 1, sizeof numbers);
  EpisodeOutcome outcome;
  const bool imitation = phase.teacher != nullptr;
  outcome.record = EpisodeRecord{imitation,
                                 episode,
                                 static_cast<std::uint64_t>(numbers[0]),
                                 numbers[1],
                                 numbers[2],
                                 numbers[3],
                                 numbers[4],
                                 numbers[5],
                                 static_cast<std::size_t>(numbers[6]),
                                 imitation ? phase.teacher_share : 0.0,
                                 numbers[7]};
  const auto count = static_cast<std::size_t>(numbers[8]);
  const std::size_t end = 1 + sizeof numbers + count * sizeof(float);
  if (bytes.size() < end)
    throw std::runtime_error(fmt::format("train-scheduler: episode {}: truncated gradient", episode));
  outcome.gradient.resize(count);
  std::memcpy(outcome.gradient.data(), bytes.data() + 1 + sizeof numbers, count * sizeof(float));
  try {
    outcome.labelled = read_labelled(bytes, end);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(fmt::format("train-scheduler: episode {}: {}", episode, error.what()));
  }
  return outcome;
}

// One row per episode; `mean_jct_s_avg` is the trailing mean of the last kCurveWindow episodes' mean
// JCT of the same phase (each episode is another stream, so one episode's value is mostly its
// stream's): the line to judge whether training has flattened.
constexpr std::size_t kCurveWindow = 50;

// `init`: the file name of the policy training started from, a last column on every row ("": none,
// and no column, so that the curves of fresh trainings keep their bytes).
void write_curve(const std::string& path, const std::vector<EpisodeRecord>& curve, std::uint64_t training_seed,
                 const std::string& init) {
  std::ofstream out(path);
  const std::string init_cell = init.empty() ? "" : "," + init;
  out << "training_seed,episode,seed,mean_jct_s,mean_jct_s_avg,return,loss,entropy,steps,phase,cross_entropy,"
         "teacher_share,agreement"
      << (init.empty() ? "" : ",init") << '\n';
  double window_sum = 0.0;
  std::size_t start = 0;  // the phase's first row
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const EpisodeRecord& r = curve[i];
    if (i > 0 && r.imitation != curve[i - 1].imitation) start = i, window_sum = 0.0;
    const std::size_t in_phase = i - start;
    window_sum += r.mean_jct_s - (in_phase >= kCurveWindow ? curve[i - kCurveWindow].mean_jct_s : 0.0);
    const double average = window_sum / static_cast<double>(std::min(in_phase + 1, kCurveWindow));
    out << fmt::format("{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{:.6g},{:.6g},{:.6g}{}\n", training_seed,
                       r.episode, r.seed, r.mean_jct_s, average, r.episode_return, r.loss, r.entropy, r.steps,
                       r.imitation ? "imitate" : "train", r.cross_entropy, r.teacher_share, r.agreement, init_cell);
  }
  if (!out) throw std::runtime_error("train-scheduler: cannot write " + path);
}

}  // namespace

namespace {

std::string beside(const std::string& policy_path, const std::string& suffix) {
  std::filesystem::path path(policy_path);
  if (path.extension() == ".pt") path.replace_extension();
  return path.string() + suffix;
}

}  // namespace

std::string curve_path_for(const std::string& policy_path) { return beside(policy_path, ".curve.csv"); }

std::string imitated_path_for(const std::string& policy_path) { return beside(policy_path, ".imitated.pt"); }

std::string checkpoint_path_for(const std::string& policy_path, int episodes) {
  return beside(policy_path, fmt::format(".ep{}.pt", episodes));
}

TrainSchedulerResult train_scheduler(const TrainSchedulerOptions& options) {
  if (const auto dir = std::filesystem::path(options.out).parent_path(); !dir.empty())
    create_output_directory(dir.string());
  // The scenario is checked once, whole, with the fresh weights standing in for its policy file.
  MarlPolicy policy(options.seed);
  const std::string initial = options.out + ".initial.tmp";
  policy.save(initial, "", "");  // untrained: for any cluster and mask
  std::vector<std::string> overrides = options.overrides;
  overrides.push_back("workload.scheduler.policy=" + std::filesystem::absolute(initial).string());
  const InputError not_marl(
      SourceLocation{options.scenario},
      "train-scheduler trains a learned scheduler: the scenario needs workload.kind cluster and a "
      "trainable workload.scheduler (marl)");
  std::string cluster_key;  // the cluster the policy is trained for, recorded in its file
  std::string remote;       // the `remote` option it is trained with (its agents' masks), recorded too
  try {
    std::optional<Scenario> scenario;
    try {
      scenario = load_scenario(options.scenario, overrides);
    } catch (const InputError&) {
      // The file's own errors, if it has any; else it is valid without a `policy` option: not marl.
      (void)load_scenario(options.scenario, options.overrides);
      throw not_marl;
    }
    const auto* cluster = scenario->workload_as<ClusterWorkload>();
    if (cluster == nullptr) throw not_marl;
    const auto placement = builtin_placements().at(cluster->placement).value(cluster->placement_options, 0);
    cluster_key = marl_cluster_key(cluster_servers(*scenario, *cluster));
    const SchedulerContext context{cluster->scheduler_options, *placement, *cluster->speed, 0};
    if (!builtin_schedulers().at(cluster->scheduler).value(context)->trainable()) throw not_marl;
    remote = cluster->scheduler_options.choice("remote");  // the one trainable scheduler is marl
    if (!options.init.empty()) {
      // The starting policy goes through the `policy` option's checks (another cluster or mask, not
      // a policy). The scenario passed them with fresh weights, so what fails is the policy: its
      // errors are located at --init.
      std::vector<std::string> with_init = options.overrides;
      with_init.push_back("workload.scheduler.policy=" + std::filesystem::absolute(options.init).string());
      try {
        (void)load_scenario(options.scenario, with_init);
      } catch (const InputError& error) {
        std::vector<Diagnostic> located = error.diagnostics();
        for (Diagnostic& diagnostic : located) diagnostic.location = SourceLocation{"--init " + options.init};
        throw InputError(std::move(located));
      }
    }
  } catch (...) {
    std::filesystem::remove(initial);
    throw;
  }
  if (!options.init.empty()) policy = MarlPolicy::load(options.init);

  TrainSchedulerResult result;
  result.policy_path = options.out;
  result.curve_path = curve_path_for(options.out);
  MarlTrainingOptions training;
  training.learning_rate = options.learning_rate;
  training.shaping = options.shaping;
  training.entropy_weight = options.entropy_weight;
  MarlTrainingOptions imitation = training;
  if (!options.agreement_with.empty()) {
    const auto monitor = marl_teacher(options.agreement_with);
    if (!monitor) throw std::invalid_argument("train-scheduler: no teacher '" + options.agreement_with + "'");
    training.monitor = *monitor;
    training.imitation_weight = options.imitation_weight;
  }
  int imitation_episodes = 0;
  if (!options.imitate.empty()) {
    const auto teacher = marl_teacher(options.imitate);
    if (!teacher) throw std::invalid_argument("train-scheduler: no teacher '" + options.imitate + "'");
    imitation.teacher = *teacher;
    imitation.learning_rate = options.imitate_learning_rate;
    imitation.keep_labelled = options.imitate_aggregate > 0;
    imitation_episodes = options.imitate_episodes;
  }
  const int total = imitation_episodes + options.episodes;
  InterruptGuard interrupts;
  std::optional<SearchProgress> progress;
  if (options.progress)
    progress.emplace(*options.progress, ::isatty(STDERR_FILENO) != 0, "train-scheduler", std::nullopt,
                     "of the episodes");
  const int parallel = std::max(1, options.parallel);
  std::vector<ChildProcess> children;  // of the batch not yet read; killed if training stops
  std::vector<LabelledState> aggregate;  // DAgger: every imitation episode's labelled states
  SplitMix64 minibatches(options.seed);
  // Episodes [begin, end) in batches of `parallel`, one step of `optimizer` each.
  const auto run_phase = [&](int begin, int end, const MarlTrainingOptions& phase) {
    MarlOptimizer optimizer(policy, phase.learning_rate);
    for (int first = begin; first < end; first += parallel) {
      if (InterruptGuard::flag().load()) {
        result.interrupted = true;
        return;
      }
      const int last = std::min(end, first + parallel);
      // DAgger's β_m = p^m for the phase's m-th episode (1 without a teacher: unused).
      std::vector<MarlTrainingOptions> episode_options(static_cast<std::size_t>(last - first), phase);
      for (int e = first; e < last; ++e)
        if (phase.teacher != nullptr)
          episode_options[static_cast<std::size_t>(e - first)].teacher_share =
              std::pow(options.imitate_dagger, e - begin);
      for (int e = first; e < last; ++e)
        children.push_back(
            start_episode(options, overrides, policy, episode_options[static_cast<std::size_t>(e - first)], e));
      std::vector<float> gradient;
      for (int e = first; e < last; ++e) {
        auto outcome = finish_episode(children[static_cast<std::size_t>(e - first)], e,
                                      episode_options[static_cast<std::size_t>(e - first)]);
        if (gradient.empty()) gradient.assign(outcome.gradient.size(), 0.0f);
        for (std::size_t i = 0; i < gradient.size(); ++i)
          gradient[i] += outcome.gradient[i] / static_cast<float>(last - first);
        result.curve.push_back(outcome.record);
        std::move(outcome.labelled.begin(), outcome.labelled.end(), std::back_inserter(aggregate));
      }
      children.clear();
      optimizer.apply(gradient);
      if (phase.teacher != nullptr && !aggregate.empty())
        for (int step = 0; step < options.imitate_aggregate; ++step) {
          std::vector<const LabelledState*> batch(kImitationMinibatch);
          for (auto& state : batch)
            state = &aggregate[static_cast<std::size_t>(minibatches.uniform() * static_cast<double>(aggregate.size()))];
          optimizer.apply(imitation_gradient(policy, batch).gradient);
        }
      // A batch that crosses a multiple of checkpoint_every writes it under its own episode count.
      if (options.checkpoint_every > 0 && last / options.checkpoint_every > first / options.checkpoint_every)
        policy.save(checkpoint_path_for(options.out, last / options.checkpoint_every * options.checkpoint_every),
                    cluster_key, remote);
      if (progress) (*progress)(static_cast<double>(last) / total);
    }
  };
  try {
    run_phase(0, imitation_episodes, imitation);
    if (imitation_episodes > 0 && !result.interrupted) {
      result.imitated_path = imitated_path_for(options.out);
      policy.save(result.imitated_path, cluster_key, remote);
    }
    if (!result.interrupted) run_phase(imitation_episodes, total, training);
  } catch (...) {
    children.clear();
    std::filesystem::remove(initial);
    throw;
  }
  if (progress) progress->finish();
  std::filesystem::remove(initial);
  policy.save(options.out, cluster_key, remote);
  write_curve(result.curve_path, result.curve, options.seed, std::filesystem::path(options.init).filename().string());
  return result;
}

}  // namespace dnnsim
