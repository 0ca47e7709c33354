// gnn_interference_bench: what the GNN data path's CPU stages do to each other on one socket
// (docs/gnn.md, "CPU interference, measured"), the question behind BGL's resource isolation (Liu et
// al., NSDI'23, §3: sampling, feature gathering and copying threads contend for caches and memory
// bandwidth). Not a test: its figures depend on the machine and its load.
//
// Usage: gnn_interference_bench [nodes edges] [seconds] [repeats]
//   default: an R-MAT graph of 1,000,000 nodes and 25,000,000 edges drawn (a CSR of ~0.2 GB and a
//   feature table of 0.4 GB, both far beyond the last-level cache), 2 s per measurement, 5 repeats.
// Stages, each a loop on its own thread:
//   sample  node-wise 15,10,5 on 1,000 random training seeds (sampled edges);
//   gather  100 fp32 features of each input node of pre-sampled batches into a contiguous buffer
//           (bytes), as a data loader does before the host-to-device copy;
//   copy    memcpy of 64 MiB blocks (bytes): the host side of a staging copy.
// Placements: each stage alone on core 0; two or three stages as threads pinned together to core 0
// (time-sliced: what one loses beyond its share is cache pollution by the other); two stages pinned
// to cores 0 and 1 (in parallel: what one loses is the shared last-level cache and memory bandwidth).
// Rates are per thread-CPU-second (CLOCK_THREAD_CPUTIME_ID), so time-slicing itself does not count.
// The machine may be shared: each measurement is repeated and the best rate kept (another process
// only slows a stage down), and the spread (worst / best) is printed beside it.
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "models/gnn/graph.hpp"
#include "models/gnn/sampler.hpp"

using namespace dnnsim::gnn;

