#include "models/dnn/profile_graph.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "models/common/diagnostics.hpp"
#include "models/dnn/model_table.hpp"
#include "tests/support/dapple_profiles.hpp"
#include "tests/support/diagnostics.hpp"

namespace dnnsim {
namespace {

// The DAPPLE artifact's profiles, shipped with dnnsim (data/profiles/dapple/, with their licence).
using testing::dapple_profile;
using testing::kDappleProfiles;

std::vector<Diagnostic> diagnostics_of(std::string_view text, const std::string& file = "test-pbs-2.txt") {
  try {
    (void)parse_profile_graph(text, file);
  } catch (const InputError& error) {
    return error.diagnostics();
  }
  return {};
}

TEST(ProfileGraph, LoadsEveryDappleProfile) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDappleProfiles)) {
    if (entry.path().extension() != ".txt") continue;
    SCOPED_TRACE(entry.path().filename().string());
    ++files;
    // vgg16.txt has no pbs-N in its name: its ReLU after the first convolution holds 822,083,584 B =
    // 64 × 64 channels × 224² × 4 B, so it was profiled with 64 images.
    const bool named_batch = entry.path().filename().string().find("pbs-") != std::string::npos;
    if (!named_batch) {
      EXPECT_THROW((void)load_profile_graph(entry.path().string()), InputError);
    }
    bool chain = false;
    const LayerModel model = load_profile_graph(entry.path().string(), "V100-16GB", named_batch ? 0 : 64, &chain);
    EXPECT_FALSE(model.layers.empty());
    EXPECT_GE(model.measured_batch, 1);
    EXPECT_EQ(model.measured_on, "V100-16GB");
    for (const Layer& layer : model.layers) {
      ASSERT_TRUE(layer.forward_time && layer.backward_time);
      EXPECT_GE(layer.forward_time->value(), 0.0);
      EXPECT_GE(layer.backward_time->value(), 0.0);
      EXPECT_GE(layer.activation_bytes.value(), 0.0);
      EXPECT_GE(layer.parameter_bytes.value(), 0.0);
    }
  }
  EXPECT_GE(files, 13);
}

