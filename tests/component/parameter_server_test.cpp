// `kind: parameter_server` end to end on tiny clusters whose every time is derived by hand: one
// server and workers on V100 nodes (fp32 peak 15.7 TFLOP/s, compute_efficiency 1) with 10 Gb/s NICs
// (1.25 GB/s per direction) on one switch. A step of the one-layer model at batch 1 is forward F +
// backward 2F = 3 × 1.57 TFLOP = 4.71 TFLOP → 0.3 s at peak; a worker with `speed: v` takes 0.3/v s.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/parameter_server/parameter_server_kind.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

// L(K) = 1/(K + 1): a synchronous round of m = 1 is worth g(n) = 1 step (β = 0), an asynchronous
// commit m steps (μ = λ = 0).
std::string unit_curve() {
  return testing::write_file("curve.yaml", "a: 1\nb: 1\nc: 0\nbeta: 0\nmu: 0\nlambda: 0\nsource: test\n");
}

std::string ps_yaml(int workers, const std::string& bytes, const std::string& slowdown, const std::string& sync,
                    const std::string& convergence, const std::string& network = "", int servers = 1) {
  std::string server_list = "node0/gpu0";
  for (int s = 1; s < servers; ++s) server_list += ", node" + std::to_string(s) + "/gpu0";
  return "name: ps\ncluster:\n  node_types:\n    n: {gpu: V100-16GB, gpus_per_node: 1, fabric: pcie, nic: {link: "
         "Ethernet-10G}}\n"
         "  nodes:\n    - {type: n, count: " +
         std::to_string(workers + servers) +
         "}\n"
         "  interconnect: {kind: switch, latency: \"1us\"}\n"
         "workload:\n  kind: parameter_server\n"
         "  model: {name: one, layers: [{name: l, kind: matmul, forward_flops: \"1.57TFlop\", parameter_bytes: \"" +
         bytes +
         "\"}]}\n"
         "  batch_size: 1\n  servers: [" +
         server_list + "]\n" + slowdown + "  sync: " + sync +
         "\n"
         "  convergence: {model: " +
         unit_curve() + ", " + convergence +
         "}\n"
         "outputs: {trace: true, tasks_csv: false}\n" +
         network;
}

const PsSimResult& sim_of(const SimulationResult& result) {
  return dynamic_cast<const ParameterServerReport&>(*result.workload_result).sim;
}

std::vector<double> step_starts(const PsSimResult& sim, int worker) {
  std::vector<double> times;
  for (const PsEvent& e : sim.events)
    if (e.worker == worker && e.kind == PsEvent::Kind::step_start) times.push_back(e.time);
  return times;
}

TEST(ParameterServer, BspRoundIsTheSlowestWorkerPlusCommunication) {
  // Worker 0 (node1) steps in 0.3 s, worker 1 (node2, speed 0.5) in 0.6 s; the update is 125 MB,
  // 0.1 s over a 1.25 GB/s NIC. Round 1: worker 0 pushes 0.3 → 0.4 and waits; worker 1 pushes
  // 0.6 → 0.7 (alone on the server's NIC); the server averages; both pull at once, 2 × 125 MB through
  // the server's NIC: 0.2 s. So a round = slowest step 0.6 + its push 0.1 + the pulls 0.2 = 0.9 s,
  // plus µs latencies and the server's apply of 31.25 M parameters (12 B each through 900 GB/s HBM:
  // 0.42 ms) — within 2 ms. Three rounds reach L = 1/(3 + 1) = 0.25 ≤ 0.26: at the third round's
  // last commit, 2 × 0.9 + 0.7 = 2.5 s.
  const Scenario scenario = testing::load(ps_yaml(2, "125MB", "  slowdown: [{workers: [node2/gpu0], speed: 0.5}]\n",
                                                  "{policy: bsp}", "target_loss: 0.26, max_time: \"100s\""));
  const SimulationResult result = run_scenario(scenario, {});
  const PsSimResult& sim = sim_of(result);
  ASSERT_TRUE(sim.converged);
  EXPECT_EQ(sim.global_steps, 3);
  // A commit counts when the server takes the push in: 3 rounds of 2, the third's included, which end
  // the run before either worker pulls (4 while a commit counted when its pull ended: ADSP-like's runs
  // that reach the target on their first commits reported 0 commits beside 6 global steps).
  EXPECT_EQ(sim.workers[0].commits + sim.workers[1].commits, 6);
  const std::vector<double> starts = step_starts(sim, 0);
  ASSERT_GE(starts.size(), 3u);
  EXPECT_NEAR(starts[1] - starts[0], 0.9, 2e-3);
  EXPECT_NEAR(starts[2] - starts[1], 0.9, 2e-3);
  EXPECT_NEAR(sim.end_time, 2.5, 3e-3);
  // The fast worker waits for the slow one every round: 0.3 s blocked per round (0.4 → 0.7).
  EXPECT_NEAR(sim.workers[0].blocked_s, 2 * 0.3, 5e-3);
  // What the engine ran: 3 steps per worker, one apply per commit (6), 6 pushes and the pulls of the
  // first two rounds (4: the third round ends the run before them) — 22 operations, 10 of them flows.
  EXPECT_EQ(result.flow_count, 10u);
  EXPECT_EQ(result.operations, 22u);
  // stdout: the run to the target, not an iteration and a device table it has no figures for.
  const std::string table = format_summary_table(make_summary(scenario, result));
  EXPECT_NE(table.find("2 workers, 1 server, bsp"), std::string::npos) << table;
  EXPECT_NE(table.find("loss 0.25 reached the target 0.26 at"), std::string::npos) << table;
  EXPECT_EQ(table.find("device"), std::string::npos) << table;
}