namespace {

constexpr std::size_t kDimension = 100;
constexpr std::uint32_t kBatch = 1000;
constexpr std::size_t kCopyBytes = 64u << 20;

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void pin_to(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct Data {
  CsrGraph graph;
  std::vector<NodeId> training;
  std::vector<std::vector<NodeId>> input_lists;  // pre-sampled batches' input nodes, for gather
  std::vector<float> table;
};

enum class Stage { sample, gather, copy };
const char* name(Stage s) { return s == Stage::sample ? "sample" : s == Stage::gather ? "gather" : "copy"; }

// Runs `stage` until `stop`, returns its work (sampled edges or bytes) per thread-CPU-second.
double run_stage(Stage stage, const Data& data, int core, const std::atomic<bool>& go, const std::atomic<bool>& stop) {
  pin_to(core);
  Rng rng(static_cast<std::uint64_t>(core) * 7 + static_cast<std::uint64_t>(stage));
  SamplerWorkspace work(data.graph.num_nodes());
  std::vector<float> buffer;
  std::vector<char> from(stage == Stage::copy ? kCopyBytes : 0, 1), to(from.size());
  std::vector<NodeId> seeds(kBatch);
  const std::vector<std::uint32_t> fanouts{15, 10, 5};
  while (!go.load()) std::this_thread::yield();
  const double start = thread_cpu_seconds();
  double done = 0;
  std::size_t next = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    switch (stage) {
      case Stage::sample:
        for (NodeId& s : seeds) s = data.training[uniform_below(rng, static_cast<std::uint32_t>(data.training.size()))];
        done += static_cast<double>(
            builtin_samplers().at("node-wise").value(data.graph, seeds, fanouts, rng, work).sampled_edges());
        break;
      case Stage::gather: {
        const std::vector<NodeId>& inputs = data.input_lists[next++ % data.input_lists.size()];
        buffer.resize(inputs.size() * kDimension);
        for (std::size_t i = 0; i < inputs.size(); ++i)
          std::copy_n(data.table.data() + static_cast<std::size_t>(inputs[i]) * kDimension, kDimension,
                      buffer.data() + i * kDimension);
        done += static_cast<double>(inputs.size() * kDimension * sizeof(float));
        break;
      }
      case Stage::copy:
        std::memcpy(to.data(), from.data(), from.size());
        done += static_cast<double>(from.size());
        break;
    }
  }
  return done / (thread_cpu_seconds() - start);
}

// One placement: the stages on their cores for `seconds`, `repeats` times; per stage the best rate
// and the worst/best spread.
std::vector<std::pair<double, double>> measure(const Data& data, const std::vector<std::pair<Stage, int>>& placement,
                                               double seconds, int repeats) {
  std::vector<std::pair<double, double>> result(placement.size(), {0.0, 1e300});
  for (int r = 0; r < repeats; ++r) {
    std::atomic<bool> go{false}, stop{false};
    std::vector<double> rates(placement.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < placement.size(); ++i)
      threads.emplace_back([&, i] { rates[i] = run_stage(placement[i].first, data, placement[i].second, go, stop); });
    go = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < placement.size(); ++i) {
      result[i].first = std::max(result[i].first, rates[i]);
      result[i].second = std::min(result[i].second, rates[i]);
    }
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const auto nodes = static_cast<NodeId>(argc > 2 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000);
  const std::uint64_t edges = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 25'000'000;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 2.0;
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 5;

  Data data;
  data.graph = generate_rmat({.nodes = nodes, .edges = edges, .seed = 1});
  Rng rng(11);
  for (NodeId v = 0; v < data.graph.num_nodes(); ++v)
    if (uniform_below(rng, 100) < 8) data.training.push_back(v);
  SamplerWorkspace work(data.graph.num_nodes());
  std::vector<NodeId> seeds(kBatch);
  const std::vector<std::uint32_t> fanouts{15, 10, 5};
  for (int b = 0; b < 64; ++b) {
    for (NodeId& s : seeds) s = data.training[uniform_below(rng, static_cast<std::uint32_t>(data.training.size()))];
    const MiniBatch batch = builtin_samplers().at("node-wise").value(data.graph, seeds, fanouts, rng, work);
    data.input_lists.emplace_back(batch.input_nodes().begin(), batch.input_nodes().end());
  }
  data.table.assign(static_cast<std::size_t>(data.graph.num_nodes()) * kDimension, 1.0f);
  fmt::print("R-MAT {} nodes, {} undirected edges, CSR {:.2f} GB, feature table {:.2f} GB; {} s x {} repeats\n",
             data.graph.num_nodes(), data.graph.undirected_edges(), data.graph.memory().value() / 1e9,
             static_cast<double>(data.table.size() * sizeof(float)) / 1e9, seconds, repeats);

  const unsigned cores = std::thread::hardware_concurrency();
  const std::vector<Stage> stages{Stage::sample, Stage::gather, Stage::copy};
  std::vector<double> alone;
  for (Stage s : stages) {
    const auto r = measure(data, {{s, 0}}, seconds, repeats);
    alone.push_back(r[0].first);
    fmt::print("alone      {:<6} {:10.4g} /CPU-s (spread {:.2f})\n", name(s), r[0].first, r[0].second / r[0].first);
  }
  auto report = [&](const char* where, const std::vector<std::pair<Stage, int>>& placement) {
    const auto r = measure(data, placement, seconds, repeats);
    std::string line = fmt::format("{:<10}", where);
    for (std::size_t i = 0; i < placement.size(); ++i) {
      const auto k = static_cast<std::size_t>(placement[i].first);
      line += fmt::format(" {} {:.3f} of alone (spread {:.2f});", name(placement[i].first), r[i].first / alone[k],
                          r[i].second / r[i].first);
    }
    fmt::print("{}\n", line);
  };
  for (std::size_t a = 0; a < stages.size(); ++a)
    for (std::size_t b = a + 1; b < stages.size(); ++b) {
      report("one core", {{stages[a], 0}, {stages[b], 0}});
      if (cores >= 2) report("two cores", {{stages[a], 0}, {stages[b], 1}});
    }
  report("one core", {{Stage::sample, 0}, {Stage::gather, 0}, {Stage::copy, 0}});
  return 0;
}
