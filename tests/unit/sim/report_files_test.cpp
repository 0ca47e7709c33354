// tasks.csv and trace.json as the report writer streams them (sim/report/report.hpp), and a cluster
// run's jobs_trace.json (sim/workloads/cluster/cluster_kind.hpp), on results built by hand and small
// enough that every byte of each file is derived below.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>

#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/cluster/cluster_kind.hpp"
#include "tests/support/ran_tasks.hpp"

namespace dnnsim {
namespace {

// Two GPUs of one node joined by one link of 2 GB/s; streams "compute" and "comm". Four tasks:
//   0  compute on gpu0, 1 TFLOP, forward, iteration 0, [0, 1 ms]   (a label with quotes: escaped in JSON)
//   1  transfer gpu0 → gpu1, 2 MB, iteration 0, [1, 3 ms]         (one flow of 2 MB over 2 ms: 1 GB/s)
//   2  transfer gpu1 → gpu0, 1 MB, iteration 1, [1, 2 ms]         (one flow of 1 MB over 1 ms: 1 GB/s;
//                                                                    a comma in its label: ';' in the CSV)
//   3  compute on gpu1 that never ran (no dates)
// The two flows load the same link (the route 1 → 0 is the mirror of 0 → 1).
SimulationResult two_gpus_one_link() {
  SimulationResult r = testing::two_gpu_result();
  const StreamId compute = testing::kComputeStream;
  const StreamId comm = testing::kCommStream;
  const auto add = [&](auto op, StreamId stream, Phase phase, std::uint32_t iteration, const char* label, double start,
                       double end) {
    testing::add_ran_task(r, Task{.op = op, .stream = stream, .phase = phase, .iteration = iteration, .label = label},
                          start, end);
  };
  constexpr double kNever = std::numeric_limits<double>::quiet_NaN();
  add(Compute{.device = 0, .flops = Flop(1e12)}, compute, Phase::forward, 0, R"(fwd "a")", 0.0, 1e-3);
  add(Transfer{.src = 0, .dst = 1, .size = Bytes(2e6)}, comm, Phase::communication, 0, "act", 1e-3, 3e-3);
  add(Transfer{.src = 1, .dst = 0, .size = Bytes(1e6)}, comm, Phase::communication, 1, "grad,back", 1e-3, 2e-3);
  add(Compute{.device = 1}, compute, Phase::optimizer, 1, "never", kNever, kNever);
  r.gpu_names = {"node0/gpu0", "node0/gpu1"};
  r.layout.links = {LinkDecl{"node0/link", BytesPerSecond(2e9), Seconds(0)}};
  NodeLayout node;
  node.name = "node0";
  node.gpus = {"node0/gpu0", "node0/gpu1"};
  node.gpu_routes[{0, 1}] = Route{Hop{0, true}};
  r.layout.nodes = {node};
  r.layout.first_gpu = {0};
  r.flows = {{0, 1, 2e6, 1e-3, 3e-3}, {1, 0, 1e6, 1e-3, 2e-3}};
  r.makespan_s = 3e-3;
  return r;
}

// Iterations whose last tasks end at 3, 1, 5 and 4 s (overlapping, out of order): the second is done
// when the first is (3 s) and the fourth when the third is (5 s), so 3, 0, 2 and 0 s — never negative,
// and they add up to the last end.
TEST(ReportFiles, IterationTimesRunFromThePreviousIterationsEnd) {
  EXPECT_EQ(iteration_times({3, 1, 5, 4}), (std::vector<double>{3, 0, 2, 0}));
  EXPECT_EQ(iteration_times({1, 2.5}), (std::vector<double>{1, 1.5}));
}

TEST(ReportFiles, TasksCsvRowPerTask) {
  // Dates with 9 significant digits ({:.9g}), bytes and FLOPs as the shortest decimal; a task that
  // never ran has empty dates; the devices of a transfer are "src>dst".
  std::ostringstream out;
  write_tasks_csv(out, two_gpus_one_link());
  EXPECT_EQ(out.str(),
            "id,label,kind,phase,iteration,devices,stream,start_s,end_s,duration_s,bytes,flops\n"
            "0,fwd \"a\",compute,forward,0,node0/gpu0,compute,0,0.001,0.001,0,1000000000000\n"
            "1,act,transfer,communication,0,node0/gpu0>node0/gpu1,comm,0.001,0.003,0.002,2000000,0\n"
            "2,grad;back,transfer,communication,1,node0/gpu1>node0/gpu0,comm,0.001,0.002,0.001,1000000,0\n"
            "3,never,compute,optimizer,1,node0/gpu1,compute,,,,0,0\n");
}

TEST(ReportFiles, ChromeTraceEventPerTaskDeviceAndLinkChange) {
  // One compact JSON document ending in a newline. Metadata first: a process per device (pid = device)
  // with a thread per stream (tid = stream), then the links' process (pid 2). Then a complete event
  // ("X") per task and device it occupies (a transfer: its source), dates in µs: task 0 at 0 for
  // 1000, task 1 at 1000 for 2000, task 2 (from gpu1) at 1000 for 1000; task 3 never ran: none.
  // Then the link's counter ("C") at each date its rate changes, in its busier direction (a split-duplex
  // link has its bandwidth each way): both flows start at 1 ms, one each way (1 GB/s over 2 GB/s: 0.5,
  // one event for the two changes at one date), the 1 MB one ends at 2 ms (the other way still 0.5),
  // the 2 MB one at 3 ms (0.0). Whole numbers in JSON read "1000.0", as nlohmann writes them.
  std::ostringstream out;
  write_chrome_trace(out, two_gpus_one_link());
  EXPECT_EQ(out.str(), R"({"displayTimeUnit":"ms","traceEvents":[)"
                       R"({"name":"process_name","ph":"M","pid":0,"args":{"name":"node0/gpu0"}},)"
                       R"({"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"compute"}},)"
                       R"({"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"comm"}},)"
                       R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"node0/gpu1"}},)"
                       R"({"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"compute"}},)"
                       R"({"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"comm"}},)"
                       R"({"name":"process_name","ph":"M","pid":2,"args":{"name":"links"}},)"
                       R"({"name":"fwd \"a\"","cat":"forward","ph":"X","pid":0,"tid":0,"ts":0.0,"dur":1000.0,)"
                       R"("args":{"task":0,"iteration":0}},)"
                       R"({"name":"act","cat":"communication","ph":"X","pid":0,"tid":1,"ts":1000.0,"dur":2000.0,)"
                       R"("args":{"task":1,"iteration":0}},)"
                       R"({"name":"grad,back","cat":"communication","ph":"X","pid":1,"tid":1,"ts":1000.0,"dur":1000.0,)"
                       R"("args":{"task":2,"iteration":1}},)"
                       R"({"name":"node0/link","ph":"C","pid":2,"ts":1000.0,"args":{"utilization":0.5}},)"
                       R"({"name":"node0/link","ph":"C","pid":2,"ts":2000.0,"args":{"utilization":0.5}},)"
                       R"({"name":"node0/link","ph":"C","pid":2,"ts":3000.0,"args":{"utilization":0.0}})"
                       "]}\n");
}

