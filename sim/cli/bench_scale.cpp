// `dnnsim bench --scale` (docs/performance.md, "Scale"): the shipped scale scenarios at growing GPU
// counts and both collective fidelities, each a `dnnsim run` child process of this executable, so
// that its wall time and peak RSS (wait4) are the whole command's, as a user would see them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/common/input_file.hpp"
#include "sim/cli/commands.hpp"
#include "sim/process/child_process.hpp"

namespace dnnsim::cli {
namespace {

struct ScaleCase {
  std::string name;
  std::string scenario;  // under scenarios/bench/
  int multiple_of;       // GPU counts this case accepts
  std::vector<std::string> (*overrides)(int gpus);
};

// The cases without "-window" or "-group" in their name simulate every GPU, as the reference the
// mirrored runs are compared with: above 256 GPUs a scenario's default mirrors where exact
// (replica_window.hpp).
std::vector<std::string> with_data_parallel_fidelity(std::vector<std::string> sets, const char* fidelity) {
  sets.push_back(fmt::format("workload.data_parallel_fidelity={}", fidelity));
  return sets;
}

std::vector<std::string> astra_dp_cluster(int gpus) {
  return {fmt::format("cluster.nodes.0.count={}", gpus), fmt::format("workload.global_batch={}", gpus)};
}

std::vector<std::string> astra_dp(int gpus) { return with_data_parallel_fidelity(astra_dp_cluster(gpus), "replicas"); }

// Pipeline 16 × data gpus/16, as the 1,024-GPU file: 64 micro-batches of one sequence per replica.
std::vector<std::string> gpt3_1f1b_cluster(int gpus) {
  std::vector<std::string> sets{fmt::format("cluster.nodes.0.count={}", gpus / 8),
                                fmt::format("workload.global_batch={}", 4 * gpus)};
  for (int stage = 0; stage < 16; ++stage) sets.push_back(fmt::format("workload.stages.{}.gpus={}", stage, gpus / 16));
  return sets;
}

std::vector<std::string> gpt3_1f1b(int gpus) {
  return with_data_parallel_fidelity(gpt3_1f1b_cluster(gpus), "replicas");
}

// The same with a window of two nodes' replicas per stage simulated and the others mirroring them
// (data_parallel_fidelity: window, docs/collectives.md "Symmetric windows"): exact on this cluster.
std::vector<std::string> gpt3_1f1b_window(int gpus) {
  return with_data_parallel_fidelity(gpt3_1f1b_cluster(gpus), "window");
}

// The data-parallel case on a 2:1 oversubscribed leaf-spine (32 nodes per leaf, 8 spines) with
// another tenant's 1 GB transfer every 10 ms between the first and the last node.
std::vector<std::string> astra_dp_leaf_spine(int gpus) {
  std::vector<std::string> sets = astra_dp(gpus);
  sets.emplace_back("cluster.interconnect={kind: leaf_spine, nodes_per_leaf: 32, spines: 8, oversubscription: 2}");
  sets.push_back(fmt::format(
      "network.background_flows=[{{from: node0/gpu0, to: node{}/gpu0, size: 1GB, interval: 10ms}}]", gpus - 1));
  return sets;
}

// The asymmetric set (issue 50): scenarios/bench/gpt3-175b-1f1b-hetero-1024.yaml scaled in its
// proportions — 25/32 of the nodes DGX-A100-like then 7/32 DGX-H100-like, 32 nodes per leaf, pipeline
// 16 × data gpus/16, the other tenant's flows between the first and the last node.
std::vector<std::string> gpt3_1f1b_hetero(int gpus) {
  const int nodes = gpus / 8;
  std::vector<std::string> sets{fmt::format("cluster.nodes.0.count={}", nodes / 32 * 25),
                                fmt::format("cluster.nodes.1.count={}", nodes / 32 * 7),
                                fmt::format("workload.global_batch={}", 4 * gpus)};
  for (int stage = 0; stage < 16; ++stage) sets.push_back(fmt::format("workload.stages.{}.gpus={}", stage, gpus / 16));
  sets.push_back(
      fmt::format("network.background_flows=[{{from: node0/gpu0, to: node{0}/gpu0, size: 1GB, interval: 10ms}}, "
                  "{{from: node{0}/gpu4, to: node0/gpu4, size: 1GB, interval: 10ms}}]",
                  nodes - 1));
  return sets;
}

// Two jobs on one leaf-spine (scenarios/bench/two-jobs-leaf-spine-1024.yaml) scaled in its proportions:
// 32 nodes per leaf, GPT-3 175B 1F1B (pipeline 16 × data gpus/32) on the first 16 nodes of every leaf,
// the GPT-3 XL-like data-parallel job (1,440 samples per GPU) on the last 16.
std::vector<std::string> two_jobs(int gpus) {
  const int nodes = gpus / 8;
  std::vector<int> first, second;
  for (int node = 0; node < nodes; ++node) (node % 32 < 16 ? first : second).push_back(node);
  std::vector<std::string> sets{fmt::format("cluster.nodes.0.count={}", nodes),
                                fmt::format("workload.jobs.0.nodes=[{}]", fmt::join(first, ",")),
                                fmt::format("workload.jobs.1.nodes=[{}]", fmt::join(second, ",")),
                                fmt::format("workload.jobs.0.workload.global_batch={}", 2 * gpus),
                                fmt::format("workload.jobs.1.workload.global_batch={}", 720 * gpus)};
  for (int stage = 0; stage < 16; ++stage)
    sets.push_back(fmt::format("workload.jobs.0.workload.stages.{}.gpus={}", stage, gpus / 32));
  return sets;
}

// The same with a window of two nodes' GPUs simulated and the others mirroring them
// (data_parallel_fidelity: window): exact on this one-switch cluster.
std::vector<std::string> astra_dp_window(int gpus) {
  return with_data_parallel_fidelity(astra_dp_cluster(gpus), "window");
}

// GPT-3 175B under the megatron planner (tensor × pipeline × data chosen for the cluster), as the
// 1,024-GPU file: 1.5 sequences per GPU; every data-parallel replica simulated, and every
// tensor-parallel rank or one per group.
std::vector<std::string> gpt3_megatron_with(int gpus, const char* tensor_parallel_fidelity) {
  return with_data_parallel_fidelity(
      {fmt::format("cluster.nodes.0.count={}", gpus / 8), fmt::format("workload.global_batch={}", 3 * gpus / 2),
       fmt::format("workload.micro_batch_size={}", 3 * gpus / 2),
       fmt::format("workload.tensor_parallel_fidelity={}", tensor_parallel_fidelity)},
      "replicas");
}

std::vector<std::string> gpt3_megatron(int gpus) { return gpt3_megatron_with(gpus, "ranks"); }

// The same with one GPU per tensor-parallel group simulated (docs/megatron.md, "Tensor-parallel
// fidelity"): the planner's TP 8 fills the file's 8-GPU nodes, each GPU has its own NIC.
std::vector<std::string> gpt3_megatron_group(int gpus) { return gpt3_megatron_with(gpus, "group"); }

// Llama-3.1-405B-like 3D parallelism (scenarios/bench/llama3-405b-3d-1024.yaml): TP 8 × PP 16 ×
// data gpus/128, 16 sequences per data-parallel rank, on the file's leaf-spine of 32 nodes per leaf.
std::vector<std::string> llama405b_3d(int gpus) {
  const int data_parallel = gpus / 128;
  return {fmt::format("cluster.nodes.0.count={}", gpus / 8),
          fmt::format("workload.global_batch={}", 16 * data_parallel),
          fmt::format("workload.micro_batch_size={}", data_parallel)};
}

// The same on one non-blocking switch, where the file's `tensor_parallel_fidelity: auto` mirrors the
// tensor-parallel ranks exactly (one GPU per group simulated; on the leaf-spine it simulates every
// GPU: the mirrored ranks' flows would share the uplinks with rank 0's).
std::vector<std::string> llama405b_3d_switch(int gpus) {
  std::vector<std::string> sets = llama405b_3d(gpus);
  sets.emplace_back("cluster.interconnect={kind: switch, latency: 1us}");
  return sets;
}

const std::vector<ScaleCase>& scale_cases() {
  static const std::vector<ScaleCase> cases{
      {"astra-dp", "gpt3-xl-dp-1024.yaml", 1, astra_dp},
      {"astra-dp-window", "gpt3-xl-dp-1024.yaml", 4, astra_dp_window},
      {"gpt3-1f1b", "gpt3-175b-1f1b-1024.yaml", 128, gpt3_1f1b},
      {"gpt3-1f1b-window", "gpt3-175b-1f1b-1024.yaml", 128, gpt3_1f1b_window},
      {"gpt3-megatron", "gpt3-175b-megatron-1024.yaml", 128, gpt3_megatron},
      {"gpt3-megatron-group", "gpt3-175b-megatron-1024.yaml", 128, gpt3_megatron_group},
      {"gpt3-1f1b-hetero", "gpt3-175b-1f1b-hetero-1024.yaml", 256, gpt3_1f1b_hetero},
      {"astra-dp-leaf-spine", "gpt3-xl-dp-1024.yaml", 32, astra_dp_leaf_spine},
      {"two-jobs", "two-jobs-leaf-spine-1024.yaml", 256, two_jobs},
      {"llama405b-3d", "llama3-405b-3d-1024.yaml", 1024, llama405b_3d},
      {"llama405b-3d-switch", "llama3-405b-3d-1024.yaml", 1024, llama405b_3d_switch}};
  return cases;
}

}  // namespace

std::vector<std::string> scale_case_names() {
  std::vector<std::string> names;
  for (const ScaleCase& c : scale_cases()) names.push_back(c.name);
  return names;
}

namespace {

struct ChildRun {
  int exit_code = -1;
  double wall = 0;
  long peak_rss_kib = 0;
};

// Runs this executable with `args` (stdout and stderr into `log`), timing it and reading its rusage.
ChildRun run_child(const std::vector<std::string>& args, const std::string& log) {
  ProgramCommand command;
  command.argv = args;
  command.argv.front() = current_executable();
  command.stdout_path = log;
  command.stderr_path = log;
  const auto start = std::chrono::steady_clock::now();
  const ChildResult result = ChildProcess::start(command).wait();
  ChildRun run;
  run.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.peak_rss_kib = result.peak_rss_kib;
  run.exit_code = shell_status(result.exit);
  return run;
}

}  // namespace

int run_bench_scale(const ScaleBenchOptions& options) {
  namespace fs = std::filesystem;
  create_output_directory(options.out);
  std::cout << fmt::format(
      "each row: `dnnsim run` of scenarios/bench/<file> with --set overrides, in its own process;\n"
      "wall and peak RSS of that whole command; logs and reports in {}/\n\n",
      options.out);
  std::cout << fmt::format("{:<20} {:>6} {:>5} {:>9} {:>10} {:>14}  {}\n", "case", "GPUs", "fid.", "wall", "peak RSS",
                           "iteration (s)", "status");
  int worst = 0;
  for (const ScaleCase& c : scale_cases()) {
    if (!options.cases.empty() && std::find(options.cases.begin(), options.cases.end(), c.name) == options.cases.end())
      continue;
    for (int gpus : options.gpu_counts)
      for (const std::string& fidelity : options.fidelities) {
        const auto row = [&](const std::string& wall, const std::string& rss, const std::string& iteration,
                             const std::string& status) {
          std::cout << fmt::format("{:<20} {:>6} {:>5} {:>9} {:>10} {:>14}  {}\n", c.name, gpus, fidelity, wall, rss,
                                   iteration, status)
                    << std::flush;
        };
        if (gpus % c.multiple_of != 0) {
          row("-", "-", "-", fmt::format("not run: needs a multiple of {} GPUs", c.multiple_of));
          continue;
        }
        if (fidelity == "step" && gpus > options.step_max_gpus) {
          row("-", "-", "-", fmt::format("not run: step above --step-max-gpus {}", options.step_max_gpus));
          continue;
        }
        const std::string tag = fmt::format("{}-{}-{}", c.name, gpus, fidelity);
        std::vector<std::string> args{"dnnsim",
                                      "run",
                                      options.scenario_dir + "/" + c.scenario,
                                      "--out",
                                      options.out + "/" + tag,
                                      "--set",
                                      "run.collective_fidelity=" + fidelity,
                                      "--set",
                                      "outputs.trace=false",
                                      "--set",
                                      "outputs.tasks_csv=false"};
        for (const std::string& set : c.overrides(gpus)) {
          args.emplace_back("--set");
          args.push_back(set);
        }
        const ChildRun run = run_child(args, options.out + "/" + tag + ".log");
        std::string iteration = "-";
        std::string status = run.exit_code == 0 ? "ok" : fmt::format("exit {} (see {}.log)", run.exit_code, tag);
        if (std::ifstream summary(options.out + "/" + tag + "/summary.json"); run.exit_code == 0 && summary) {
          const nlohmann::json json = nlohmann::json::parse(summary, nullptr, false);
          if (json.contains("makespan_s")) iteration = fmt::format("{:.6f}", json["makespan_s"].get<double>());
          if (json.contains("status")) status = json["status"].get<std::string>();
        }
        if (run.exit_code != 0) worst = 1;
        row(fmt::format("{:.2f}s", run.wall), fmt::format("{:.0f} MB", static_cast<double>(run.peak_rss_kib) / 1024),
            iteration, status);
      }
  }
  return worst;
}

}  // namespace dnnsim::cli
