// TaskGraph JSON: exact round trips of a graph with every field, deterministic dumps, defaults,
// files. Its errors, each located at its line and column: task_graph_json_errors_test.cpp.
#include "models/program/task_graph_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

using testing::collective_op;
using testing::compute_op;
using testing::document;
using testing::transfer_op;

// ---------------------------------------------------------------------------------------------
// Round trips

// A graph using every field of every kind, with values that are awkward to print: non-integral
// amounts, integers above 2^53, tiny times, a label that needs escaping.
TaskGraph full_graph() {
  TaskGraph graph;
  const DeviceId gpu0 = graph.add_device("node0.gpu0");
  const DeviceId gpu1 = graph.add_device("node0.gpu1");
  const DeviceId gpu2 = graph.add_device("node1.gpu0");
  graph.set_mirror(graph.add_device("node1.gpu1"), gpu1);
  const StreamId compute_stream = graph.add_stream("compute");
  const StreamId comm_stream = graph.add_stream("comm");

  Task forward;
  Compute forward_op = compute_op(gpu0, 1.2e12, 3.5e9 + 0.25, Dtype::fp16);
  forward_op.measured_time = Seconds(0.0012);
  forward_op.measured_on = "V100-16GB";
  forward_op.gemm = GemmShape{4096, 1024, 64};
  forward_op.launches = 3;
  forward.op = forward_op;
  forward.stream = compute_stream;
  forward.phase = Phase::forward;
  forward.iteration = 2;
  forward.label = "fwd \"L0\"\n\tä";
  forward.alloc_bytes = Bytes(1073741824);
  forward.free_bytes = Bytes(1.5);
  graph.add(forward);

  Task backward;
  Compute backward_op = compute_op(gpu1, 1e20, 1e-7, Dtype::bf16);
  backward_op.gemm = GemmShape{4096, 1024, 64, GemmOp::backward};
  backward.op = backward_op;
  backward.stream = compute_stream;
  backward.phase = Phase::backward;
  backward.iteration = 4000000000u;
  backward.label = "bwd L0";
  backward.deps = {0};
  graph.add(backward);

  Task send;
  send.op = transfer_op(gpu0, gpu2, 1e6);
  send.stream = comm_stream;
  send.phase = Phase::forward;  // not the default for a transfer
  send.label = "activations";
  send.deps = {0};
  send.alloc_bytes = Bytes(1e6);
  graph.add(send);

  Task reduce;
  reduce.op = collective_op(CollectiveKind::all_reduce, {gpu0, gpu1, gpu2}, 123456789.125, "ring", gpu0);
  std::get<Collective>(reduce.op).calls = 6;
  std::get<Collective>(reduce.op).mirrored = true;
  std::get<Collective>(reduce.op).copies = 2;
  reduce.stream = comm_stream;
  reduce.phase = Phase::communication;
  reduce.deps = {1, 2};
  reduce.free_bytes = Bytes(1e6);
  graph.add(reduce);

  Task broadcast;
  broadcast.op = collective_op(CollectiveKind::broadcast, {gpu1, gpu2}, 4096, "", gpu2);
  broadcast.stream = comm_stream;
  broadcast.phase = Phase::optimizer;
  broadcast.iteration = 1;
  broadcast.deps = {3};
  graph.add(broadcast);
  return graph;
}

void expect_same_task(const Task& a, const Task& b) {
  EXPECT_EQ(a.op.index(), b.op.index());
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.deps, b.deps);
  EXPECT_EQ(a.alloc_bytes, b.alloc_bytes);  // exact, not approximately: the text is shortest round-trip
  EXPECT_EQ(a.free_bytes, b.free_bytes);
  if (const auto* x = std::get_if<Compute>(&a.op)) {
    const auto& y = std::get<Compute>(b.op);
    EXPECT_EQ(x->device, y.device);
    EXPECT_EQ(x->flops, y.flops);
    EXPECT_EQ(x->bytes_accessed, y.bytes_accessed);
    EXPECT_EQ(x->gemm.m, y.gemm.m);
    EXPECT_EQ(x->gemm.n, y.gemm.n);
    EXPECT_EQ(x->gemm.k, y.gemm.k);
    EXPECT_EQ(x->gemm.op, y.gemm.op);
    EXPECT_EQ(x->launches, y.launches);
    EXPECT_EQ(x->dtype, y.dtype);
    EXPECT_EQ(x->measured_time, y.measured_time);
    EXPECT_EQ(x->measured_on, y.measured_on);
  } else if (const auto* t = std::get_if<Transfer>(&a.op)) {
    const auto& y = std::get<Transfer>(b.op);
    EXPECT_EQ(t->src, y.src);
    EXPECT_EQ(t->dst, y.dst);
    EXPECT_EQ(t->size, y.size);
  } else {
    const auto& x = std::get<Collective>(a.op);
    const auto& y = std::get<Collective>(b.op);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.size, y.size);
    EXPECT_EQ(x.algorithm, y.algorithm);
    EXPECT_EQ(x.root, y.root);
    EXPECT_EQ(x.calls, y.calls);
    EXPECT_EQ(x.mirrored, y.mirrored);
    EXPECT_EQ(x.copies, y.copies);
  }
}