TEST(ReportFiles, ASharedLinksCounterAddsBothDirections) {
  // The same two flows on a link whose directions share its bandwidth (a host bridge): 1 + 1 GB/s over
  // 2 GB/s at 1 ms (1.0), 0.5 from 2 ms, 0.0 at 3 ms. (Summed on a split-duplex link as well, the
  // counters read up to 2.0 on NVSwitch ports busy both ways, where summary.json's mean_utilization
  // takes the busier direction.)
  SimulationResult result = two_gpus_one_link();
  result.layout.links.front().sharing = LinkDecl::Sharing::shared;
  std::ostringstream out;
  write_chrome_trace(out, result);
  EXPECT_NE(out.str().find(R"({"name":"node0/link","ph":"C","pid":2,"ts":1000.0,"args":{"utilization":1.0}},)"
                           R"({"name":"node0/link","ph":"C","pid":2,"ts":2000.0,"args":{"utilization":0.5}},)"
                           R"({"name":"node0/link","ph":"C","pid":2,"ts":3000.0,"args":{"utilization":0.0}}]})"),
            std::string::npos)
      << out.str();
}

// Two jobs: "j0" ran once on servers 0 (2 GPUs) and 1 (1 GPU) from 0.5 s to 2 s; 'a"b' (a quote:
// escaped) from 0.25 s to 1 s on server 3 (4 GPUs). One compact document ending in a newline, its keys
// in the order "traceEvents", "displayTimeUnit"; an event per attempt and server, in the attempts'
// order: pid = server, tid = the job's index, dates in µs (0.5 s is 500000.0: whole numbers read
// "….0", as nlohmann writes them). Without attempts the array is empty.
TEST(ReportFiles, JobsTraceEventPerAttemptAndServer) {
  JobTrace trace;
  trace.jobs.resize(2);
  trace.jobs[0].id = "j0";
  trace.jobs[1].id = R"(a"b)";
  ClusterSimResult sim;
  sim.attempts = {JobAttempt{0, Placement{{{0, 2}, {1, 1}}, {}}, 0.5, 2.0},
                  JobAttempt{1, Placement{{{3, 4}}, {}}, 0.25, 1.0}};
  std::ostringstream out;
  write_jobs_trace(out, sim, trace);
  EXPECT_EQ(out.str(), R"({"traceEvents":[)"
                       R"x({"name":"j0 (2 GPUs)","ph":"X","pid":0,"tid":0,"ts":500000.0,"dur":1500000.0},)x"
                       R"x({"name":"j0 (1 GPU)","ph":"X","pid":1,"tid":0,"ts":500000.0,"dur":1500000.0},)x"
                       R"x({"name":"a\"b (4 GPUs)","ph":"X","pid":3,"tid":1,"ts":250000.0,"dur":750000.0})x"
                       R"(],"displayTimeUnit":"ms"})"
                       "\n");
  std::ostringstream empty;
  write_jobs_trace(empty, ClusterSimResult{}, trace);
  EXPECT_EQ(empty.str(), "{\"traceEvents\":[],\"displayTimeUnit\":\"ms\"}\n");
}

}  // namespace
}  // namespace dnnsim
