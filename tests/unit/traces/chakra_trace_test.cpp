// Chakra ET import and export (traces/chakra) without an engine: the mapping of node types onto the
// TaskGraph, located errors, and the lossless round trip.
#include "traces/chakra/chakra_trace.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/program/task_graph_json.hpp"
#include "tests/support/chakra_writer.hpp"
#include "tests/support/diagnostics.hpp"

namespace dnnsim {
namespace {

using testing::EtFile;
namespace pb = testing::pb;

std::filesystem::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir =
      std::filesystem::temp_directory_path() / ("dnnsim-chakra-" + std::to_string(::getpid()) + "-" + info->name());
  std::filesystem::create_directories(dir);
  return dir;
}

std::vector<std::string> devices(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("node0/gpu" + std::to_string(i));
  return names;
}

std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ChakraImport, TextConverterDataParallelMapsNodesOntoTasks) {
  // DATA, 2 layers, 4 ranks: per rank 2 forwards, 2 weight-gradient computes, 1 input-gradient
  // compute and 2 all-reduces (one per layer). The all-reduces are shared by the 4 ranks: 5 × 4
  // computes + 2 collectives. Recorded runtimes are taken as measured on the rank's GPU.
  const auto dir = temp_dir();
  testing::write_text_workload(
      "DATA\n2\n"
      "l0 -1 100 NONE 0 50 NONE 0 70 ALLREDUCE 4000 10\n"
      "l1 -1 200 NONE 0 60 NONE 0 80 ALLREDUCE 8000 10\n",
      (dir / "dp").string(), 4);
  ChakraImportOptions options;
  options.rank_gpus = std::vector<std::string>(4, "A100-40GB-SXM");
  const ChakraImport imported = import_chakra(expand_rank_pattern((dir / "dp.%d.et").string(), 4), devices(4), options);
  const TaskGraph& graph = imported.graph;
  EXPECT_TRUE(imported.warnings.empty());
  std::size_t computes = 0, collectives = 0;
  for (const Task& task : graph.tasks()) {
    if (const auto* c = std::get_if<Compute>(&task.op)) {
      ++computes;
      ASSERT_TRUE(c->measured_time.has_value());
      EXPECT_EQ(c->measured_on, "A100-40GB-SXM");
    }
    if (const auto* c = std::get_if<Collective>(&task.op)) {
      ++collectives;
      EXPECT_EQ(c->group.size(), 4u);
      EXPECT_EQ(c->kind, CollectiveKind::all_reduce);
      // Layer 1's weight gradients are reduced first (backward order): 8000 bytes, then 4000.
      EXPECT_DOUBLE_EQ(c->size.value(), collectives == 1 ? 8000 : 4000);
      EXPECT_EQ(task.deps.size(), 4u);  // each rank's weight-gradient compute
    }
  }
  EXPECT_EQ(computes, 20u);
  EXPECT_EQ(collectives, 2u);
  EXPECT_TRUE(graph.validate().empty());
}

TEST(ChakraImport, SendAndReceiveBecomeOneTransfer) {
  const auto dir = temp_dir();
  EtFile r0, r1;
  auto& a = r0.add("A", pb::COMP_NODE);
  EtFile::attr(a, "num_ops", 1'000'000);
  EtFile::attr(a, "tensor_size", 4096);
  auto& send = r0.add("send", pb::COMM_SEND_NODE, {0});
  EtFile::attr(send, "comm_dst", 1);
  EtFile::attr(send, "comm_size", 1000);
  auto& recv = r1.add("recv", pb::COMM_RECV_NODE);
  EtFile::attr(recv, "comm_src", 0);
  EtFile::attr(recv, "comm_size", 1000);
  r1.add("B", pb::COMP_NODE, {0});
  r0.save((dir / "t.0.et").string());
  r1.save((dir / "t.1.et").string());
  const TaskGraph graph = import_chakra(expand_rank_pattern((dir / "t.%d.et").string(), 2), devices(2), {}).graph;
  ASSERT_EQ(graph.tasks().size(), 3u);
  const auto& compute = std::get<Compute>(graph.task(0).op);  // no runtime: the roofline of its attributes
  EXPECT_DOUBLE_EQ(compute.flops.value(), 1e6);
  EXPECT_DOUBLE_EQ(compute.bytes_accessed.value(), 4096);
  EXPECT_FALSE(compute.measured_time.has_value());
  const auto& transfer = std::get<Transfer>(graph.task(1).op);
  EXPECT_EQ(transfer.src, 0u);
  EXPECT_EQ(transfer.dst, 1u);
  EXPECT_THAT(graph.task(1).deps, ::testing::ElementsAre(0u));
  EXPECT_THAT(graph.task(2).deps, ::testing::ElementsAre(1u));  // B waits for the receive
}

TEST(ChakraImport, UnknownAttributesWarnOncePerName) {
  const auto dir = temp_dir();
  EtFile r0;
  for (int i = 0; i < 3; ++i) EtFile::attr(r0.add("op", pb::COMP_NODE), "op_schema", 1);
  r0.save((dir / "w.0.et").string());
  const auto imported = import_chakra({(dir / "w.0.et").string()}, devices(1), {});
  ASSERT_EQ(imported.warnings.size(), 1u);
  EXPECT_THAT(imported.warnings[0], ::testing::HasSubstr("w.0.et: message 1: attribute 'op_schema'"));
}