TEST(ParameterServer, PushesAndPullsCrossTheSimulatedNetwork) {
  // The BSP case above with the server's NIC at 625 MB/s (a network condition, as another tenant's
  // share would leave it): worker 1's push takes 125 MB / 0.625 GB/s = 0.2 s and the two pulls
  // 250 MB / 0.625 GB/s = 0.4 s, so a round is 0.6 + 0.2 + 0.4 = 1.2 s (was 0.9 s).
  const Scenario scenario =
      testing::load(ps_yaml(2, "125MB", "  slowdown: [{workers: [node2/gpu0], speed: 0.5}]\n", "{policy: bsp}",
                            "target_loss: 0.26, max_time: \"100s\"",
                            "network:\n  conditions:\n    - {links: node0/nic, bandwidth: \"625MB/s\"}\n"));
  const SimulationResult result = run_scenario(scenario, {});
  const std::vector<double> starts = step_starts(sim_of(result), 0);
  ASSERT_GE(starts.size(), 2u);
  EXPECT_NEAR(starts[1] - starts[0], 1.2, 2e-3);
}

// A failure window would cut a push or a pull, which the simulation has no model for: refused at
// the key, nothing simulated.
TEST(ParameterServer, FailureWindowsAreRefused) {
  const auto diagnostics = testing::diagnostics_thrown_by([] {
    (void)testing::load(ps_yaml(2, "125MB", "", "{policy: bsp}", "target_loss: 0.26, max_time: \"100s\"",
                                "network:\n  failures: [{link: node0/nic, from: 1s, to: 2s}]\n"));
  });
  ASSERT_EQ(diagnostics.size(), 1u) << testing::dump(diagnostics);
  EXPECT_NE(diagnostics[0].message.find("the parameter-server simulation has no failure model"), std::string::npos)
      << testing::dump(diagnostics);
}

TEST(ParameterServer, TwoServersShardTheUpdate) {
  // The BSP case with the model sharded over two servers (node0, node1; workers node2 and node3 at
  // 0.3 and 0.6 s): a push is two 62.5 MB flows that share the worker's NIC, 125 MB / 1.25 GB/s =
  // 0.1 s as before, but the pulls no longer meet on one server NIC: each server sends 2 × 62.5 MB
  // (0.1 s) and each worker receives 2 × 62.5 MB (0.1 s). A round is 0.6 + 0.1 + 0.1 = 0.8 s
  // (0.9 s with one server).
  const Scenario scenario = testing::load(ps_yaml(2, "125MB", "  slowdown: [{workers: [node3/gpu0], speed: 0.5}]\n",
                                                  "{policy: bsp}", "target_loss: 0.26, max_time: \"100s\"", "", 2));
  const SimulationResult result = run_scenario(scenario, {});
  const std::vector<double> starts = step_starts(sim_of(result), 0);
  ASSERT_GE(starts.size(), 2u);
  EXPECT_NEAR(starts[1] - starts[0], 0.8, 2e-3);
}

