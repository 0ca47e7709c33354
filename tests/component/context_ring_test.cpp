// The CP ring's overlap as the lowering places it and the simulator runs it (step_communication.hpp's
// add_step_collectives, llm_parallel.hpp's ring phases): a step computes its other layers, then each
// ring phase lasts max(its exchange, the attention beside it). One TEST per process (one SimGrid engine).
//
// Platform: one NVSwitch node of 2 A100s (tests/support/collective_platforms.hpp): a step i → j costs
// α = 2 µs + bytes / β, β = 100 GB/s. Model: the planner tests' tiny LLM without experts (2 blocks,
// 4 query and 4 KV heads of 64: kv_width = 4 · 128 = 512), CP 2 on the 2 GPUs (TP 1), one sequence of s tokens. A ring
// chunk is s/2 tokens' K and V, s/2 · 512 · 2 bytes = 512·s bytes; without a calibration a mirrored exchange costs its
// uncontended time (a 2-rank all-gather: one round of half its size, no per-call latency):
//  - forward, one phase of CP − 1 = 1 step per layer: 2 layers · 512·s bytes → α + 1,024·s / β, beside
//    (CP − 1)/CP = 1/2 of the step's attention;
//  - backward, one phase of 2 one-chunk steps per layer: 4 · 512·s bytes → α + 2,048·s / β, beside all
//    of the step's attention backward.
// The step's other compute is a task of T_rest = 1 ms made here; the step ends at
// T_rest + max(exchange, attention). The attention time is the cost model's (context_ring's `attention`,
// an input here); the sequence sets the regime: the exchange grows with s, the attention with s², so
// s = 256 is exchange-bound and s = 16,384 attention-bound (each asserted).
//
// cp_comm_type all_gather and a2a (ContextComm.*) on the same step: no ring, their collectives serial
// after the step's compute (each mirrored 2-rank collective one round of half its size: α + size/2/β):
//  - all_gather: forward the 2 layers' K/V gathered, output 2 · 2 · 512·s = 2,048·s bytes → α +
//    1,024·s / β; backward that again, then the reduce-scatter of the 2,048·s dK/dV, α + 1,024·s / β more;
//  - a2a: per layer K/V (512·s) and Q and O (s/2 tokens · 4 heads · (64 + 64) · 2 = 512·s), 2 layers
//    2,048·s bytes in, half of them sent: α + 1,024·s / β, either pass.
// So the forward step ends at T_rest + α + 1,024·s/β for both, the backward at T_rest + 2α + 2,048·s/β
// (all_gather) or T_rest + α + 1,024·s/β (a2a).
//
// a2a+p2p (ContextComm.Hierarchical*) on one NVSwitch node of 4 A100s, CP 4 as A = 2 a2a groups ({0, 1},
// {2, 3}) × P = 2 rings ({0, 2}, {1, 3}), each GPU its own up- and downlink, so no two of one kind of
// exchange share a link. The ring's chunk is the flat ring's at CP 4, s/4 · 512 · 2 = 256·s bytes: forward
// 1 step · 2 layers, as a 2-rank all-gather of 1,024·s bytes, α + 512·s/β beside 1/2 of the attention;
// backward 2 steps, α + 1,024·s/β beside all of it. Then the a2a's all-to-alls over the group of 2: per
// layer the rank's own s/4 tokens of K/V (256·s) and of Q and O (256·s), 1,024·s bytes in for 2 layers,
// half sent: α + 512·s/β, serial after the ring. The step ends at T_rest + max(ring, attention) + a2a.
//
// Across nodes (ContextRing.AcrossNodes*): CP 8 over two_nodes(true), 2 nodes × 4 A100s, a NIC per GPU
// (α_in = 2 µs, β_in = 100 GB/s; α_out = 6 µs, β_out = 25 GB/s). TE sends each step's chunk to the next
// CP rank only, so the ring 0 → 1 → … → 7 → 0 crosses between the nodes at 3 → 4 and 7 → 0 with the
// whole chunk through the sender's NIC, never split into NCCL's channels. Forward: CP − 1 = 7 steps of
// a chunk of s/8 · 512 · 2 = 128·s bytes per layer, 2 layers: an 8-rank all-gather of 7 rounds of
// 256·s bytes, each round gated by the crossing hop: 7 · (α_out + 256·s/β_out). Channels would carry a
// quarter of that through each NIC: 7 · max(α_out + 64·s/β_out, α_in + 192·s/β_in).
#include <gtest/gtest.h>