TEST(TaskGraphJson, RoundTripIsExact) {
  const TaskGraph original = full_graph();
  ASSERT_TRUE(original.validate().empty());
  const std::string text = dump_task_graph(original);
  const TaskGraph parsed = parse_task_graph(text, "dump.json");
  EXPECT_EQ(dump_task_graph(parsed), text);

  EXPECT_EQ(parsed.devices(), original.devices());
  EXPECT_EQ(parsed.streams(), original.streams());
  EXPECT_EQ(parsed.mirrors(), original.mirrors());
  ASSERT_EQ(parsed.tasks().size(), original.tasks().size());
  for (TaskId id = 0; id < original.tasks().size(); ++id) {
    SCOPED_TRACE(id);
    expect_same_task(parsed.task(id), original.task(id));
  }
  // Each parsed task knows where it came from: the '{' of its object in the dump.
  EXPECT_EQ(parsed.origin(0).file, "dump.json");
  EXPECT_GT(parsed.origin(1).line, parsed.origin(0).line);
  EXPECT_EQ(parsed.origin(0).column, 5);  // 2-space indent of the task list, plus 2
}

TEST(TaskGraphJson, DumpIsDeterministicWithFixedKeyOrderAndIntegralNumbers) {
  TaskGraph graph;
  graph.add_device("a");
  graph.add_device("b");
  graph.add_stream("s");
  Task compute;
  compute.op = compute_op(0, 2e9, 0.5);
  compute.label = "c";
  graph.add(compute);
  Task transfer;
  transfer.op = transfer_op(0, 1, 1e6);
  transfer.phase = Phase::communication;
  transfer.deps = {0};
  graph.add(transfer);

  const std::string expected = R"({
  "format": "dnnsim-taskgraph",
  "version": 1,
  "devices": [
    "a",
    "b"
  ],
  "streams": [
    "s"
  ],
  "tasks": [
    {
      "id": 0,
      "kind": "compute",
      "device": "a",
      "stream": "s",
      "phase": "other",
      "iteration": 0,
      "label": "c",
      "flops": 2000000000,
      "bytes_accessed": 0.5,
      "dtype": "fp32",
      "kernel": "other",
      "deps": [],
      "alloc_bytes": 0,
      "free_bytes": 0
    },
    {
      "id": 1,
      "kind": "transfer",
      "src": "a",
      "dst": "b",
      "size_bytes": 1000000,
      "stream": "s",
      "phase": "communication",
      "iteration": 0,
      "label": "",
      "deps": [
        0
      ],
      "alloc_bytes": 0,
      "free_bytes": 0
    }
  ]
}
)";
  EXPECT_EQ(dump_task_graph(graph), expected);
  EXPECT_EQ(dump_task_graph(graph), dump_task_graph(graph));
}

TEST(TaskGraphJson, EmptyGraph) {
  const std::string text = dump_task_graph(TaskGraph());
  EXPECT_EQ(text,
            "{\n  \"format\": \"dnnsim-taskgraph\",\n  \"version\": 1,\n  \"devices\": [],\n"
            "  \"streams\": [],\n  \"tasks\": []\n}\n");
  EXPECT_TRUE(parse_task_graph(text, "empty.json").tasks().empty());
}