TEST(ParameterServer, SlowdownTraceFileIsAWindowPerRow) {
  // The BSP case with worker 1's slowdown from a trace file instead of inline: the same 0.9 s rounds.
  const std::string trace = testing::write_file("slow.csv", "worker,from_s,until_s,factor\nnode2/gpu0,0,,2\n");
  const Scenario scenario = testing::load(ps_yaml(2, "125MB", "  slowdown_trace: " + trace + "\n", "{policy: bsp}",
                                                  "target_loss: 0.26, max_time: \"100s\""));
  const SimulationResult result = run_scenario(scenario, {});
  const std::vector<double> starts = step_starts(sim_of(result), 0);
  ASSERT_GE(starts.size(), 2u);
  EXPECT_NEAR(starts[1] - starts[0], 0.9, 2e-3);
  // Bad rows: every problem at its row and column.
  const std::string bad =
      testing::write_file("bad.csv", "worker,from_s,until_s,factor\nnode9/gpu0,5,4,0\nnode1/gpu0,x,,1\n");
  const std::vector<Diagnostic> errors = testing::diagnostics_thrown_by([&] {
    (void)testing::load(ps_yaml(2, "125MB", "  slowdown_trace: " + bad + "\n", "{policy: bsp}",
                                "target_loss: 0.26, max_time: \"100s\""));
  });
  testing::expect_errors(errors, {{2, 1, "'node9/gpu0' is not a worker"},
                                  {2, 14, "until_s must come after from_s"},
                                  {2, 16, "factor must be positive"},
                                  {3, 12, "x"}});
}

// The server's process (`server_process`): the BSP case above with every push also taken in by the
// server's one-core process at 250 MB/s, 0.5 s for a 125 MB update alone, five times its 0.1 s
// transfer. Round 1: worker 0's push is received alone from 0.3 to 0.6 s (75 MB), then shares the
// core with worker 1's (125 MB/s each): its last 50 MB end at 1.0 s. Worker 1 has 50 MB by then and
// takes the other 75 MB alone: 1.3 s. With the two applies (0.42 ms each) and the pulls (0.2 s) a
// round is 1.5 s (0.9 s without the process).
TEST(ParameterServer, ServerProcessTakesInPushesOneCoreAtATime) {
  const Scenario scenario = testing::load(ps_yaml(
      2, "125MB", "  slowdown: [{workers: [node2/gpu0], speed: 0.5}]\n  server_process: {receive_rate: \"250MB/s\"}\n",
      "{policy: bsp}", "target_loss: 0.26, max_time: \"100s\""));
  const SimulationResult result = run_scenario(scenario, {});
  const std::vector<double> starts = step_starts(sim_of(result), 0);
  ASSERT_GE(starts.size(), 3u);
  EXPECT_NEAR(starts[1] - starts[0], 1.5, 2e-3);
  EXPECT_NEAR(starts[2] - starts[1], 1.5, 2e-3);
  // Held from its commit at 1.0004 to the round's end at 1.3004 s, in the two rounds before the last
  // (which ends the run at its last commit).
  EXPECT_NEAR(sim_of(result).workers[0].blocked_s, 2 * 0.3, 5e-3);
}

// With busy_wait w, held worker 0's server thread spins on the process core from its commit
// (1.0004 s) until the round ends, so worker 1's remaining 74.9 MB are taken in at 250/(1 + w) MB/s.
// w = 1: 0.6 s instead of 0.3, the round ends at 1.6 s and with the pulls lasts 1.8 s; worker 0 is
// held 0.6 s a round. w = 3: 1.2 s, so 2.4 s rounds and 1.2 s held. (One engine per process: one
// weight per test.)
void expect_busy_wait_rounds(const std::string& weight, double round, double held) {
  const Scenario scenario = testing::load(
      ps_yaml(2, "125MB",
              "  slowdown: [{workers: [node2/gpu0], speed: 0.5}]\n  server_process: {receive_rate: \"250MB/s\", "
              "busy_wait: " +
                  weight + "}\n",
              "{policy: bsp}", "target_loss: 0.26, max_time: \"100s\""));
  const SimulationResult result = run_scenario(scenario, {});
  const std::vector<double> starts = step_starts(sim_of(result), 0);
  ASSERT_GE(starts.size(), 3u);
  EXPECT_NEAR(starts[1] - starts[0], round, 2e-3);
  EXPECT_NEAR(starts[2] - starts[1], round, 2e-3);
  EXPECT_NEAR(sim_of(result).workers[0].blocked_s, 2 * held, 5e-3);
}