#include "models/dnn/llm_parallel.hpp"
#include "planners/schedules/step_communication.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/cluster_view_builder.hpp"
#include "sim/scenario/layout.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/planner_fixtures.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

constexpr double kRest = 1e-3;
// two_nodes' route between nodes.
constexpr double kAcrossAlpha = 6e-6;
constexpr double kAcrossBeta = 25e9;
using testing::kSwitchAlpha;
using testing::kSwitchBeta;

struct RingOutcome {
  double simulated = 0;
  double exchange = 0;   // derived by hand
  double attention = 0;  // the cost model's, from context_ring
  double serial = 0;     // a2a+p2p: its all-to-alls after the ring, derived by hand
};

RingOutcome run_step(int seq, Pass pass, ContextComm comm = ContextComm::p2p, bool across_nodes = false) {
  const int gpus = across_nodes ? 8 : comm == ContextComm::a2a_p2p ? 4 : 2;
  const Scenario scenario = testing::load(across_nodes ? testing::two_nodes(true) : testing::nvswitch_node(gpus));
  const ClusterView view = make_cluster_view(scenario.cluster, make_layout(scenario.cluster));
  const LayerModel model = testing::tiny_moe(0, seq);  // dense: no experts
  PipelineWorkload workload;
  workload.transformer = transformer_shape(model);
  workload.llm.context = gpus;
  workload.llm.context_comm = comm;
  workload.llm.context_a2a = comm == ContextComm::a2a_p2p ? 2 : 1;
  workload.model = shard_for_llm(model, workload.tensor_parallel, workload.llm, 0);
  workload.dtype = Dtype::bf16;
  workload.gpus = view.devices;
  const PipelineStage stage{{LayerRange{0, workload.model.layers.size()}}, {0}};
  workload.plan.stages = {stage};

  TaskGraph graph = testing::graph_on_gpus(scenario);
  std::vector<TaskId> computes;
  for (DeviceId gpu = 0; gpu < static_cast<DeviceId>(gpus); ++gpu) {
    Compute rest;
    rest.device = gpu;
    rest.measured_time = Seconds(kRest);
    rest.measured_on = view.devices[gpu].gpu.name;
    Task task{rest};
    task.stream = graph.stream("compute");
    computes.push_back(graph.add(std::move(task)));
  }
  Companions companions;
  const LayerRange layers = stage.chunks.front();
  (void)add_step_collectives(graph, workload, stage, 0, computes, std::vector<std::vector<TaskId>>(computes.size()),
                             companions, layers, 1, pass, false, "step", 0);
  const auto ring = context_ring(workload, step_groups(workload, stage, 0, 0), layers, &view.devices[0], 1, pass);
  EXPECT_EQ(ring.size(), comm == ContextComm::p2p || comm == ContextComm::a2a_p2p ? 1u : 0u);
  RingOutcome outcome;
  if (across_nodes) {
    outcome.attention = ring.front().attention.value();
    outcome.exchange = 7 * (kAcrossAlpha + 256.0 * seq / kAcrossBeta);
  } else if (comm == ContextComm::p2p) {
    outcome.attention = ring.front().attention.value();
    const double bytes = (pass == Pass::backward ? 4.0 : 2.0) * 512.0 * seq;
    outcome.exchange = kSwitchAlpha + bytes / kSwitchBeta;
  } else if (comm == ContextComm::a2a_p2p) {
    outcome.attention = ring.front().attention.value();
    outcome.exchange = kSwitchAlpha + (pass == Pass::backward ? 1024.0 : 512.0) * seq / kSwitchBeta;
    outcome.serial = kSwitchAlpha + 512.0 * seq / kSwitchBeta;
  } else {
    const int collectives = comm == ContextComm::all_gather && pass == Pass::backward ? 2 : 1;
    outcome.exchange = collectives * (kSwitchAlpha + 1024.0 * seq / kSwitchBeta);
  }
  const SimulationResult result = simulate(scenario, std::move(graph), {});
  for (double end : result.task_end) outcome.simulated = std::max(outcome.simulated, end);
  return outcome;
}

