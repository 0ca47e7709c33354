// Synthetic job streams and the mapping of model-less jobs to models, both seeded and portable
// (splitmix64 draws, no <random> distributions, whose output differs between standard libraries).
//
// Model mapping rule (docs/cluster.md): a job whose `model` is empty gets one from `mix` — the entries
// whose [min_gpus, max_gpus] contains the job's GPU count, drawn with their weights by
// splitmix64(seed ⊕ FNV-1a(job id)). The draw depends on the job alone, so filtering a trace does not
// change the model of the jobs kept; a job with a model (dnnsim CSV `model` column) keeps it — the
// per-job override. No entry covering the GPU count leaves the model empty (reported by the caller).
//
// Generator: `count` jobs; arrivals Poisson with `rate` (exponential gaps) or, with `fit` set, gaps
// resampled from the fitted trace's inter-arrival times (scaled by `load_scale`: gaps ÷ scale);
// GPU counts and durations resampled jointly from the fitted trace's jobs (keeps their correlation),
// or without `fit` GPUs from `gpu_choices` uniformly and durations exponential with `mean_duration`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/jobs/job_trace.hpp"

namespace dnnsim {

struct ModelMixEntry {
  std::string model;
  double weight = 1.0;
  int min_gpus = 1;
  int max_gpus = 1 << 30;
  int batch_size = 0;
};

void map_models(JobTrace& trace, const std::vector<ModelMixEntry>& mix, std::uint64_t seed);

struct JobGeneratorSpec {
  std::size_t count = 100;
  double rate = 0.01;               // arrivals per second (Poisson), when no `fit`
  std::vector<int> gpu_choices{1};  // when no `fit`
  Seconds mean_duration{3600.0};    // exponential, when no `fit`
  const JobTrace* fit = nullptr;    // resample gaps, GPUs and durations from this trace
  double load_scale = 1.0;          // > 1 compresses arrivals (higher load)
  std::vector<ModelMixEntry> mix;   // empty = jobs without model
  std::uint64_t seed = 1;
};

[[nodiscard]] JobTrace generate_jobs(const JobGeneratorSpec& spec);

[[nodiscard]] std::uint64_t fnv1a(const std::string& text);

}  // namespace dnnsim