TEST(ParameterServer, HeldWorkersBusyWaitingShareTheServerProcess) { expect_busy_wait_rounds("1", 1.8, 0.6); }

TEST(ParameterServer, BusyWaitWeightScalesTheSpinnersShare) { expect_busy_wait_rounds("3", 2.4, 1.2); }

TEST(ParameterServer, SspNeverLetsAWorkerRunMoreThanTheBoundAhead) {
  // Worker 0 steps in 0.3 s, worker 1 (speed 0.25) in 1.2 s; a 1 kB update (µs). Unbounded, worker 0
  // would do 4× the steps; with s = 2 it starts a step only while its commits exceed the slowest's
  // by at most 2 — checked at every step start, replaying the event trace.
  const Scenario scenario =
      testing::load(ps_yaml(2, "1kB", "  slowdown: [{workers: [node2/gpu0], speed: 0.25}]\n",
                            "{policy: ssp, staleness: 2}", "target_loss: 0.000001, max_time: \"30s\""));
  const SimulationResult result = run_scenario(scenario, {});
  const PsSimResult& sim = sim_of(result);
  std::vector<long> commits(2, 0);
  int checked = 0;
  for (const PsEvent& e : sim.events) {
    if (e.kind == PsEvent::Kind::commit) commits[static_cast<std::size_t>(e.worker)] = e.commits;
    if (e.kind != PsEvent::Kind::step_start) continue;
    const long slowest = *std::min_element(commits.begin(), commits.end());
    EXPECT_LE(commits[static_cast<std::size_t>(e.worker)] - slowest, 2) << "at t = " << e.time;
    ++checked;
  }
  EXPECT_GT(checked, 20);
  // The bound binds: worker 0 spends most of its time blocked and does only s + 1 more steps.
  EXPECT_GT(sim.workers[0].blocked_s, 10.0);
  EXPECT_LE(sim.workers[0].steps - sim.workers[1].steps, 3);
}

TEST(ParameterServer, AspNeverWaits) {
  // Same two workers without a bound: nobody is ever held, and worker 0 does 4× the steps of worker 1
  // (30 s / 0.3 s = 100 against 30 / 1.2 = 25, less a µs commit each).
  const Scenario scenario = testing::load(ps_yaml(2, "1kB", "  slowdown: [{workers: [node2/gpu0], speed: 0.25}]\n",
                                                  "{policy: asp}", "target_loss: 0.000001, max_time: \"30s\""));
  const SimulationResult result = run_scenario(scenario, {});
  const PsSimResult& sim = sim_of(result);
  for (const PsWorkerStats& w : sim.workers) EXPECT_EQ(w.blocked_s, 0.0);
  EXPECT_NEAR(sim.workers[0].steps, 100, 1);
  EXPECT_NEAR(sim.workers[1].steps, 25, 1);
}

TEST(ParameterServer, AdspCommitIntervalsEqualiseCommitsAcrossSpeeds) {
  // Speeds 1 : 2 : 4 (steps of 1.2, 0.6 and 0.3 s). Every worker commits once at least
  // Δt = Γ/c − its commit cost has passed since its last commit, whatever its speed, so over T = 600 s
  // each commits ⌊T/(Δt + overshoot)⌋ times, where the overshoot is at most one step (≤ 1.2 s) and
  // Δt ≥ 10 s (min_commit_interval): the counts can differ by at most one between the slowest and
  // the fastest. Local steps per commit follow the speeds: the fast worker accumulates ~4× more.
  const Scenario scenario = testing::load(
      ps_yaml(3, "1kB", "  slowdown: [{workers: [node1/gpu0], speed: 0.25}, {workers: [node2/gpu0], speed: 0.5}]\n",
              "{policy: adsp, check_period: \"60s\", min_commit_interval: \"10s\", initial_commit_rate: 2}",
              "target_loss: 0.000001, max_time: \"600s\""));
  const SimulationResult result = run_scenario(scenario, {});
  const PsSimResult& sim = sim_of(result);
  long lo = sim.workers[0].commits, hi = lo;
  for (const PsWorkerStats& w : sim.workers) {
    lo = std::min(lo, w.commits);
    hi = std::max(hi, w.commits);
    EXPECT_EQ(w.blocked_s, 0.0);
  }
  EXPECT_GE(lo, 5);
  EXPECT_LE(hi - lo, 1);
  EXPECT_NEAR(static_cast<double>(sim.workers[2].steps) / static_cast<double>(sim.workers[0].steps), 4.0, 0.2);
}

