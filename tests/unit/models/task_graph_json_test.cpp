// TaskGraph JSON: exact round trips, and every kind of error located at its line and column.
//
// Most documents below share kHeader, so that their tasks start on line 3; columns are 1-based and
// point at the first character of the offending token (the opening quote of a string, the '{' of a
// task).
#include "models/program/task_graph_json.hpp"
#include "tests/support/task_graph_ops.hpp"
#include "dnnsim/source_paths.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

using testing::collective_op;
using testing::compute_op;
using testing::transfer_op;

const std::string kHeader = R"({"format": "dnnsim-taskgraph", "version": 1, "devices": ["gpu0", "gpu1"],
"streams": ["compute", "comm"], "tasks": [
)";

std::string document(const std::string& tasks) { return kHeader + tasks + "]}\n"; }

std::vector<Diagnostic> errors_of(const std::string& text) {
  try {
    (void)parse_task_graph(text, "graph.json");
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError for:\n" << text;
  return {};
}

std::string listing(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) text += format_diagnostic(d) + "\n";
  return text;
}

// Asserts that `text` has exactly one problem, at line:column, whose message contains `message`.
void expect_single_error(const std::string& text, int line, int column, const std::string& message) {
  const std::vector<Diagnostic> diagnostics = errors_of(text);
  ASSERT_EQ(diagnostics.size(), 1u) << listing(diagnostics);
  EXPECT_EQ(diagnostics[0].location.file, "graph.json");
  EXPECT_EQ(diagnostics[0].location.line, line) << listing(diagnostics);
  EXPECT_EQ(diagnostics[0].location.column, column) << listing(diagnostics);
  EXPECT_THAT(diagnostics[0].message, HasSubstr(message));
}

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
  EXPECT_EQ(parsed.task(0).origin.file, "dump.json");
  EXPECT_GT(parsed.task(1).origin.line, parsed.task(0).origin.line);
  EXPECT_EQ(parsed.task(0).origin.column, 5);  // 2-space indent of the task list, plus 2
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
  EXPECT_EQ(loaded.task(2).origin.file, path.string());
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

// ---------------------------------------------------------------------------------------------
// Errors, each with its location

TEST(TaskGraphJson, UnknownKeySuggestsTheClosest) {
  // Line 3: `  {"id": 0, ..., "flop": 1e9}`; the key starts at column 71.
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "flop": 1e9}
)"),
                      3, 71, "unknown key 'flop' in tasks[0]; did you mean 'flops'?");
}

TEST(TaskGraphJson, KeyOfAnotherKindIsUnknown) {
  // "src" belongs to transfers; on a compute task it is an unknown key.
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "src": "gpu1", "stream": "compute"}
)"),
                      3, 50, "unknown key 'src' in tasks[0]");
}

TEST(TaskGraphJson, UnknownDeviceSuggestsTheClosest) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpo1", "stream": "compute"}
)"),
                      3, 42, "unknown device 'gpo1'; did you mean 'gpu1'?");
}

TEST(TaskGraphJson, UnknownDeviceInGroupListsTheDevicesWhenNoneIsClose) {
  expect_single_error(
      document(R"(  {"id": 0, "kind": "collective", "collective": "all_gather", "group": ["gpu0", "tpu-pod-7"],
   "size_bytes": 1e6, "stream": "comm"}
)"),
      3, 81, "unknown device 'tpu-pod-7'; expected one of: gpu0, gpu1");
}

TEST(TaskGraphJson, UnknownStreamAndPhase) {
  const std::vector<Diagnostic> errors = errors_of(document(
      R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "comms", "phase": "fwd"}
)"));
  ASSERT_EQ(errors.size(), 2u) << listing(errors);
  EXPECT_EQ(errors[0].location.column, 60);
  EXPECT_THAT(errors[0].message, HasSubstr("unknown stream 'comms'; did you mean 'comm'?"));
  EXPECT_EQ(errors[1].location.column, 78);
  EXPECT_THAT(errors[1].message, HasSubstr("unknown phase 'fwd'; expected one of: forward, backward"));
}

TEST(TaskGraphJson, DanglingDependencyIsLocatedAtTheDep) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute"},
  {"id": 1, "kind": "compute", "device": "gpu0", "stream": "compute", "deps": [0, 7]}
)"),
                      4, 83, "dangling dependency: no task has id 7");
}

TEST(TaskGraphJson, DuplicateId) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute"},
  {"id": 0, "kind": "compute", "device": "gpu1", "stream": "compute"}
)"),
                      4, 10, "duplicate task id 0 (first used at line 3)");
}

