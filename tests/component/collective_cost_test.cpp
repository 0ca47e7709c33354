// The analytical collective costs (models/cost/collective_cost.hpp) against the simulator: one
// Collective per TEST (one SimGrid engine per process), simulated on a platform where the steps the
// algorithm overlaps share no link, and required to agree within 2%. The path costs come from the
// platform layout: α = the route's summed latency, β = its narrowest link (CM02 without
// cross-traffic gives a lone flow exactly α + size/β). Where the algorithm itself makes steps share
// a link (hierarchical with one NIC per node), the path cost divides that link among the flows that
// cross it together, as collective_cost.hpp documents.
//
// Platforms (graph device i = cluster GPU i):
//  - kSwitch8: one node of 8 GPUs on an NVSwitch, every port 100 GB/s and 1 us per direction. A
//    step i → j crosses port i (up) and port j (down): α = 2 us, β = 100 GB/s.
//  - kTwoNodes(per_gpu): 2 nodes × 4 GPUs, the same NVSwitch inside (α_in = 2 us, β_in = 100 GB/s);
//    across nodes gpu → pcie (64 GB/s, 1 us) → NIC (25 GB/s, 2 us) → non-blocking switch → NIC →
//    pcie: α_out = 6 us, β_out = 25 GB/s. With per_gpu NICs each local rank's inter-node ring has
//    NICs of its own; with one NIC per node the g = 4 rings share it: β_out = 25/4 GB/s.
//
// Every expected formula is written with its case below; the measured table is in
// docs/collectives.md ("Analytical costs").
#include "models/cost/collective_cost.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <numeric>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/run/simulation.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using testing::kFormulaTolerance;
using testing::kKiB;
using testing::kMiB;

using testing::kSwitch8;
using testing::two_nodes;

enum class Testbed { switch8, two_nodes_nic_per_gpu, two_nodes_shared_nic };

struct CostCase {
  std::string name;
  Testbed platform;
  CollectiveKind kind;
  std::string algorithm;
  double size;
  // The formula on the platform's uniform links, for the reader (and checked against the model
  // where it is a closed form); NaN where only the critical path gives the time (tree).
  double formula;
};

// gtest prints a parameter by its name instead of its bytes.
void PrintTo(const CostCase& test, std::ostream* out) { *out << test.name; }

// Uniform path costs of the platforms (see the header comment).
constexpr double kAlphaIn = testing::kSwitchAlpha, kBetaIn = testing::kSwitchBeta;
constexpr double kAlphaOut = 6e-6, kBetaOut = 25e9;

// Ring rounds on p = 8 GPUs of kSwitch8: a round moves S/8 over one step.
double round8(double s) { return kAlphaIn + s / 8 / kBetaIn; }

// Ring broadcast chunks k = min(4p, ⌈S / 512 KiB⌉) ≥ 1 (collective_algorithms.cpp).
double broadcast8(double s) {
  const double k = std::clamp(std::ceil(s / (512 * kKiB)), 1.0, 32.0);
  return (8 + k - 2) * (kAlphaIn + s / k / kBetaIn);
}

// Hierarchical on 2 × 4: 2(g−1)(α_in + S/(gβ_in)) + 2(n−1)(α_out + S/(gnβ_out)), g = 4, n = 2.
double hierarchical(double s, double beta_out) {
  return 6 * (kAlphaIn + s / 4 / kBetaIn) + 2 * (kAlphaOut + s / 8 / beta_out);
}

constexpr double kBig = 256 * kMiB;  // bandwidth-dominated: ring steps of 32 MiB, ~0.34 ms each
constexpr double kSmall = 8 * kKiB;  // latency-dominated: ring steps of 1 KiB, 10 ns against α = 2 us

