#include "traces/jobs/job_generator.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "models/common/random.hpp"

namespace dnnsim {

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

void map_models(JobTrace& trace, const std::vector<ModelMixEntry>& mix, std::uint64_t seed) {
  for (JobRecord& job : trace.jobs) {
    if (!job.model.empty()) continue;
    double total = 0.0;
    for (const ModelMixEntry& entry : mix)
      if (job.gpus >= entry.min_gpus && job.gpus <= entry.max_gpus) total += entry.weight;
    if (total <= 0.0) continue;
    SplitMix64 rng(seed ^ fnv1a(job.id));
    double draw = rng.uniform() * total;
    for (const ModelMixEntry& entry : mix) {
      if (job.gpus < entry.min_gpus || job.gpus > entry.max_gpus) continue;
      draw -= entry.weight;
      if (draw < 0.0) {
        job.model = entry.model;
        if (job.batch_size == 0) job.batch_size = entry.batch_size;
        break;
      }
    }
    if (job.model.empty()) {  // rounding left the draw at the very top: the last covering entry
      for (auto it = mix.rbegin(); it != mix.rend(); ++it)
        if (job.gpus >= it->min_gpus && job.gpus <= it->max_gpus) {
          job.model = it->model;
          if (job.batch_size == 0) job.batch_size = it->batch_size;
          break;
        }
    }
  }
}

JobTrace generate_jobs(const JobGeneratorSpec& spec) {
  if (spec.fit != nullptr && spec.fit->jobs.size() < 2)
    throw std::invalid_argument("a fitted generator needs a trace of >= 2 jobs");
  if (spec.fit == nullptr && (spec.rate <= 0.0 || spec.gpu_choices.empty()))
    throw std::invalid_argument("a Poisson generator needs rate > 0 and GPU choices");
  SplitMix64 rng(spec.seed);
  JobTrace trace;
  trace.source = spec.fit ? fmt::format("generated (fitted to {}, seed {})", spec.fit->source, spec.seed)
                          : fmt::format("generated (Poisson {}/s, seed {})", spec.rate, spec.seed);
  double now = 0.0;
  for (std::size_t i = 0; i < spec.count; ++i) {
    JobRecord job;
    job.id = fmt::format("gen-{}", i);
    if (i > 0) {
      if (spec.fit) {
        const auto& jobs = spec.fit->jobs;
        const std::size_t k = 1 + rng.next() % (jobs.size() - 1);
        now += (jobs[k].submit - jobs[k - 1].submit).value() / spec.load_scale;
      } else {
        now += rng.exponential(spec.rate * spec.load_scale);
      }
    }
    job.submit = Seconds(now);
    if (spec.fit) {
      const JobRecord& sample = spec.fit->jobs[rng.next() % spec.fit->jobs.size()];
      job.gpus = sample.gpus;
      job.duration = sample.duration;
      job.iterations = sample.iterations;
    } else {
      job.gpus = spec.gpu_choices[rng.next() % spec.gpu_choices.size()];
      job.duration = Seconds(rng.exponential(1.0 / spec.mean_duration.value()));
    }
    trace.jobs.push_back(std::move(job));
  }
  map_models(trace, spec.mix, spec.seed);
  return trace;
}

}  // namespace dnnsim
