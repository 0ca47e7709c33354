// Collective algorithms, continued (collective_algorithms_test.cpp): the registry and its default
// rule, the errors of expand_collective, step counts by formula, and symmetric windows
// (Collective::copies), each derived by hand in the comments (docs/collectives.md).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/program/collective_algorithms.hpp"
#include "tests/support/collective_expansions.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

using namespace testing;

// ------------------------------------------------------------------------------------------------
// registry, default rule, errors

TEST(CollectiveRegistry, ListsTheFourWithDescriptionsAndSources) {
  const auto& registry = builtin_collective_algorithms();
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"ring", "p2p-ring", "tree", "hierarchical", "direct"}));
  for (const auto& entry : registry.entries()) {
    EXPECT_FALSE(entry.description.empty()) << entry.name;
    EXPECT_FALSE(entry.source.empty()) << entry.name;
    EXPECT_EQ(entry.description.find('\n'), std::string::npos) << entry.name;
    ASSERT_NE(entry.value, nullptr);
  }
  // Support matrix.
  auto supports = [&](const std::string& name, CollectiveKind kind) { return registry.at(name).value->supports(kind); };
  EXPECT_FALSE(supports("ring", CollectiveKind::all_to_all));
  EXPECT_TRUE(supports("ring", CollectiveKind::broadcast));
  EXPECT_TRUE(supports("tree", CollectiveKind::all_reduce));
  EXPECT_FALSE(supports("tree", CollectiveKind::all_gather));
  EXPECT_FALSE(supports("hierarchical", CollectiveKind::reduce_scatter));
  for (const std::string& kind : collective_kind_names())
    EXPECT_TRUE(supports("direct", *collective_kind_from_name(kind))) << kind;
}

TEST(CollectiveDefault, HierarchicalOnlyForEvenMultiNodeAllReduce) {
  const DeviceTopology topology = nodes_of(16, 4);  // nodes {0-3}, {4-7}, {8-11}, {12-15}
  auto rule = [&](CollectiveKind kind, std::vector<DeviceId> group) {
    return default_collective_algorithm(collective_op(kind, std::move(group), 1e6, ""), topology);
  };
  EXPECT_EQ(rule(CollectiveKind::all_reduce, {0, 1, 2, 3, 4, 5, 6, 7}), "hierarchical");  // 2 nodes × 4
  EXPECT_EQ(rule(CollectiveKind::all_reduce, {0, 1, 8, 9}), "hierarchical");              // 2 × 2, others idle
  EXPECT_EQ(rule(CollectiveKind::all_reduce, {0, 1, 2, 3}), "ring");                      // one node
  EXPECT_EQ(rule(CollectiveKind::all_reduce, {0, 4, 8, 12}), "ring");                     // one per node
  EXPECT_EQ(rule(CollectiveKind::all_reduce, {0, 1, 2, 4}), "ring");                      // 3 + 1
  EXPECT_EQ(rule(CollectiveKind::all_gather, {0, 1, 4, 5}), "ring");                      // not all_reduce
  EXPECT_EQ(rule(CollectiveKind::broadcast, {0, 1, 4, 5}), "ring");
  EXPECT_EQ(rule(CollectiveKind::all_to_all, {0, 1, 4, 5}), "direct");  // a ring cannot
  // expand_collective applies it: 2 nodes × 2 → hierarchical, 2p(n+g−2) = 16 steps (ring: 2p(p−1) = 24).
  EXPECT_EQ(expand_collective(collective_op(CollectiveKind::all_reduce, {0, 1, 4, 5}, 1e6, ""), topology).steps.size(),
            16u);
}

TEST(CollectiveErrors, UnknownNameSuggestsTheClosest) {
  const SourceLocation where{"graph.json", 12, 5};
  try {
    (void)expand_collective(collective_op(CollectiveKind::all_reduce, {0, 1}, 1e6, "rnig"), nodes_of(2, 1), where);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].message, "unknown collective algorithm 'rnig'; did you mean 'ring'?");
    EXPECT_EQ(e.diagnostics()[0].location.line, 12);
  }
}