std::vector<CostCase> cases() {
  using K = CollectiveKind;
  const double nan = std::nan("");
  std::vector<CostCase> all;
  for (double s : {kBig, kSmall}) {
    const std::string tag = s == kBig ? "256MiB" : "8KiB";
    // ring, p = 8: all_reduce 2(p−1)(α + S/(pβ)); all_gather, reduce_scatter (p−1)(α + S/(pβ));
    // broadcast from root 3, k chunks: (p + k − 2)(α + S/(kβ)).
    all.push_back({"ring_all_reduce_" + tag, Testbed::switch8, K::all_reduce, "ring", s, 14 * round8(s)});
    all.push_back({"ring_all_gather_" + tag, Testbed::switch8, K::all_gather, "ring", s, 7 * round8(s)});
    all.push_back({"ring_reduce_scatter_" + tag, Testbed::switch8, K::reduce_scatter, "ring", s, 7 * round8(s)});
    all.push_back({"ring_broadcast_" + tag, Testbed::switch8, K::broadcast, "ring", s, broadcast8(s)});
    // tree, p = 8: the longest path through the double binary tree (no closed form; see
    // docs/collectives.md for its bandwidth ≈ 2S/β + fill and latency O(k + log p)·α).
    all.push_back({"tree_all_reduce_" + tag, Testbed::switch8, K::all_reduce, "tree", s, nan});
    all.push_back({"tree_broadcast_" + tag, Testbed::switch8, K::broadcast, "tree", s, nan});
    // direct, p = 8: a device's p−1 sends of S/p run one after another, each to a different peer
    // (round r: i → i+r), so each port direction carries one flow: all_to_all, all_gather,
    // reduce_scatter (p−1)(α + S/(pβ)); all_reduce 2(p−1)(α + S/(pβ)); broadcast (p−1)(α + S/β).
    all.push_back({"direct_all_to_all_" + tag, Testbed::switch8, K::all_to_all, "direct", s, 7 * round8(s)});
    all.push_back({"direct_all_gather_" + tag, Testbed::switch8, K::all_gather, "direct", s, 7 * round8(s)});
    all.push_back({"direct_reduce_scatter_" + tag, Testbed::switch8, K::reduce_scatter, "direct", s, 7 * round8(s)});
    all.push_back({"direct_all_reduce_" + tag, Testbed::switch8, K::all_reduce, "direct", s, 14 * round8(s)});
    all.push_back(
        {"direct_broadcast_" + tag, Testbed::switch8, K::broadcast, "direct", s, 7 * (kAlphaIn + s / kBetaIn)});
    // ring over all 8 GPUs of 2 × 4 sharing a NIC per node: 6 edges inside the nodes, 3 → 4 and 7 → 0
    // across. The slowest edge bounds every round: 2(p−1) · max(α_in + S/(pβ_in), α_out + S/(pβ_out)).
    all.push_back({"ring_across_nodes_all_reduce_" + tag, Testbed::two_nodes_shared_nic, K::all_reduce, "ring", s,
                   14 * std::max(kAlphaIn + s / 8 / kBetaIn, kAlphaOut + s / 8 / kBetaOut)});
    // The same ring with a NIC per GPU runs in g = 4 channels (docs/collectives.md, "Channels"): per
    // round each GPU sends S/p/4 across (its own NIC) and 3·S/p/4 within, at once:
    // 2(p−1) · max(α_out + S/(4pβ_out), α_in + 3S/(4pβ_in)).
    all.push_back({"ring_in_channels_all_reduce_" + tag, Testbed::two_nodes_nic_per_gpu, K::all_reduce, "ring", s,
                   14 * std::max(kAlphaIn + 3 * s / 32 / kBetaIn, kAlphaOut + s / 32 / kBetaOut)});
    // hierarchical, 2 nodes × 4: own NICs β_out = 25 GB/s; one shared NIC: 4 rings → 25/4 GB/s.
    all.push_back({"hierarchical_nic_per_gpu_" + tag, Testbed::two_nodes_nic_per_gpu, K::all_reduce, "hierarchical", s,
                   hierarchical(s, kBetaOut)});
    all.push_back({"hierarchical_shared_nic_" + tag, Testbed::two_nodes_shared_nic, K::all_reduce, "hierarchical", s,
                   hierarchical(s, kBetaOut / 4)});
  }
  return all;
}