TEST(TaskGraphJson, CycleIsNamedAndLocatedAtATaskOfIt) {
  // a waits for c, b for a, c for b. validate() reports the cycle on task 0, whose '{' is at 3:3.
  expect_single_error(
      document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "label": "a", "deps": [2]},
  {"id": 1, "kind": "compute", "device": "gpu0", "stream": "compute", "label": "b", "deps": [0]},
  {"id": 2, "kind": "compute", "device": "gpu0", "stream": "compute", "label": "c", "deps": [1]}
)"),
      3, 3, "0 ('a') waits for 2 ('c') waits for 1 ('b') waits for 0 ('a')");
  const std::vector<Diagnostic> mutual =
      errors_of(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "deps": [1]},
  {"id": 1, "kind": "compute", "device": "gpu1", "stream": "compute", "deps": [0]}
)"));
  ASSERT_EQ(mutual.size(), 1u) << listing(mutual);
  EXPECT_THAT(mutual[0].message, HasSubstr("0 ('') waits for 1 ('') waits for 0 ('')"));
}

TEST(TaskGraphJson, UnresolvedTaskInventsNoStreamOrder) {
  // Task 0's device is unknown. Were it checked as if it ran on gpu0/compute, task 1 would queue
  // behind it there while it waits for task 1: a cycle that is not in the file.
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpuX", "stream": "compute", "deps": [1]},
  {"id": 1, "kind": "compute", "device": "gpu0", "stream": "compute"}
)"),
                      3, 42, "unknown device 'gpuX'");
}

TEST(TaskGraphJson, SelfDependencyIsLocatedAtItsTask) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute"},
   {"id": 1, "kind": "compute", "device": "gpu0", "stream": "compute", "deps": [1]}
)"),
                      4, 4, "task 1 (''): depends on itself");
}

TEST(TaskGraphJson, StringWhereNumberExpected) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "flops": "lots"}
)"),
                      3, 80, "expected a number for 'flops', got the string \"lots\"");
}

TEST(TaskGraphJson, GemmShapeIsThreeWholePositiveNumbersAndAnOp) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "gemm": [64, 64]}
)"),
                      3, 79, "expected 'gemm' as [m, n, k] or [m, n, k, op], three whole numbers and one of nn, nt, tn, backward");
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "gemm": [64, 8, 8, "tt"]}
)"),
                      3, 90, "unknown GEMM op 'tt'");
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "gemm": [64, 0, 8]}
)"),
                      3, 84, "'gemm'");
}

// A task stands for 1 to 65,535 kernel launches (Compute::launches is 16 bits).
TEST(TaskGraphJson, LaunchesIsAWholeNumberFromOne) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "launches": 0}
)"),
                      3, 83, "'launches'");
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "launches": 65536}
)"),
                      3, 83, "'launches'");
}

// calls: a whole number from 1; mirrored: true or false, unquoted.
TEST(TaskGraphJson, CallsAndMirroredAreTyped) {
  const std::string head = R"(  {"id": 0, "kind": "collective", "collective": "all_reduce", "group": ["gpu0", "gpu1"], )"
                           R"("size_bytes": 8, "stream": "comm", )";
  expect_single_error(document(head + R"("calls": 0}
)"),
                      3, 134, "'calls'");
  expect_single_error(document(head + R"("mirrored": "yes"}
)"),
                      3, 137, "expected true or false for 'mirrored'");
}

TEST(TaskGraphJson, CopiesIsAWholeNumberFromOne) {
  expect_single_error(
      document(R"(  {"id": 0, "kind": "collective", "collective": "all_reduce", "group": ["gpu0", "gpu1"], )"
               R"("size_bytes": 8, "stream": "comm", "copies": 0}
)"),
      3, 135, "'copies'");
}

// `mirrors` names devices of the graph; a device mirroring itself is the graph's own check.
TEST(TaskGraphJson, MirrorsNameDevices) {
  const std::string tasks = R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "flops": 1}
]}
)";
  const auto with = [&](const std::string& mirrors) {
    std::string text = kHeader;
    text.replace(text.find("\n\"streams\""), 1, "\n\"mirrors\": " + mirrors + ",\n");
    return text + tasks;
  };
  EXPECT_EQ(parse_task_graph(with(R"({"gpu1": "gpu0"})"), "graph.json").mirrors(),
            (std::vector<std::pair<DeviceId, DeviceId>>{{1, 0}}));
  const auto unknown = errors_of(with(R"({"gpu1": "gpu9"})"));
  ASSERT_EQ(unknown.size(), 1u) << listing(unknown);
  EXPECT_THAT(unknown[0].message, HasSubstr("unknown device 'gpu9'"));
  const auto itself = errors_of(with(R"({"gpu1": "gpu1"})"));
  ASSERT_EQ(itself.size(), 1u) << listing(itself);
  EXPECT_THAT(itself[0].message, HasSubstr("device 'gpu1' cannot mirror itself"));
  EXPECT_EQ(itself[0].location.line, 2);
}

