#include "traces/jobs/pollux_applications.hpp"

#include <fmt/format.h>

#include <array>

#include "models/common/random.hpp"
#include "traces/jobs/job_generator.hpp"

namespace dnnsim {
namespace {

constexpr std::array<const char*, 6> kApplications{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"};

// random.choice: one of `n` uniformly.
std::size_t choose(SplitMix64& rng, std::size_t n) { return static_cast<std::size_t>(rng.uniform() * n); }

}  // namespace

void assign_pollux_applications(JobTrace& trace, const PolluxConfigurations& configurations, std::uint64_t seed,
                                const SourceLocation& where, const PolluxApplicationRule& rule) {
  DiagnosticSink sink;
  for (const char* name : kApplications) {
    const auto it = configurations.find(name);
    if (it == configurations.end() || it->second.empty())
      sink.error(where, fmt::format("the Pollux application rule needs configurations of '{}', which the tables "
                                    "do not give",
                                    name));
  }
  std::vector<JobRecord> kept;
  for (JobRecord& job : trace.jobs) {
    if (!job.model.empty()) {
      kept.push_back(std::move(job));
      continue;
    }
    if (job.duration.value() <= 0 || job.gpus < 1) {
      sink.error(job.where, fmt::format("job '{}' needs a run time and a GPU count: the Pollux application rule maps "
                                        "jobs by GPU-time (duration × GPUs)",
                                        job.id));
      continue;
    }
    const double gpu_seconds = job.duration.value() * job.gpus;
    if (job.duration.value() < rule.min_duration || gpu_seconds >= rule.max_gpu_seconds) {
      ++trace.skipped;
      continue;
    }
    SplitMix64 rng(seed ^ fnv1a(job.id));
    SplitMix64 rng2((seed + 3) ^ fnv1a(job.id));
    std::string application = gpu_seconds < rule.small    ? (choose(rng, 2) == 0 ? "cifar10" : "ncf")
                              : gpu_seconds < rule.medium ? "deepspeech2"
                              : gpu_seconds < rule.large  ? "yolov3"
                                                          : "imagenet";
    SplitMix64* stream = &rng;
    if (application == "deepspeech2" && choose(rng2, 2) == 1) {
      application = "bert";  // workload.py: half of the deepspeech2 jobs, on the second stream
      stream = &rng2;
    }
    const auto it = configurations.find(application);
    if (it == configurations.end() || it->second.empty()) continue;  // reported above
    const auto& [replicas, batch] = it->second[choose(*stream, it->second.size())];
    job.model = application;
    job.gpus = replicas;
    job.batch_size = batch;
    job.duration = Seconds(0);
    job.iterations = 0.0;
    kept.push_back(std::move(job));
  }
  sink.throw_if_any();
  trace.jobs = std::move(kept);
}

}  // namespace dnnsim