// Sums of vgg-19-pbs-32.txt, checked by hand (awk over the 26 node lines): forward 51.41 ms,
// backward 96.2 ms, parameters 548,047,022 B (137.0M fp32 parameters; the zoo's vgg19 has 143.7M:
// the profile's FC1 holds 392,015,625 B = 98.0M where 25088·4096 + 4096 is 102.8M).
TEST(ProfileGraph, Vgg19TotalsMatchTheFile) {
  bool chain = false;
  const LayerModel model = load_profile_graph(dapple_profile("vgg-19-pbs-32.txt"), "V100-16GB", 0, &chain);
  EXPECT_TRUE(chain);
  EXPECT_EQ(model.name, "vgg-19-pbs-32");
  EXPECT_EQ(model.measured_batch, 32);
  ASSERT_EQ(model.layers.size(), 26u);
  const ModelTotals totals = model_totals(model);
  EXPECT_TRUE(totals.measured);
  EXPECT_NEAR(totals.forward_time.value(), 51.41e-3, 1e-9);
  EXPECT_NEAR(totals.backward_time.value(), 96.2e-3, 1e-9);
  EXPECT_DOUBLE_EQ(totals.parameter_bytes.value(), 548'047'022);
  // Input: activation_size 19,000,000 B for 32 images → 593,750 B per image.
  EXPECT_EQ(model.layers[0].name, "Input");
  EXPECT_DOUBLE_EQ(model.layers[0].activation_bytes.value(), 593'750);
  EXPECT_EQ(model.layers[1].kind, LayerKind::convolution);
  EXPECT_EQ(model.layers[3].kind, LayerKind::pooling);
  EXPECT_EQ(model.layers[22].name, "FC1");
  EXPECT_EQ(model.layers[22].kind, LayerKind::matmul);
  EXPECT_NEAR(model.layers[1].forward_time->value(), 3.4e-3, 1e-12);
}

TEST(ProfileGraph, BranchingGraphsComeInTopologicalOrder) {
  bool chain = true;
  const LayerModel model = load_profile_graph(dapple_profile("bert-48-pbs-2.txt"), "V100-16GB", 0, &chain);
  EXPECT_FALSE(chain);  // node1 (input_ids) feeds both attention_mask and embeddings
  EXPECT_EQ(model.measured_batch, 2);
  EXPECT_EQ(model.layers[0].name, "input_ids");
  EXPECT_EQ(model.layers[2].kind, LayerKind::embedding);
  // 637.5M fp32 parameters, the 640M of the DAPPLE paper.
  EXPECT_NEAR(model_totals(model).parameters / 640e6, 1.0, 0.01);
}

TEST(ProfileGraph, OrderIsTopologicalAndStable) {
  // node3 is defined before node2 but consumes it; node4 is independent and comes in file order
  // once ready. Blank lines, CRLF, any indentation, lists of activation sizes are accepted.
  const std::string text =
      "node1 -- Input -- forward_compute_time=1, backward_compute_time=0, activation_size=8, parameter_size=0\r\n"
      "node3 -- Linear(4, 4) -- forward_compute_time=3, backward_compute_time=6, activation_size=[4; 6], "
      "parameter_size=80\n"
      "\n"
      "node2 -- ReLU -- forward_compute_time=2.5, backward_compute_time=5, activation_size=8.0, parameter_size=0\n"
      "node4 -- BatchNorm2d(4) -- forward_compute_time=0, backward_compute_time=0, activation_size=0, "
      "parameter_size=32\n"
      "\tnode1 -- node2\n"
      "  node2 -- node3\n"
      "node2 -- node3\n";  // a duplicate edge is merged
  bool chain = true;
  const LayerModel model = parse_profile_graph(text, "dir/x-pbs-2.txt", "A100-40GB-SXM", 0, &chain);
  ASSERT_EQ(model.layers.size(), 4u);
  EXPECT_EQ(model.layers[0].name, "Input");
  EXPECT_EQ(model.layers[1].name, "ReLU");
  EXPECT_EQ(model.layers[2].name, "Linear(4, 4)");
  EXPECT_EQ(model.layers[3].name, "BatchNorm2d(4)");
  EXPECT_FALSE(chain);  // node4 hangs apart
  EXPECT_EQ(model.layers[1].kind, LayerKind::elementwise);
  EXPECT_EQ(model.layers[2].kind, LayerKind::matmul);
  EXPECT_EQ(model.layers[3].kind, LayerKind::normalization);
  EXPECT_DOUBLE_EQ(model.layers[2].activation_bytes.value(), 5.0);  // (4 + 6) / 2 samples
  EXPECT_NEAR(model.layers[1].forward_time->value(), 2.5e-3, 1e-15);
  EXPECT_EQ(model.measured_on, "A100-40GB-SXM");

  const LayerModel explicit_batch = parse_profile_graph(text, "no-batch.txt", "V100-16GB", 4);
  EXPECT_EQ(explicit_batch.measured_batch, 4);
}

TEST(ProfileGraph, ACutCarriesEveryTensorCrossingIt) {
  // a → b → c → d with a skip a → c, pbs 1: outputs a 10, b 20, c 30, d 40 bytes. The cut after a
  // carries a (read by b and c); after b, b's output and a's (still awaited by c): 30; after c, c's 30.
  const std::string text =
      "a -- Input -- forward_compute_time=1, backward_compute_time=0, activation_size=10, parameter_size=0\n"
      "b -- Linear -- forward_compute_time=1, backward_compute_time=2, activation_size=20, parameter_size=8\n"
      "c -- Add -- forward_compute_time=1, backward_compute_time=1, activation_size=30, parameter_size=0\n"
      "d -- Linear -- forward_compute_time=1, backward_compute_time=2, activation_size=40, parameter_size=8\n"
      "a -- b\nb -- c\na -- c\nc -- d\n";
  const LayerModel model = parse_profile_graph(text, "skip-pbs-1.txt");
  ASSERT_EQ(model.layers.size(), 4u);
  EXPECT_DOUBLE_EQ(model.layers[0].bytes_across_cut().value(), 10);
  EXPECT_DOUBLE_EQ(model.layers[1].bytes_across_cut().value(), 30);
  EXPECT_DOUBLE_EQ(model.layers[2].bytes_across_cut().value(), 30);
  EXPECT_DOUBLE_EQ(model.layers[3].bytes_across_cut().value(), 0);  // nothing reads d
  // GNMT-16 (DAPPLE's profile, pbs 64): the cut after node44 (position 43) is crossed by 11 edges
  // carrying 3 distinct tensors, 455,600 bytes per sample where node44's own output is less; after
  // node49 (position 48), 14 edges, 3 tensors, 151,552 bytes. Derived by a separate script over the
  // file's edges (topological order by the same stable rule).
  const LayerModel gnmt = load_profile_graph(dapple_profile("gnmt-16-pbs-64.txt"));
  EXPECT_DOUBLE_EQ(gnmt.layers[43].bytes_across_cut().value(), 455600);
  EXPECT_LT(gnmt.layers[43].activation_bytes.value(), 455600);
  EXPECT_DOUBLE_EQ(gnmt.layers[48].bytes_across_cut().value(), 151552);
  // A chain keeps its outputs as the cuts.
  const LayerModel vgg = load_profile_graph(dapple_profile("vgg-19-pbs-32.txt"));
  for (const Layer& layer : vgg.layers) EXPECT_FALSE(layer.cut_bytes.has_value());
}

TEST(ProfileGraph, ReportsEveryMalformedLineWithItsColumn) {
  const std::string text =
      "node1 -- Input -- forward_compute_time=1, backward_compute_time=0, activation_size=8, parameter_size=0\n"
      "node2 -- Conv -- forward_compute_time=abc, backward_compute_time=1, activation_size=4, parameter_size=0\n"
      "node3 -- X -- forward_compute_time=1, backward_compute_time=1, activation_size=4, paramter_size=0\n"
      "garbage\n"
      "\tnode1 -- node9\n"
      "node1 -- Again -- forward_compute_time=1, backward_compute_time=0, activation_size=-8, parameter_size=0\n";
  const std::vector<Diagnostic> d = diagnostics_of(text);
  ASSERT_EQ(d.size(), 7u);
  const auto at = [&](std::size_t i, int line, int column, const std::string& message) {
    SCOPED_TRACE(i);
    EXPECT_EQ(d[i].location.file, "test-pbs-2.txt");
    EXPECT_EQ(d[i].location.line, line);
    EXPECT_EQ(d[i].location.column, column);
    EXPECT_THAT(d[i].message, ::testing::HasSubstr(message));
  };
  // In file order (line, then column), as every dnnsim reader reports.
  at(0, 2, 39, "forward_compute_time must be a non-negative number, got 'abc'");
  at(1, 3, 15, "missing key 'parameter_size'");
  at(2, 3, 83, "unknown key 'paramter_size'; did you mean 'parameter_size'?");
  at(3, 4, 1, "expected 'ID -- DESCRIPTION -- key=value");
  at(4, 5, 11, "edge to unknown node 'node9'");
  at(5, 6, 1, "duplicate node 'node1' (first defined on line 1)");
  at(6, 6, 84, "activation_size must be a non-negative number");
}

// A node line whose "-- " parts were broken ('padding_idx=x' typed over ") -- forward_compute_time=…",
// as a value mutation of gnmt-16's Embedding line did) reads as a bad edge: that line's error only, not
// also "unknown node 'node2'" at every edge naming it (was three errors).
TEST(ProfileGraph, ABrokenNodeLineIsNotAlsoEveryEdgeToIt) {
  const std::string text =
      "node1 -- Input -- forward_compute_time=1, backward_compute_time=0, activation_size=8, parameter_size=0\n"
      "node2 -- Embedding(36560, 1024, padding_idx=x, backward_compute_time=1, activation_size=4, parameter_size=0\n"
      "node3 -- Out -- forward_compute_time=1, backward_compute_time=1, activation_size=4, parameter_size=0\n"
      "node1 -- node2\n"
      "node2 -- node3\n";
  testing::expect_errors(diagnostics_of(text), {{2, 10, "expected a node id after ' -- ' (edges are 'ID -- ID')"}});
}

// saved_bytes (dnnsim's optional key) replaces the output as what the layer keeps, per sample
// (÷ pbs), while the output alone still crosses a cut after the layer.
TEST(ProfileGraph, SavedBytesAreWhatALayerKeepsAndTheOutputStillCrosses) {
  const std::string nodes =
      "node1 -- Input -- forward_compute_time=1, backward_compute_time=0, activation_size=8, parameter_size=0\n"
      "node2 -- Block -- forward_compute_time=2, backward_compute_time=4, activation_size=8, parameter_size=16, "
      "saved_bytes=136\n"
      "node3 -- Head -- forward_compute_time=1, backward_compute_time=2, activation_size=4, parameter_size=0\n"
      "\tnode1 -- node2\n\tnode2 -- node3\n";
  bool chain = false;
  const LayerModel model = parse_profile_graph(nodes, "saved-pbs-2.txt", "V100-16GB", 0, &chain);
  ASSERT_TRUE(chain);
  ASSERT_EQ(model.layers.size(), 3u);
  // Block: keeps 136 / 2 = 68 B per sample; its output, 8 / 2 = 4 B, is what a cut after it carries.
  EXPECT_EQ(model.layers[1].activation_bytes.value(), 68.0);
  EXPECT_EQ(model.layers[1].bytes_across_cut().value(), 4.0);
  EXPECT_EQ(model.layers[1].activation_source, ActivationSource::saved_bytes);
  // The others keep their output (8 / 2 and 4 / 2), the chain's cut being that output.
  EXPECT_EQ(model.layers[0].activation_bytes.value(), 4.0);
  EXPECT_FALSE(model.layers[0].cut_bytes.has_value());
  EXPECT_EQ(model.layers[2].activation_source, ActivationSource::profile_output);
  EXPECT_EQ(describe_activation_sources(model),
            "profile outputs only (activation_size; tensors kept inside a layer not counted): 2 layers; "
            "profile saved_bytes: 1 layer");

  // With a skip edge node1 → node3, the cut after Block carries both outputs, (8 + 8) / 2 = 8 B per
  // sample, whatever Block keeps.
  const LayerModel skip = parse_profile_graph(nodes + "\tnode1 -- node3\n", "saved-pbs-2.txt");
  EXPECT_EQ(skip.layers[1].activation_bytes.value(), 68.0);
  EXPECT_EQ(skip.layers[1].bytes_across_cut().value(), 8.0);
}

TEST(ProfileGraph, BadSavedBytesAreLocatedErrors) {
  const std::string text =
      "node1 -- Input -- forward_compute_time=1, backward_compute_time=0, activation_size=8, parameter_size=0\n"
      "node2 -- Block -- forward_compute_time=2, backward_compute_time=4, activation_size=8, parameter_size=16, "
      "saved_bytes=-136\n"
      "node3 -- Head -- forward_compute_time=1, backward_compute_time=2, activation_size=4, parameter_size=0, "
      "saved_bytes=12, saved_bytes=12\n"
      "node4 -- Tail -- forward_compute_time=1, backward_compute_time=2, activation_size=4, parameter_size=0, "
      "saved_bytes=lots\n";
  testing::expect_errors(diagnostics_of(text), {{2, 118, "saved_bytes must be a non-negative number, got '-136'"},
                                                {3, 120, "duplicate key 'saved_bytes'"},
                                                {4, 116, "saved_bytes must be a non-negative number, got 'lots'"}});
}

TEST(ProfileGraph, ValuesBeyondAnExabyteAreLocatedErrors) {
  // Two outputs of 9e17 bytes each sum past the 1e18 bound: the list is reported at its column.
  const std::string text =
      "node1 -- Input -- forward_compute_time=1, backward_compute_time=0, activation_size=[9e17; 9e17], "
      "parameter_size=0\n";
  const std::vector<Diagnostic> d = diagnostics_of(text);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].location.column, 84);
  EXPECT_THAT(d[0].message, ::testing::HasSubstr("activation_size must be at most 1e18"));
}

TEST(ProfileGraph, ReportsACycleAtItsClosingEdge) {
  const std::string text =
      "node1 -- A -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=0\n"
      "node2 -- B -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=0\n"
      "node3 -- C -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=0\n"
      "\tnode1 -- node2\n"
      "\tnode2 -- node3\n"
      "\tnode3 -- node2\n";
  testing::expect_errors(diagnostics_of(text), {{6, 2, "cycle: node2 -- node3 -- node2"}});
}

TEST(ProfileGraph, MissingBatchFileAndNodesAreErrors) {
  const std::string node =
      "node1 -- A -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=0\n";
  EXPECT_THAT(diagnostics_of(node, "profile.txt").at(0).message, ::testing::HasSubstr("pbs-N"));
  EXPECT_THAT(diagnostics_of("\n\n").at(0).message, ::testing::HasSubstr("no node line"));
  EXPECT_THROW((void)load_profile_graph("/nonexistent/x-pbs-1.txt"), InputError);
}

}  // namespace
}  // namespace dnnsim
