#include <fmt/format.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <simgrid/s4u.hpp>

#include "sim/cli/commands.hpp"
#include "sim/platform/actors.hpp"
#include "sim/platform/platform.hpp"
#include "sim/process/child_process.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/data_parallel/data_parallel_kind.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim::cli {
namespace {

// DGX-A100-like nodes (8 GPUs on NVSwitch, one 200 Gb/s NIC per GPU) on one non-blocking switch,
// training a 16-layer FLOP-costed model data-parallel with 4 gradient buckets.
Scenario synthetic_scenario(int gpus, int iterations) {
  const GpuSpec* gpu = HardwareCatalog::builtin().find_gpu("A100-80GB-SXM");
  NodeType node;
  node.name = "dgx-a100";
  node.gpu = *gpu;
  node.gpus_per_node = 8;
  node.fabric = IntraNodeFabric::nvswitch;
  node.gpu_link_bandwidth = gpu->nvlink_bandwidth;
  node.gpu_link_latency = Seconds(1e-6);
  node.pcie_bandwidth = BytesPerSecond(25e9);
  node.pcie_latency = Seconds(1e-6);
  node.nic_bandwidth = parse_as<BytesPerSecond>("200Gbps");
  node.nic_latency = Seconds(2e-6);
  node.nic_per_gpu = true;
  Scenario scenario;
  scenario.name = fmt::format("bench-{}", gpus);
  scenario.cluster.node_types.push_back(node);
  for (int n = 0; n < gpus / 8; ++n) scenario.cluster.nodes.push_back(NodeInstance{fmt::format("node{}", n), 0});
  auto spec = std::make_shared<DataParallelWorkload>();
  DataParallelConfig& workload = spec->config;
  workload.model.name = "synthetic-16";
  for (int l = 0; l < 16; ++l) {
    Layer layer;
    layer.name = fmt::format("layer{}", l);
    layer.kind = LayerKind::matmul;
    layer.forward_flops = Flop(2e10);
    layer.backward_flops = Flop(4e10);
    layer.parameter_bytes = Bytes(25e6);
    layer.activation_bytes = Bytes(4e6);
    workload.model.layers.push_back(layer);
  }
  workload.global_batch = gpus * 8;
  workload.dtype = Dtype::fp16;
  workload.bucket_size = Bytes(100e6);
  scenario.workload_kind = "data_parallel";
  scenario.workload = std::move(spec);
  scenario.run.iterations = iterations;
  return scenario;
}

struct Measurement {
  double activities = 0;
  double wall = 0;  // seconds of wall time
  double cpu = 0;   // seconds of process CPU time: unlike wall time, not inflated by other load or VM steal
};

// Wall and CPU time since construction.
class Stopwatch {
 public:
  Stopwatch() : wall_(std::chrono::steady_clock::now()), cpu_(cpu_now()) {}
  [[nodiscard]] Measurement measure(double activities) const {
    return Measurement{activities, std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count(),
                       cpu_now() - cpu_};
  }