TEST(CollectiveErrors, UnsupportedKindListsTheAlgorithmsThatDo) {
  try {
    (void)expand_collective(collective_op(CollectiveKind::all_gather, {0, 1}, 1e6, "tree"), nodes_of(2, 1));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).message,
              "collective algorithm 'tree' does not support all_gather; algorithms that do: ring, p2p-ring, direct");
  }
  try {
    (void)expand_collective(collective_op(CollectiveKind::all_to_all, {0, 1}, 1e6, "ring"), nodes_of(2, 1));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("algorithms that do: direct"));
  }
}

TEST(CollectiveErrors, HierarchicalNeedsEqualNodes) {
  const SourceLocation where{"graph.json", 3, 1};
  try {
    (void)expand_collective(collective_op(CollectiveKind::all_reduce, {0, 1, 2, 4}, 1e6, "hierarchical"),
                            nodes_of(8, 4), where);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.diagnostics().at(0).message,
                HasSubstr("hierarchical needs the same number of group members on every node"));
    EXPECT_EQ(e.diagnostics().at(0).location.line, 3);
  }
}

// The resource guard counts steps by formula; the expansion itself is the independent reference.
// Sizes span one chunk to the chunk caps (512 KiB pipeline chunks), groups odd, even, one node and
// several.
TEST(CollectiveStepCount, EqualsTheExpansionForEveryAlgorithmAndKind) {
  for (const auto& entry : builtin_collective_algorithms().entries())
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                CollectiveKind::broadcast, CollectiveKind::all_to_all}) {
      if (!entry.value->supports(kind)) continue;
      for (std::size_t p : {2, 3, 8, 12, 16})
        for (double size : {1e3, 3 * kMiB, 96 * kMiB}) {
          const DeviceTopology topology = nodes_of(p, p % 4 == 0 ? 4 : p);
          const Collective c = collective_op(kind, iota_group(p), size, entry.name, 1);
          EXPECT_EQ(count_collective_steps(c, topology), expand_collective(c, topology).steps.size())
              << entry.name << " " << collective_kind_name(kind) << " p=" << p << " S=" << size;
        }
    }
}

TEST(CollectiveErrors, OneMemberMovesNothing) {
  EXPECT_TRUE(expand_collective(collective_op(CollectiveKind::all_reduce, {3}, 1e6, ""), nodes_of(4, 4)).steps.empty());
}

// ------------------------------------------------------------------------------------------------
// symmetric windows (Collective::copies)

Collective windowed(CollectiveKind kind, std::vector<DeviceId> group, double size, const std::string& algorithm,
                    std::uint32_t copies) {
  Collective c = collective_op(kind, std::move(group), size, algorithm);
  c.copies = copies;
  return c;
}

// A ring of p = 16 run as a window of 4 members standing for 4 copies: each window member sends what
// a member of the full ring sends — 2(p−1) = 30 chunks of S/16 — to its successor, the window's last
// member to its first; alone on uniform links the rounds take the full ring's 2(p−1)(α + S/(pB)).
TEST(CollectiveWindow, RingWindowSendsWhatAFullRingMemberSends) {
  const double s = 96 * kMiB;
  const DeviceTopology topology = nodes_of(16, 16);
  const Collective c = windowed(CollectiveKind::all_reduce, {0, 1, 2, 3}, s, "ring", 4);
  const CollectiveExpansion e = expand(c, topology);
  EXPECT_EQ(e.steps.size(), 4u * 30u);
  EXPECT_EQ(count_collective_steps(c, topology), e.steps.size());
  expect_well_formed(e);
  for (const auto& [device, bytes] : bytes_sent(e)) EXPECT_DOUBLE_EQ(bytes, 30 * s / 16) << device;
  for (const CollectiveStep& step : e.steps) EXPECT_EQ(step.dst, (step.src + 1) % 4);
  const double alpha = 2e-6;
  const double bandwidth = 100e9;
  EXPECT_NEAR(critical_path(e, uniform(alpha, bandwidth)), 30 * (alpha + s / 16 / bandwidth), 1e-15);
  EXPECT_NEAR(critical_path(e, uniform(alpha, bandwidth)),
              critical_path(expand(collective_op(CollectiveKind::all_reduce, iota_group(16), s, "ring"), topology),
                            uniform(alpha, bandwidth)),
              1e-15);
}