// The step at sequence `seq` ends at T_rest + max(exchange, attention), the exchange the longer iff
// `exchange_bound`.
void expect_step(int seq, Pass pass, bool exchange_bound) {
  const RingOutcome o = run_step(seq, pass);
  EXPECT_EQ(o.exchange > o.attention, exchange_bound) << "exchange " << o.exchange << " s, attention " << o.attention;
  const double derived = kRest + std::max(o.exchange, o.attention);
  EXPECT_NEAR(o.simulated, derived, 1e-9 * derived)
      << "exchange " << o.exchange << " s, attention " << o.attention << " s";
}

TEST(ContextRing, ForwardExchangeBound) { expect_step(256, Pass::forward, true); }
TEST(ContextRing, ForwardAttentionBound) { expect_step(16384, Pass::forward, false); }
TEST(ContextRing, BackwardExchangeBound) { expect_step(256, Pass::backward, true); }
TEST(ContextRing, BackwardAttentionBound) { expect_step(16384, Pass::backward, false); }

// At s = 4,096: 7 · (6 µs + 41.94 µs) = 335.6 µs, against 7 · max(16.49, 9.86) µs = 115.4 µs in channels.
TEST(ContextRing, AcrossNodesEachStepLeavesThroughItsSendersNic) {
  const int seq = 4096;
  const RingOutcome o = run_step(seq, Pass::forward, ContextComm::p2p, true);
  EXPECT_GT(o.exchange, o.attention);
  const double channels =
      7 * std::max(kAcrossAlpha + 64.0 * seq / kAcrossBeta, kSwitchAlpha + 192.0 * seq / kSwitchBeta);
  EXPECT_GT(o.exchange, 2.5 * channels);
  const double derived = kRest + o.exchange;
  EXPECT_NEAR(o.simulated, derived, 1e-9 * derived) << "exchange " << o.exchange << " s";
}

// The exposed types: the step ends at T_rest + their exchanges, whatever the attention (here in T_rest).
void expect_exposed(ContextComm comm, Pass pass) {
  const RingOutcome o = run_step(4096, pass, comm);
  const double derived = kRest + o.exchange;
  EXPECT_NEAR(o.simulated, derived, 1e-9 * derived);
}

TEST(ContextComm, AllGatherForward) { expect_exposed(ContextComm::all_gather, Pass::forward); }
TEST(ContextComm, AllGatherBackward) { expect_exposed(ContextComm::all_gather, Pass::backward); }
TEST(ContextComm, AllToAllForward) { expect_exposed(ContextComm::a2a, Pass::forward); }
TEST(ContextComm, AllToAllBackward) { expect_exposed(ContextComm::a2a, Pass::backward); }

// a2a+p2p: T_rest + max(the ring's exchange, the attention beside it) + the all-to-alls. At s = 256 the
// ring's exchange is the longer (asserted), so the step is its three communication terms and T_rest.
void expect_hierarchical(Pass pass) {
  const RingOutcome o = run_step(256, pass, ContextComm::a2a_p2p);
  EXPECT_GT(o.exchange, o.attention);
  const double derived = kRest + std::max(o.exchange, o.attention) + o.serial;
  EXPECT_NEAR(o.simulated, derived, 1e-9 * derived) << "ring " << o.exchange << " s, a2a " << o.serial << " s";
}

TEST(ContextComm, HierarchicalForward) { expect_hierarchical(Pass::forward); }
TEST(ContextComm, HierarchicalBackward) { expect_hierarchical(Pass::backward); }

}  // namespace
}  // namespace dnnsim
