// TaskGraph::validate() on graphs built in code, and the enum ⇄ name tables of the IR.
#include "models/program/task_graph.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

using testing::collective_op;
using testing::compute_op;
using testing::transfer_op;

// Two devices, one stream, and `n` compute tasks labelled a, b, c, ... without dependencies.
TaskGraph graph_of(std::size_t n) {
  TaskGraph graph;
  graph.add_device("gpu0");
  graph.add_device("gpu1");
  graph.add_stream("compute");
  for (std::size_t i = 0; i < n; ++i) {
    Task task;
    task.op = compute_op(static_cast<DeviceId>(i % 2));
    task.label = std::string(1, static_cast<char>('a' + i));
    graph.add(task, SourceLocation{"built.json", static_cast<int>(i) + 10, 3});
  }
  return graph;
}

TEST(TaskGraph, ValidGraphHasNoProblems) {
  TaskGraph graph = graph_of(3);
  graph.tasks()[1].deps = {0};
  graph.tasks()[2].deps = {0, 1};
  EXPECT_TRUE(graph.validate().empty());
}

TEST(TaskGraph, CycleOfThreeIsNamedOnOneOfItsTasks) {
  // a waits for c, b for a, c for b: no task can start. The walk starts from the first blocked task
  // (a, id 0) and follows its blocked dependencies a → c → b → a.
  TaskGraph graph = graph_of(4);
  graph.tasks()[0].deps = {2};
  graph.tasks()[1].deps = {0};
  graph.tasks()[2].deps = {1};
  graph.tasks()[3].deps = {2};  // behind the cycle, not on it: not named
  const std::vector<Diagnostic> problems = graph.validate();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].message, HasSubstr("task 0 ('a'): dependency cycle"));
  EXPECT_THAT(problems[0].message, HasSubstr(": 0 ('a') waits for 2 ('c') waits for 1 ('b') waits for 0 ('a')"));
  EXPECT_EQ(problems[0].location.line, 10);  // task 0's origin
  EXPECT_EQ(problems[0].location.column, 3);
}

TEST(TaskGraph, CycleBehindAnAcyclicPrefixIsFound) {
  // d (3) waits for the cycle b ⇄ c; a (0) is free. The first blocked task is b.
  TaskGraph graph = graph_of(4);
  graph.tasks()[1].deps = {0, 2};
  graph.tasks()[2].deps = {1};
  graph.tasks()[3].deps = {1};
  const std::vector<Diagnostic> problems = graph.validate();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].message, HasSubstr("dependency cycle"));
  EXPECT_THAT(problems[0].message, HasSubstr(": 1 ('b') waits for 2 ('c') waits for 1 ('b')"));
}

TEST(TaskGraph, DependencyAgainstStreamOrderDeadlocks) {
  // a and c share gpu0's stream, so c starts after a; a waiting for c can never start.
  TaskGraph graph = graph_of(3);  // a on gpu0, b on gpu1, c on gpu0
  graph.tasks()[0].deps = {2};
  const std::vector<Diagnostic> problems = graph.validate();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].message, HasSubstr("dependency cycle"));
  EXPECT_THAT(problems[0].message, HasSubstr("0 ('a') waits for 2 ('c') waits for 0 ('a')"));

  // The same dependency across two streams is fine: streams overlap.
  graph.tasks()[2].stream = graph.add_stream("comm");
  EXPECT_TRUE(graph.validate().empty());
}

TEST(TaskGraph, SelfDependency) {
  TaskGraph graph = graph_of(2);
  graph.tasks()[1].deps = {1};
  const std::vector<Diagnostic> problems = graph.validate();
  ASSERT_EQ(problems.size(), 1u);  // structural problems suppress the cycle search
  EXPECT_EQ(problems[0].message, "task 1 ('b'): depends on itself");
  EXPECT_EQ(problems[0].location.line, 11);
}

TEST(TaskGraph, DependencyOnMissingTask) {
  TaskGraph graph = graph_of(2);
  graph.tasks()[0].deps = {5};
  const std::vector<Diagnostic> problems = graph.validate();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message, "task 0 ('a'): depends on task 5, which does not exist");
}