TEST(ChakraImport, TruncatedAndMalformedFilesAreLocatedByMessage) {
  const auto dir = temp_dir();
  EtFile r0;
  r0.add("a", pb::COMP_NODE);
  r0.add("b", pb::COMP_NODE, {0});
  const std::string path = (dir / "cut.0.et").string();
  r0.save(path);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 2);  // cut into message 2
  EXPECT_THAT(error_text([&] { (void)import_chakra({path}, devices(1), {}); }),
              ::testing::HasSubstr("cut.0.et: message 2: error: truncated"));
  // A dependency on a node that is not in the file, and a collective type dnnsim does not model.
  EtFile r1;
  r1.add("a", pb::COMP_NODE, {42});
  auto& gather = r1.add("g", pb::COMM_COLL_NODE);
  EtFile::attr(gather, "comm_type", pb::GATHER);
  EtFile::attr(gather, "comm_size", 8);
  r1.save((dir / "bad.0.et").string());
  const std::string text = error_text([&] { (void)import_chakra({(dir / "bad.0.et").string()}, devices(1), {}); });
  EXPECT_THAT(text, ::testing::HasSubstr("bad.0.et: message 2: error: collective type 3 (GATHER) is not modelled"));
  EXPECT_THAT(error_text([&] { (void)import_chakra({(dir / "missing.et").string()}, devices(1), {}); }),
              ::testing::HasSubstr("missing.et: error: cannot open the file"));
}

TEST(ChakraImport, CollectivesThatDoNotMatchAcrossRanksAreErrors) {
  const auto dir = temp_dir();
  EtFile r0, r1;
  auto& a = r0.add("ar", pb::COMM_COLL_NODE);
  EtFile::attr(a, "comm_type", pb::ALL_REDUCE);
  EtFile::attr(a, "comm_size", 100);
  auto& b = r1.add("ar", pb::COMM_COLL_NODE);
  EtFile::attr(b, "comm_type", pb::ALL_GATHER);
  EtFile::attr(b, "comm_size", 100);
  r0.save((dir / "m.0.et").string());
  r1.save((dir / "m.1.et").string());
  EXPECT_THAT(
      error_text([&] { (void)import_chakra(expand_rank_pattern((dir / "m.%d.et").string(), 2), devices(2), {}); }),
      ::testing::HasSubstr("m.1.et: message 1: error: collective #0 of group '' is all_gather"));
}

TEST(ChakraExport, ImportOfExportIsTheSameGraph) {
  // Every field dnnsim models: measured and roofline computes with dtype and kernel, memory
  // effects, iterations, a transfer with dependencies on both sides, a sub-group collective whose
  // member order is not sorted, a broadcast root, named streams.
  TaskGraph graph;
  for (const auto& d : devices(4)) graph.add_device(d);
  const StreamId compute = graph.add_stream("compute");
  const StreamId comm = graph.add_stream("comm");
  const StreamId p2p = graph.add_stream("send-next");
  const auto add = [&](Task task, StreamId stream, Phase phase, std::vector<TaskId> deps, std::string label) {
    task.stream = stream;
    task.phase = phase;
    task.deps = std::move(deps);
    task.label = std::move(label);
    return graph.add(std::move(task));
  };
  Compute measured{.device = 0,
                   .flops = Flop(3e9),
                   .bytes_accessed = Bytes(1e6),
                   .dtype = Dtype::bf16,
                   .kernel = LayerKind::attention,
                   .measured_time = Seconds(1.25e-3),
                   .measured_on = "V100-16GB"};
  Task first{measured};
  first.alloc_bytes = Bytes(5e6);
  const TaskId t0 = add(first, compute, Phase::forward, {}, "fwd layer0");
  const TaskId t1 = add(Task{Compute{1, Flop(2.5e9), Bytes(7.5), Dtype::fp16, LayerKind::matmul}}, compute,
                        Phase::recompute, {}, "recompute layer1");
  const TaskId t2 = add(Task{Transfer{0, 1, Bytes(123456)}}, p2p, Phase::communication, {t0, t1}, "act 0→1");
  Task backward{Compute{1, Flop(5e9), Bytes(2e6), Dtype::fp16, LayerKind::matmul}};
  backward.free_bytes = Bytes(5e6);
  backward.iteration = 1;
  const TaskId t3 = add(backward, compute, Phase::backward, {t2}, "bwd layer1");
  Collective all_reduce{CollectiveKind::all_reduce, {3, 1, 2}, Bytes(4e6), "ring", 0};
  all_reduce.calls = 6;  // a step's per-block calls summed, each paying the calibrated latency
  add(Task{all_reduce}, comm, Phase::communication, {t3}, "all-reduce stage");
  add(Task{Collective{CollectiveKind::broadcast, {0, 1, 2, 3}, Bytes(1e3), "", 2}}, comm, Phase::communication, {t0},
      "broadcast");
  ASSERT_TRUE(graph.validate().empty());

  const auto dir = temp_dir();
  const ChakraExport exported = export_chakra(graph, dir.string());
  EXPECT_EQ(exported.dropped_dependencies, 0u);
  const auto& files = exported.files;
  ASSERT_EQ(files.size(), 4u);
  const ChakraImport back = import_chakra(files, devices(4), {});
  EXPECT_TRUE(back.warnings.empty());
  EXPECT_EQ(dump_task_graph(back.graph), dump_task_graph(graph));
}

}  // namespace
}  // namespace dnnsim