TEST(TaskGraphJson, QuotedNumberIsAString) {
  // yaml-cpp alone would read "1e12" as a number; JSON says it is a string.
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "flops": "1e12"}
)"),
                      3, 80, "expected a number for 'flops', got the string \"1e12\"");
}

TEST(TaskGraphJson, NumberWhereStringExpected) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": 0, "stream": "compute"}
)"),
                      3, 42, "expected a string for 'device', got 0");
}

TEST(TaskGraphJson, NonIntegerId) {
  expect_single_error(document(R"(  {"id": 1.5, "kind": "compute", "device": "gpu0", "stream": "compute"}
)"),
                      3, 10, "expected an integer for 'id', got 1.5");
}

TEST(TaskGraphJson, NegativeSize) {
  expect_single_error(
      document(R"(  {"id": 0, "kind": "transfer", "src": "gpu0", "dst": "gpu1", "size_bytes": -5e6, "stream": "comm"}
)"),
      3, 77, "'size_bytes' cannot be negative, got -5e6");
}

TEST(TaskGraphJson, TransferToItself) {
  expect_single_error(
      document(R"(  {"id": 0, "kind": "transfer", "src": "gpu1", "dst": "gpu1", "size_bytes": 5, "stream": "comm"}
)"),
      3, 3, "a transfer needs two different devices");
}

TEST(TaskGraphJson, CollectiveGroupWithOneDevice) {
  expect_single_error(
      document(
          R"(  {"id": 0, "kind": "collective", "collective": "all_reduce", "group": ["gpu0"], "size_bytes": 5,
    "stream": "comm"}
)"),
      3, 3, "a collective needs a group of at least two devices");
}

TEST(TaskGraphJson, RootMattersToBroadcastOnly) {
  // On another kind the root is checked but not kept: it stays the first group member.
  const TaskGraph graph = parse_task_graph(document(R"(
  {"id": 0, "kind": "collective", "collective": "all_reduce", "group": ["gpu0", "gpu1"], "root": "gpu1",
   "size_bytes": 5, "stream": "comm"},
  {"id": 1, "kind": "collective", "collective": "broadcast", "group": ["gpu0", "gpu1"], "root": "gpu1",
   "size_bytes": 5, "stream": "comm"}
)"),
                                           "root.json");
  EXPECT_EQ(std::get<Collective>(graph.task(0).op).root, 0u);
  EXPECT_EQ(std::get<Collective>(graph.task(1).op).root, 1u);
  expect_single_error(
      document(R"(  {"id": 0, "kind": "collective", "collective": "all_reduce", "group": ["gpu0", "gpu1"],
   "root": "gpu7", "size_bytes": 5, "stream": "comm"}
)"),
      4, 12, "unknown device 'gpu7'");
}

TEST(TaskGraphJson, BroadcastRootOutsideTheGroup) {
  expect_single_error(R"({"format": "dnnsim-taskgraph", "version": 1, "devices": ["a", "b", "c"], "streams": ["s"],
 "tasks": [
   {"id": 0, "kind": "collective", "collective": "broadcast", "group": ["a", "b"], "root": "c", "size_bytes": 5,
    "stream": "s"}]})",
                      3, 4, "the broadcast root is not in the group");
}

// The example of docs/taskgraph.md is a valid file.
TEST(TaskGraphJson, DocumentationExampleLoads) {
  std::ifstream in(std::string(DNNSIM_SOURCE_DIR) + "/docs/taskgraph.md");
  ASSERT_TRUE(in) << "docs/taskgraph.md not found";
  std::stringstream markdown;
  markdown << in.rdbuf();
  const std::string text = markdown.str();
  const std::size_t begin = text.find("```json\n");
  ASSERT_NE(begin, std::string::npos);
  const std::size_t end = text.find("```", begin + 8);
  const std::string example = text.substr(begin + 8, end - begin - 8);
  const TaskGraph graph = parse_task_graph(example, "docs/taskgraph.md");
  ASSERT_EQ(graph.tasks().size(), 3u);
  EXPECT_EQ(std::get<Compute>(graph.task(0).op).measured_time, Seconds(0.0012));
  EXPECT_EQ(graph.task(2).deps, std::vector<TaskId>{1});
}

TEST(TaskGraphJson, MissingRequiredKeyIsLocatedAtItsObject) {
  expect_single_error(document(R"(  {"id": 0, "kind": "transfer", "src": "gpu0", "dst": "gpu1", "stream": "comm"}
)"),
                      3, 3, "missing key 'size_bytes' in tasks[0]");
}