TEST(TaskGraph, OutOfRangeDevicesAndStream) {
  TaskGraph graph = graph_of(0);
  Task compute;
  compute.op = compute_op(2);
  compute.label = "c";
  graph.add(compute);
  Task transfer;
  transfer.op = transfer_op(0, 7);
  transfer.stream = 4;
  graph.add(transfer);
  Task collective;
  collective.op = collective_op(CollectiveKind::all_reduce, {0, 9});
  graph.add(collective);

  const std::vector<Diagnostic> problems = graph.validate();
  std::vector<std::string> messages;
  for (const Diagnostic& d : problems) messages.push_back(d.message);
  EXPECT_THAT(messages, ::testing::ElementsAre("task 0 ('c'): compute device index 2 is out of range (2 devices)",
                                               "task 1 (''): stream index 4 is out of range (1 streams)",
                                               "task 1 (''): destination device index 7 is out of range (2 devices)",
                                               "task 2 (''): group device index 9 is out of range (2 devices)"));
}

TEST(TaskGraph, TransferAndCollectiveShapes) {
  TaskGraph graph = graph_of(0);
  Task self;
  self.op = transfer_op(1, 1);
  graph.add(self);
  Task lonely;
  lonely.op = collective_op(CollectiveKind::all_reduce, {0});
  graph.add(lonely);
  Task twice;
  twice.op = collective_op(CollectiveKind::all_reduce, {0, 1, 0});
  graph.add(twice);
  Task rootless;
  graph.add_device("gpu2");
  rootless.op = collective_op(CollectiveKind::broadcast, {0, 1}, 0, "", 2);
  graph.add(rootless);

  std::vector<std::string> messages;
  for (const Diagnostic& d : graph.validate()) messages.push_back(d.message);
  EXPECT_THAT(messages, ::testing::ElementsAre("task 0 (''): a transfer needs two different devices",
                                               "task 1 (''): a collective needs a group of at least two devices",
                                               "task 2 (''): device 0 appears twice in the group",
                                               "task 3 (''): the broadcast root is not in the group"));
}

TEST(TaskGraph, StreamsByNameAndIterationCount) {
  TaskGraph graph;
  EXPECT_EQ(graph.stream("compute"), 0u);
  EXPECT_EQ(graph.stream("comm"), 1u);
  EXPECT_EQ(graph.stream("compute"), 0u);  // found, not added again
  EXPECT_EQ(graph.streams().size(), 2u);
  EXPECT_EQ(graph.iteration_count(), 0u);
  Task task;
  task.iteration = 2;
  graph.add(task);
  EXPECT_EQ(graph.iteration_count(), 3u);
}

TEST(TaskGraph, DevicesOfEachKind) {
  Task task;
  task.op = compute_op(3);
  EXPECT_EQ(task.devices(), std::vector<DeviceId>{3});
  task.op = transfer_op(1, 2);
  EXPECT_EQ(task.devices(), std::vector<DeviceId>{1});  // the source is the device that works
  task.op = collective_op(CollectiveKind::all_gather, {4, 5, 6});
  EXPECT_EQ(task.devices(), (std::vector<DeviceId>{4, 5, 6}));
}

TEST(TaskGraph, PhaseNamesRoundTrip) {
  for (Phase phase : {Phase::forward, Phase::backward, Phase::weight_grad, Phase::optimizer, Phase::communication,
                      Phase::other, Phase::recompute})
    EXPECT_EQ(phase_from_name(phase_name(phase)), phase) << phase_name(phase);
  EXPECT_EQ(phase_names(), (std::vector<std::string>{"forward", "backward", "weight_grad", "optimizer", "communication",
                                                     "other", "recompute"}));
  EXPECT_EQ(phase_from_name("fwd"), std::nullopt);
}

TEST(TaskGraph, DtypeNamesRoundTrip) {
  for (Dtype dtype : {Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16, Dtype::fp8, Dtype::mxfp8})
    EXPECT_EQ(dtype_from_name(dtype_name(dtype)), dtype) << dtype_name(dtype);
  EXPECT_EQ(dtype_names(), (std::vector<std::string>{"fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8"}));
  EXPECT_EQ(dtype_from_name("FP16"), std::nullopt);  // names are case-sensitive
}

TEST(TaskGraph, CollectiveKindNamesRoundTrip) {
  for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                              CollectiveKind::broadcast, CollectiveKind::all_to_all})
    EXPECT_EQ(collective_kind_from_name(collective_kind_name(kind)), kind) << collective_kind_name(kind);
  EXPECT_EQ(collective_kind_names().size(), 5u);
  EXPECT_EQ(collective_kind_from_name("allreduce"), std::nullopt);
}

}  // namespace
}  // namespace dnnsim