// Hierarchical over a window of 2 nodes of 4 standing for 4 copies (8 nodes): the intra-node rings
// are the window's own (2·3 rounds of S/4), the inter-node rings wrap within its 2 nodes with the
// full group's 2(n−1) = 14 rounds of S/(g·n) = S/32; on uniform links the full group's time.
TEST(CollectiveWindow, HierarchicalWindowWrapsItsInterNodeRings) {
  const double s = 64 * kMiB;
  const DeviceTopology topology = nodes_of(32, 4);
  const Collective c = windowed(CollectiveKind::all_reduce, iota_group(8), s, "hierarchical", 4);
  const CollectiveExpansion e = expand(c, topology);
  EXPECT_EQ(e.steps.size(), 8u * (2 * 3 + 2 * 7));
  EXPECT_EQ(count_collective_steps(c, topology), e.steps.size());
  expect_well_formed(e);
  std::size_t across = 0;
  for (const CollectiveStep& step : e.steps) {
    if (topology.node_of_device[step.src] == topology.node_of_device[step.dst]) continue;
    ++across;
    EXPECT_DOUBLE_EQ(step.size.value(), s / 32);
    EXPECT_LT(step.dst, 8u) << "an inter-node ring leaves the window";
  }
  EXPECT_EQ(across, 8u * 14u);
  const auto cost = uniform(1e-6, 50e9);
  EXPECT_NEAR(critical_path(e, cost),
              critical_path(
                  expand(collective_op(CollectiveKind::all_reduce, iota_group(32), s, "hierarchical"), topology), cost),
              1e-12);
}

// At flow fidelity each window hop is one flow of the full ring's hop volume, 2(p−1)·S/p.
TEST(CollectiveWindow, RingWindowFlowsCarryTheFullHopVolume) {
  const double s = 96 * kMiB;
  const Collective c = windowed(CollectiveKind::all_reduce, {0, 1, 2, 3}, s, "ring", 4);
  const auto unit = [](DeviceId, DeviceId) { return RouteCost{Seconds(1e-6), BytesPerSecond(1e11)}; };
  const CollectiveFlowPlan plan = plan_collective_flows(c, nodes_of(16, 16), unit);
  ASSERT_EQ(plan.phases.size(), 1u);
  ASSERT_EQ(plan.phases[0].size(), 4u);
  for (const CollectiveFlow& flow : plan.phases[0]) {
    EXPECT_EQ(flow.dst, (flow.src + 1) % 4);
    EXPECT_DOUBLE_EQ(flow.size.value(), 30 * s / 16);
  }
}

// A window stands for the whole group: 32 members × 4 copies are 128 > 64, so flow by default.
TEST(CollectiveWindow, DefaultFidelityCountsTheCopies) {
  const Collective c = windowed(CollectiveKind::all_reduce, iota_group(32), 1e6, "ring", 4);
  EXPECT_EQ(effective_collective_fidelity(c, std::nullopt, nodes_of(32, 32)), CollectiveFidelity::flow);
  EXPECT_EQ(effective_collective_fidelity(collective_op(CollectiveKind::all_reduce, iota_group(32), 1e6, "ring"),
                                          std::nullopt, nodes_of(32, 32)),
            CollectiveFidelity::step);
}

// Tree, direct and the ring broadcast (a chain from a root, not a translate of itself) have no
// window form.
TEST(CollectiveWindow, AlgorithmsWithoutAWindowFormRefuseCopies) {
  for (const auto& [kind, algorithm] :
       std::vector<std::pair<CollectiveKind, std::string>>{{CollectiveKind::all_reduce, "tree"},
                                                           {CollectiveKind::all_reduce, "direct"},
                                                           {CollectiveKind::broadcast, "ring"}}) {
    try {
      (void)expand_collective(windowed(kind, {0, 1}, 1e6, algorithm, 2), nodes_of(4, 4));
      FAIL() << "expected InputError for " << algorithm;
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(),
                  HasSubstr(fmt::format("collective algorithm '{}' has no symmetric-window form", algorithm)));
    }
  }
}

}  // namespace
}  // namespace dnnsim