TEST(TaskGraphJson, MeasuredTimeNeedsItsGpu) {
  expect_single_error(
      document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "measured_time_s": 0.002}
)"),
      3, 90, "'measured_time_s' needs 'measured_on'");
}

TEST(TaskGraphJson, DuplicateKey) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "flops": 1,
   "flops": 2}
)"),
                      4, 4, "duplicate key 'flops' in tasks[0]");
}

TEST(TaskGraphJson, BadFormat) {
  // The rest of another format would only give misleading errors: reading stops at the header.
  expect_single_error(R"({"format": "chakra", "version": 1, "nodes": []})", 1, 12,
                      "expected format 'dnnsim-taskgraph', got 'chakra'");
}

TEST(TaskGraphJson, BadVersion) {
  expect_single_error(R"({"format": "dnnsim-taskgraph",
 "version": 2, "devices": [], "streams": [], "tasks": []})",
                      2, 13, "unsupported version 2; this dnnsim reads version 1");
}

TEST(TaskGraphJson, MissingHeaderKeys) {
  const std::vector<Diagnostic> errors = errors_of(R"({"devices": [], "streams": [], "tasks": []})");
  ASSERT_EQ(errors.size(), 2u) << listing(errors);
  EXPECT_THAT(errors[0].message, HasSubstr("missing key 'format' in the task graph"));
  EXPECT_THAT(errors[1].message, HasSubstr("missing key 'version' in the task graph"));
  EXPECT_EQ(errors[0].location.line, 1);
  EXPECT_EQ(errors[0].location.column, 1);
}

TEST(TaskGraphJson, DuplicateDeviceName) {
  expect_single_error(R"({"format": "dnnsim-taskgraph", "version": 1,
 "devices": ["gpu0", "gpu1", "gpu0"], "streams": ["s"], "tasks": []})",
                      2, 30, "duplicate device name 'gpu0'");
}

TEST(TaskGraphJson, SyntaxErrorIsLocated) {
  const std::vector<Diagnostic> errors = errors_of(R"({"format": "dnnsim-taskgraph", "version": 1,
 "devices": ["gpu0" "gpu1"], "streams": [], "tasks": []})");
  ASSERT_EQ(errors.size(), 1u) << listing(errors);
  EXPECT_EQ(errors[0].location.line, 2);
  EXPECT_THAT(errors[0].message, HasSubstr("JSON syntax error"));
}

TEST(TaskGraphJson, NotAnObject) {
  expect_single_error("[1, 2]", 1, 1, "expected a mapping for the task graph, got a list");
}

TEST(TaskGraphJson, EveryProblemIsReportedAtOnceInFileOrder) {
  const std::vector<Diagnostic> errors = errors_of(document(
      R"(  {"id": 0, "kind": "compute", "device": "gpu9", "stream": "compute", "flop": 1},
  {"id": 1, "kind": "transfer", "src": "gpu0", "dst": "gpu1", "size_bytes": -1, "stream": "comm", "deps": [5]},
  {"id": 2, "kind": "collective", "collective": "all_reduce", "group": ["gpu0"], "size_bytes": 1, "stream": "comm"},
  {"id": 3, "kind": "sleep", "stream": "compute"}
)"));
  // 1. unknown device gpu9; 2. unknown key flop; 3. negative size; 4. dangling dep 5;
  // 5. one-device group (validate()); 6. unknown task kind sleep.
  ASSERT_EQ(errors.size(), 6u) << listing(errors);
  EXPECT_THAT(errors[0].message, HasSubstr("unknown device 'gpu9'"));
  EXPECT_THAT(errors[1].message, HasSubstr("unknown key 'flop'"));
  EXPECT_THAT(errors[2].message, HasSubstr("'size_bytes' cannot be negative"));
  EXPECT_THAT(errors[3].message, HasSubstr("dangling dependency: no task has id 5"));
  EXPECT_THAT(errors[4].message, HasSubstr("a collective needs a group of at least two devices"));
  EXPECT_THAT(errors[5].message,
              HasSubstr("unknown task kind 'sleep'; expected one of: compute, transfer, collective"));
  const std::vector<int> lines{errors[0].location.line, errors[1].location.line, errors[2].location.line,
                               errors[3].location.line, errors[4].location.line, errors[5].location.line};
  EXPECT_EQ(lines, (std::vector<int>{3, 3, 4, 4, 5, 6}));
  // The whole list is the exception's text, one "file:line:col: error: ..." per line.
  try {
    (void)parse_task_graph(document(R"(  {"id": 0, "kind": "compute", "device": "gpu9", "stream": "compute"}
)"),
                           "graph.json");
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "graph.json:3:42: error: unknown device 'gpu9'; did you mean 'gpu0'?");
  }
}

}  // namespace
}  // namespace dnnsim
