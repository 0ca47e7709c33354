// TaskGraph JSON: every kind of error located at its line and column (round trips:
// task_graph_json_test.cpp).
//
// Most documents below share kHeader (tests/support/task_graph_ops.hpp), so that their tasks start
// on line 3; columns are 1-based and point at the first character of the offending token (the
// opening quote of a string, the '{' of a task).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dnnsim/source_paths.hpp"
#include "models/program/task_graph_json.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

using testing::document;

const std::string& kHeader = testing::kTaskGraphHeader;

std::vector<Diagnostic> errors_of(const std::string& text) {
  SCOPED_TRACE(text);
  return testing::diagnostics_thrown_by([&] { (void)parse_task_graph(text, "graph.json"); });
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
  expect_single_error(
      document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "gemm": [64, 64]}
)"),
      3, 79, "expected 'gemm' as [m, n, k] or [m, n, k, op], three whole numbers and one of nn, nt, tn, backward");
  expect_single_error(
      document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "gemm": [64, 8, 8, "tt"]}
)"),
      3, 90, "unknown GEMM op 'tt'");
  expect_single_error(
      document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "gemm": [64, 0, 8]}
)"),
      3, 84, "'gemm'");
}

// A task stands for 1 to 65,535 kernel launches (Compute::launches is 16 bits).
TEST(TaskGraphJson, LaunchesIsAWholeNumberFromOne) {
  expect_single_error(document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "launches": 0}
)"),
                      3, 83, "'launches'");
  expect_single_error(
      document(R"(  {"id": 0, "kind": "compute", "device": "gpu0", "stream": "compute", "launches": 65536}
)"),
      3, 83, "'launches'");
}

// calls: a whole number from 1; mirrored: true or false, unquoted.
TEST(TaskGraphJson, CallsAndMirroredAreTyped) {
  const std::string head =
      R"(  {"id": 0, "kind": "collective", "collective": "all_reduce", "group": ["gpu0", "gpu1"], )"
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