TEST(ParameterServer, TheRunEndsAtMaxTimeWhileAPushIsStillInFlight) {
  // The shipped ADSP-like run (max_time 20,000 s) with a switch latency of 10^24 s: its pushes are
  // still in flight at max_time, where the run ends with what it had, and the policy's ticker stops
  // with it. It used to tick on until the pushes arrived; at 10^24 s a 60 s tick no longer moves the
  // clock, and the run never ended.
  const Scenario scenario = load_scenario(DNNSIM_SOURCE_DIR "/scenarios/papers/adsp/adsp-cifar10.yaml",
                                          {"cluster.interconnect.latency=1e24s"});
  const SimulationResult result = run_scenario(scenario, {});
  EXPECT_EQ(sim_of(result).end_time, 20000.0);
  EXPECT_FALSE(sim_of(result).converged);
}

TEST(ParameterServer, BadInputIsReportedAllAtOnce) {
  const std::string yaml =
      "name: ps\n"                                                                            // 1
      "cluster:\n"                                                                            // 2
      "  node_types:\n"                                                                       // 3
      "    n: {gpu: V100-16GB, gpus_per_node: 1, fabric: pcie, nic: {link: Ethernet-10G}}\n"  // 4
      "  nodes:\n"                                                                            // 5
      "    - {type: n, count: 3}\n"                                                           // 6
      "  interconnect: {kind: switch, latency: \"1us\"}\n"                                    // 7
      "workload:\n"                                                                           // 8
      "  kind: parameter_server\n"                                                            // 9
      "  model: {zoo: resnet50}\n"                                                            // 10
      "  batch_size: 32\n"                                                                    // 11
      "  servers: [node9/gpu0]\n"                                                             // 12
      "  slowdown: [{workers: [node1/gpu0], speed: 0}]\n"                                     // 13
      "  sync: {policy: ssp, staleness: -1}\n"                                                // 14
      "  convergence: {target_loss: 0.5, max_time: \"1h\"}\n"                                 // 15
      "  server_process: {receive_rate: \"0B/s\"}\n";                                         // 16
  const std::vector<Diagnostic> errors = testing::diagnostics_thrown_by([&] { (void)testing::load(yaml); });
  testing::expect_errors(errors, {{12, 13, "server 'node9/gpu0' is not a device of the cluster"},
                                  {13, 45, "a worker of zero speed never finishes a step"},
                                  {14, 34, "[0, 1073741824], got -1"},
                                  {16, 34, "receive_rate must be positive"}});
}

// A misspelt sync or convergence section is one error each, at the misspelling: not also "expected a
// mapping for the sync policy, got nothing" without a line (ps_yaml: sync on line 13, convergence on 14).
TEST(ParameterServer, AMisspeltSectionIsOneError) {
  std::string yaml = ps_yaml(2, "1MB", "", "{policy: bsp}", "target_loss: 0.5");
  yaml.replace(yaml.find("  sync:"), 7, "  syn:");
  yaml.replace(yaml.find("  convergence:"), 14, "  convergenc:");
  testing::expect_errors(testing::diagnostics_thrown_by([&] { (void)testing::load(yaml); }),
                         {{13, 3, "unknown key 'syn' in the workload; did you mean 'sync'?"},
                          {14, 3, "unknown key 'convergenc' in the workload; did you mean 'convergence'?"}});
}

}  // namespace
}  // namespace dnnsim
