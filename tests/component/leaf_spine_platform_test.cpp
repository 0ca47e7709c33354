// A leaf-spine's SimGrid platform computes each route between two nodes when SimGrid asks
// (sim/platform/computed_route_zone.hpp) instead of holding a table of every pair. What SimGrid
// routes must be what the layout declares (PlatformLayout::gpu_route, the routes the full zone was
// given before): the same links in the same order, each split-duplex link by its half in the hop's
// direction ("<name>_UP" / "<name>_DOWN", SimGrid's names), and their latencies summed.
#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/platform/platform.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

// Five nodes of two GPUs, two nodes per leaf (three leaves, the last one half full), three spines:
// routes within a node, within a leaf and across leaves, each spine used by some pair
// ((leaf a + leaf b + a + b) mod 3 takes every value over these pairs).
constexpr const char* kLeafSpine = R"(name: leaf-spine-routes
cluster:
  node_types:
    box:
      gpu: A100-80GB-SXM
      gpus_per_node: 2
      fabric: nvswitch
      nic: {link: IB-HDR, per_gpu: true}
  nodes: [{type: box, count: 5}]
  interconnect: {kind: leaf_spine, nodes_per_leaf: 2, spines: 3, oversubscription: 2, latency: "1us",
                 uplink_latency: "3us"}
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 10}
)";

TEST(LeafSpinePlatform, SimGridRoutesAreTheLayoutsRoutes) {
  const auto engine = create_engine();
  const Platform platform = build_platform(testing::load(kLeafSpine));
  const PlatformLayout& layout = platform.layout;
  ASSERT_TRUE(layout.leaf_spine.has_value());
  ASSERT_TRUE(layout.node_routes.empty());
  ASSERT_EQ(platform.gpus.size(), 10u);
  for (std::uint32_t a = 0; a < platform.gpus.size(); ++a)
    for (std::uint32_t b = 0; b < platform.gpus.size(); ++b) {
      if (a == b) continue;
      const Route route = layout.gpu_route(a, b);
      std::vector<std::string> expected;
      for (const Hop& hop : route) {
        const LinkDecl& link = layout.links[hop.link];
        expected.push_back(link.sharing == LinkDecl::Sharing::split_duplex ? link.name + (hop.up ? "_UP" : "_DOWN")
                                                                           : link.name);
      }
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      platform.gpus[a]->route_to(platform.gpus[b], links, &latency);
      std::vector<std::string> names;
      for (const simgrid::s4u::Link* link : links) names.push_back(link->get_name());
      EXPECT_EQ(names, expected) << "GPU " << a << " to GPU " << b;
      EXPECT_NEAR(latency, layout.route_latency(route).value(), 1e-15) << "GPU " << a << " to GPU " << b;
    }
}

}  // namespace
}  // namespace dnnsim