TEST(TaskGraphJson, DefaultsOfOptionalKeys) {
  const TaskGraph graph = parse_task_graph(document(R"(
  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute"},
  {"id": 1, "kind": "transfer", "src": "gpu0", "dst": "gpu1", "size_bytes": 8, "stream": "comm"},
  {"id": 2, "kind": "collective", "collective": "broadcast", "group": ["gpu1", "gpu0"], "size_bytes": 8,
   "stream": "comm"}
)"),
                                           "defaults.json");
  ASSERT_EQ(graph.tasks().size(), 3u);
  const Task& compute = graph.task(0);
  EXPECT_EQ(compute.phase, Phase::other);
  EXPECT_EQ(compute.iteration, 0u);
  EXPECT_EQ(compute.label, "");
  EXPECT_TRUE(compute.deps.empty());
  EXPECT_EQ(compute.alloc_bytes, Bytes(0));
  EXPECT_EQ(compute.free_bytes, Bytes(0));
  const auto& op = std::get<Compute>(compute.op);
  EXPECT_EQ(op.dtype, Dtype::fp32);
  EXPECT_EQ(op.flops, Flop(0));
  EXPECT_EQ(op.bytes_accessed, Bytes(0));
  EXPECT_FALSE(op.measured_time.has_value());
  EXPECT_EQ(op.measured_on, "");
  EXPECT_EQ(op.launches, 1);

  EXPECT_EQ(graph.task(1).phase, Phase::communication);
  EXPECT_EQ(graph.task(1).stream, 1u);
  EXPECT_EQ(graph.task(2).phase, Phase::communication);
  const auto& broadcast = std::get<Collective>(graph.task(2).op);
  EXPECT_EQ(broadcast.algorithm, "");
  EXPECT_EQ(broadcast.root, 1u);  // the first group member, gpu1
  EXPECT_EQ(broadcast.group, (std::vector<DeviceId>{1, 0}));
}

TEST(TaskGraphJson, IdsAreLabelsMappedToPositions) {
  // Ids need not be 0..n-1 nor sorted; TaskIds follow the file order (which is the stream order).
  const TaskGraph graph = parse_task_graph(document(R"(
  {"id": 30, "kind": "compute", "device": "gpu0", "stream": "compute"},
  {"id": 10, "kind": "compute", "device": "gpu0", "stream": "compute", "deps": [30]},
  {"id": 20, "kind": "compute", "device": "gpu1", "stream": "compute", "deps": [10, 30]}
)"),
                                           "ids.json");
  EXPECT_EQ(graph.task(1).deps, std::vector<TaskId>{0});
  EXPECT_EQ(graph.task(2).deps, (std::vector<TaskId>{1, 0}));
}

TEST(TaskGraphJson, CompactJsonIsAccepted) {
  // As written by tools without pretty-printing: no space after ':' or ','.
  const TaskGraph graph =
      parse_task_graph(R"({"format":"dnnsim-taskgraph","version":1,"devices":["g0","g1"],"streams":["s"],)"
                       R"("tasks":[{"id":0,"kind":"transfer","src":"g0","dst":"g1","size_bytes":1.5e3,"stream":"s"}]})",
                       "compact.json");
  EXPECT_EQ(std::get<Transfer>(graph.task(0).op).size, Bytes(1500));
}

TEST(TaskGraphJson, SaveAndLoadFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "dnnsim_task_graph_json_test.json";
  const TaskGraph original = full_graph();
  save_task_graph(original, path.string());
  const TaskGraph loaded = load_task_graph(path.string());
  EXPECT_EQ(dump_task_graph(loaded), dump_task_graph(original));
  EXPECT_EQ(loaded.origin(2).file, path.string());
  std::filesystem::remove(path);
}

TEST(TaskGraphJson, MissingFileAndUnwritablePath) {
  try {
    (void)load_task_graph("/nonexistent/graph.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].location.file, "/nonexistent/graph.json");
    EXPECT_THAT(e.diagnostics()[0].message, HasSubstr("cannot open file"));
  }
  EXPECT_THROW(save_task_graph(TaskGraph(), "/nonexistent/dir/graph.json"), InputError);
}

TEST(TaskGraphJson, DumpRejectsOutOfRangeIndices) {
  TaskGraph graph;
  graph.add_stream("s");
  Task task;
  task.op = compute_op(3);
  graph.add(task);
  EXPECT_THROW((void)dump_task_graph(graph), std::invalid_argument);
}

}  // namespace
}  // namespace dnnsim