 private:
  static double cpu_now() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  std::chrono::steady_clock::time_point wall_;
  double cpu_;
};

// Runs `body` in a forked child (a fresh SimGrid engine) and reads its Measurement back.
template <class Body>
Measurement in_child(Body body) {
  const ChildResult run = ChildProcess::run_function([&] {
                            const Measurement m = body();
                            return fmt::format("{} {} {}\n", m.activities, m.wall, m.cpu);
                          }).wait();
  Measurement m;
  if (run.exit.how != ChildExit::How::exited || run.exit.code != 0 ||
      std::sscanf(run.output.c_str(), "%lf %lf %lf", &m.activities, &m.wall, &m.cpu) != 3)
    throw std::runtime_error("benchmark child failed");
  return m;
}

// The raw loop's pattern through the executor: per GPU, `rounds` × (1 ms compute, 1 MB to the next
// GPU) on one stream. Same activities, same concurrency: the ratio is the executor's own overhead.
Measurement measure_executor_ring(int gpus, std::size_t rounds) {
  const Scenario scenario = synthetic_scenario(gpus, 1);
  TaskGraph graph;
  for (const std::string& gpu : scenario.cluster.gpu_names()) graph.add_device(gpu);
  const StreamId stream = graph.add_stream("main");
  const GpuSpec& gpu_spec = scenario.cluster.node_types.front().gpu;
  for (std::size_t r = 0; r < rounds; ++r)
    for (DeviceId g = 0; g < static_cast<DeviceId>(gpus); ++g) {
      Compute compute;
      compute.device = g;
      compute.flops = Flop(gpu_spec.peak_fp32->value() * 1e-3);
      Task work{compute};
      work.stream = stream;
      graph.add(std::move(work));
      Task send{Transfer{g, static_cast<DeviceId>((g + 1) % static_cast<DeviceId>(gpus)), Bytes(1e6)}};
      send.stream = stream;
      graph.add(std::move(send));
    }
  const Stopwatch stopwatch;
  (void)simulate(scenario, std::move(graph), SimulationOptions{false});
  return stopwatch.measure(static_cast<double>(2 * rounds * static_cast<std::size_t>(gpus)));
}

Measurement measure_executor(int gpus, int iterations) {
  const Scenario scenario = synthetic_scenario(gpus, iterations);
  TaskGraph graph = build_workload(scenario);
  std::size_t computes = 0;
  for (const Task& t : graph.tasks()) computes += t.is_compute();
  const Stopwatch stopwatch;
  const SimulationResult result = simulate(scenario, std::move(graph), SimulationOptions{false});
  return stopwatch.measure(static_cast<double>(computes + result.flow_count));
}

// The same platform with one actor per GPU doing `rounds` × (execute + transfer to the next GPU, by
// the executor's primitive, sim/platform/transfer.hpp): the cheapest way to drive SimGrid with that
// many activities.
Measurement measure_raw(int gpus, std::size_t activities) {
  const Scenario scenario = synthetic_scenario(gpus, 1);
  const Stopwatch stopwatch;
  const std::size_t rounds = std::max<std::size_t>(1, activities / (2 * static_cast<std::size_t>(gpus)));
  {
    // Torn down inside the measurement, as simulate() tears its engine down before returning.
    const auto engine = create_engine();
    const Platform platform = build_platform(scenario);
    // The stream actors' stacks: the ratio compares loops, not stack mappings.
    const ActorLauncher launcher(ActorStack::loop);
    for (int g = 0; g < gpus; ++g) {
      sg4::Host* self = platform.gpus[static_cast<std::size_t>(g)];
      sg4::Host* next = platform.gpus[static_cast<std::size_t>((g + 1) % gpus)];
      launcher.start("raw", self, [self, next, rounds]() {
        for (std::size_t r = 0; r < rounds; ++r) {
          finish_execution(start_execution(self, self->get_speed() * 1e-3));
          finish_transfer(start_transfer(self, next, 1e6));
        }
      });
    }
    engine->run();
  }
  return stopwatch.measure(static_cast<double>(2 * rounds * static_cast<std::size_t>(gpus)));
}

// Binds this process, and so the children it forks, to the CPU it runs on. On this kind of VM one
// core can run a loop up to twice as slowly as the other for minutes: ring and raw children landing
// on different cores gave ratios from 41% to 201% for the same binary (docs/performance.md); on one
// core they see the same machine. Returns that CPU, or -1 if the process cannot be bound.
int pin_to_current_cpu() {
  const int cpu = sched_getcpu();
  if (cpu < 0) return -1;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0 ? cpu : -1;
}

}  // namespace

int run_bench(const BenchOptions& options) {
  std::cout << "activities = SimGrid executions + communications; rates per second of process CPU time\n"
               "(wall time is shown too; on a shared VM it also counts time the process did not run)\n"
               "DP: the synthetic data-parallel workload through the whole pipeline\n"
               "ring: the raw loop's pattern through the executor; raw: a bare S4U loop (execute + transfer)\n"
               "on the same platform; ring and raw: fastest of --repeat runs; ratio = ring / raw\n";
  const int cpu = pin_to_current_cpu();
  std::cout << (cpu >= 0 ? fmt::format("every run on CPU {}\n\n", cpu) : std::string("runs not bound to a CPU\n\n"));
  std::cout << fmt::format("{:>6} {:>10} {:>9} {:>12} | {:>10} {:>9} {:>12} | {:>9} {:>12} | {:>6}\n", "GPUs",
                           "DP activ.", "DP wall", "DP activ./s", "activities", "ring wall", "ring activ./s",
                           "raw wall", "raw activ./s", "ratio");
  for (int gpus : options.gpu_counts) {
    if (gpus < 8 || gpus % 8 != 0) {
      std::cerr << fmt::format("--gpus {}: the synthetic cluster has 8 GPUs per node\n", gpus);
      return 2;
    }
    const int iterations = options.iterations;
    const Measurement workload = in_child([&] { return measure_executor(gpus, iterations); });
    const std::size_t rounds =
        std::max<std::size_t>(1, static_cast<std::size_t>(workload.activities) / (2 * static_cast<std::size_t>(gpus)));
    // Ring and raw alternate, and each keeps its fastest run: on a shared VM a single run can be
    // off by tens of percent, and the minimum is the run least disturbed by the machine.
    Measurement ring{0, 0, std::numeric_limits<double>::infinity()};
    Measurement raw{0, 0, std::numeric_limits<double>::infinity()};
    for (int r = 0; r < options.repeat; ++r) {
      const Measurement ring_run = in_child([&] { return measure_executor_ring(gpus, rounds); });
      if (ring_run.cpu < ring.cpu) ring = ring_run;
      const Measurement raw_run =
          in_child([&] { return measure_raw(gpus, static_cast<std::size_t>(ring_run.activities)); });
      if (raw_run.cpu < raw.cpu) raw = raw_run;
    }
    const double ours = ring.activities / ring.cpu;
    const double bare = raw.activities / raw.cpu;
    std::cout << fmt::format(
        "{:>6} {:>10.0f} {:>8.3f}s {:>12.0f} | {:>10.0f} {:>8.3f}s {:>12.0f} | {:>8.3f}s {:>12.0f} | "
        "{:>5.0f}%\n",
        gpus, workload.activities, workload.wall, workload.activities / workload.cpu, ring.activities, ring.wall, ours,
        raw.wall, bare, 100 * ours / bare);
  }
  return 0;
}

}  // namespace dnnsim::cli