// Path costs from the layout. `concurrent` lists the (src, dst) steps the algorithm runs at the same
// time; a link crossed by m of them in the same direction (either direction for a shared link; a
// fat pipe never divides) gives each a 1/m share. Steps not listed see their route alone.
PathCostFn layout_path_cost(const PlatformLayout& layout,
                            const std::vector<std::pair<DeviceId, DeviceId>>& concurrent) {
  std::map<std::pair<std::uint32_t, bool>, int> load;
  const auto key = [&](const Hop& hop) {
    return std::pair{hop.link, layout.links[hop.link].sharing == LinkDecl::Sharing::shared ? true : hop.up};
  };
  for (const auto& [src, dst] : concurrent)
    for (const Hop& hop : layout.gpu_route(src, dst)) ++load[key(hop)];
  return [&layout, load, concurrent](DeviceId src, DeviceId dst) {
    const Route route = layout.gpu_route(src, dst);
    const bool listed = std::find(concurrent.begin(), concurrent.end(), std::pair{src, dst}) != concurrent.end();
    BytesPerSecond bandwidth = layout.route_bandwidth(route);
    if (listed) {
      bandwidth = BytesPerSecond(INFINITY);
      for (const Hop& hop : route) {
        const LinkDecl& link = layout.links[hop.link];
        const auto it = load.find({hop.link, link.sharing == LinkDecl::Sharing::shared ? true : hop.up});
        const int sharers = link.sharing == LinkDecl::Sharing::fatpipe || it == load.end() ? 1 : it->second;
        bandwidth = std::min(bandwidth, link.bandwidth / sharers);
      }
    }
    return PathCost{layout.route_latency(route), bandwidth};
  };
}

class CollectiveCostAgreement : public ::testing::TestWithParam<CostCase> {};

TEST_P(CollectiveCostAgreement, WithinTwoPercentOfTheSimulator) {
  const CostCase& test = GetParam();
  const Scenario scenario = testing::load(
      test.platform == Testbed::switch8 ? kSwitch8 : two_nodes(test.platform == Testbed::two_nodes_nic_per_gpu));
  const PlatformLayout layout = make_layout(scenario.cluster);

  TaskGraph graph = testing::graph_on_gpus(scenario);
  std::vector<DeviceId> group(graph.devices().size());
  std::iota(group.begin(), group.end(), DeviceId{0});
  Collective collective{test.kind, group, Bytes(test.size), test.algorithm,
                        test.kind == CollectiveKind::broadcast ? 3u : 0u};

  DeviceTopology topology;
  for (std::size_t n = 0; n < layout.nodes.size(); ++n)
    for (std::size_t g = 0; g < layout.nodes[n].gpus.size(); ++g) {
      topology.node_of_device.push_back(static_cast<std::uint32_t>(n));
      topology.own_nic.push_back(test.platform == Testbed::two_nodes_nic_per_gpu);
    }

  // Hierarchical's inter-node phase: the ring of each local rank l, l-th GPU of node 0 ⇄ of node 1,
  // all 2g steps at once. With per-GPU NICs they share nothing; with one NIC they share it.
  std::vector<std::pair<DeviceId, DeviceId>> concurrent;
  if (test.algorithm == "hierarchical")
    for (DeviceId l = 0; l < 4; ++l) {
      concurrent.emplace_back(l, l + 4);
      concurrent.emplace_back(l + 4, l);
    }
  const PathCostFn path = layout_path_cost(layout, concurrent);
  // On the NVSwitch every path into GPU d ends on its port d (down): concurrent steps into d share
  // it (the tree's parents receive two children at once). Across nodes a GPU has two ingress links
  // (its NVSwitch port, its PCIe), so the 2 × 4 platforms use the path costs alone.
  CollectiveCostOptions options;
  if (test.platform == Testbed::switch8)
    options.shared_ingress = [&](DeviceId d) {
      const auto names = layout.link_names();
      const auto it = std::find(names.begin(), names.end(), fmt::format("node0/gpu{}/nvswitch", d));
      return layout.links.at(static_cast<std::size_t>(it - names.begin())).bandwidth;
    };
  const double analytical = collective_time(collective, topology, path, options).value();
  const double without_sharing = collective_time(collective, topology, path).value();
  if (!std::isnan(test.formula)) {
    EXPECT_NEAR(analytical, test.formula, 1e-9 * test.formula) << "the written formula";
  }

  Task task{collective};
  task.stream = graph.add_stream("comm");
  graph.add(std::move(task));
  const auto result = simulate(scenario, std::move(graph), {});
  const double simulated = result.task_end[0];

  const double error = (analytical - simulated) / simulated;
  std::cout << "agreement " << test.name << " analytical_s=" << analytical << " simulated_s=" << simulated
            << " error=" << error << " error_without_ingress_sharing=" << (without_sharing - simulated) / simulated
            << "\n";
  EXPECT_LE(std::abs(error), kFormulaTolerance) << "analytical " << analytical << " s, simulated " << simulated << " s";
}

INSTANTIATE_TEST_SUITE_P(CollectiveCost, CollectiveCostAgreement, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<CostCase>& info) { return info.param.name; });

}  // namespace
}  // namespace dnnsim
