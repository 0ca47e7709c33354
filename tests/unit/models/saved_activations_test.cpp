#include "models/dnn/saved_activations.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "models/common/diagnostics.hpp"
#include "models/dnn/profile_graph.hpp"
#include "models/dnn/zoo.hpp"
#include "tests/support/dapple_profiles.hpp"

namespace dnnsim {
namespace {

using testing::dapple_profile;

LayerModel zoo(const std::string& name, int seq = 0) {
  ModelOptions options;
  options.seq = seq;
  return builtin_models().at(name).value(options);
}

std::string declare_error(LayerModel profile, const LayerModel& model) {
  try {
    (void)declare_zoo_blocks(profile, model);
  } catch (const InputError& error) {
    return error.diagnostics().at(0).message;
  }
  return "";
}

// BERT-48's block (s = 512, h = 1024, a = 16), one sequence: s·h = 524,288, a·s² = 4,194,304.
// fp16 (E = 2): 34·524,288 + 5·4,194,304 = 17,825,792 + 20,971,520 = 38,797,312 B, Korthikanti
// Table 2's first row, which tensor_parallel.hpp's layer_activation_bytes computes for t = 1.
// fp32 (E = 4): (16·4 + 2)·524,288 + (2·4 + 1)·4,194,304 = 34,603,008 + 37,748,736 = 72,351,744 B.
TEST(SavedActivations, KorthikantiPerBlockForBothElementSizes) {
  const TransformerShape bert48{48, 1024, 16, 512};
  EXPECT_DOUBLE_EQ(transformer_block_saved_bytes(bert48, 1, 2).value(), 38797312.0);
  EXPECT_DOUBLE_EQ(transformer_block_saved_bytes(bert48, 1, 2).value(),
                   layer_activation_bytes(bert48, 1, TensorParallelOptions{}).value());
  EXPECT_DOUBLE_EQ(transformer_block_saved_bytes(bert48, 1, 4).value(), 72351744.0);
  // Linear in the micro-batch: b = 2 keeps twice as much.
  EXPECT_DOUBLE_EQ(transformer_block_saved_bytes(bert48, 2, 4).value(), 2 * 72351744.0);
}

// The DAPPLE BERT-48 profile (pbs 2) declared as bert-48's blocks: its 48 layer_i hold 50,384,896 B
// of fp32 parameters, one bert-48 block's 12h² + 13h = 12,596,224 parameters × 4 B. Each records an
// output of 4,325,376 B for 2 sequences = 2,162,688 B per sequence = 4.125 B × s·h: fp32 (E = 4,
// within 10%), so each
// keeps 72,351,744 B per sequence (above), while a cut after it still carries what it did.
TEST(SavedActivations, Bert48ProfileLayersAreBert48Blocks) {
  LayerModel profile = load_profile_graph(dapple_profile("bert-48-pbs-2.txt"));
  const LayerModel before = profile;
  EXPECT_EQ(declare_zoo_blocks(profile, zoo("bert-48")), 48);
  int blocks = 0;
  for (std::size_t l = 0; l < profile.layers.size(); ++l) {
    const Layer& layer = profile.layers[l];
    SCOPED_TRACE(layer.name);
    EXPECT_EQ(layer.bytes_across_cut(), before.layers[l].bytes_across_cut());
    if (layer.name.starts_with("layer_")) {
      ++blocks;
      EXPECT_EQ(layer.activation_source, ActivationSource::zoo_block);
      EXPECT_DOUBLE_EQ(layer.activation_bytes.value(), 72351744.0);
    } else {
      EXPECT_EQ(layer.activation_source, ActivationSource::profile_output);
      EXPECT_EQ(layer.activation_bytes, before.layers[l].activation_bytes);
    }
  }
  EXPECT_EQ(blocks, 48);
  EXPECT_EQ(describe_activation_sources(profile),
            "profile outputs only (activation_size; tensors kept inside a layer not counted): 5 layers; "
            "zoo bert-48 blocks (Korthikanti et al. MLSys'23): 48 layers");
}

// A bare stack of 2 blocks, h = 64, a = 4, s = 8: a block has 12h² + 13h = 49,984 parameters,
// 199,936 fp32 bytes. Profile (pbs 1) outputs of 8 · 64 · 4 = 2,048 B: E = 4. Block A keeps
// (16·4 + 2)·512 + (2·4 + 1)·4·64 = 33,792 + 2,304 = 36,096 B; block B's own saved_bytes win.
TEST(SavedActivations, ALayersOwnSavedBytesWin) {
  TransformerConfig config;
  config.name = "tiny";
  config.layers = 2;
  config.hidden = 64;
  config.heads = 4;
  config.seq = 8;
  const LayerModel tiny = transformer_model(config, ModelOptions{});
  LayerModel profile = parse_profile_graph(
      "n1 -- A -- forward_compute_time=1, backward_compute_time=1, activation_size=2048, parameter_size=199936\n"
      "n2 -- B -- forward_compute_time=1, backward_compute_time=1, activation_size=2048, parameter_size=199936, "
      "saved_bytes=1000\n"
      "n1 -- n2\n",
      "tiny-pbs-1.txt");
  EXPECT_EQ(declare_zoo_blocks(profile, tiny), 1);
  EXPECT_DOUBLE_EQ(profile.layers[0].activation_bytes.value(), 36096.0);
  EXPECT_DOUBLE_EQ(profile.layers[1].activation_bytes.value(), 1000.0);
  EXPECT_EQ(profile.layers[1].activation_source, ActivationSource::saved_bytes);
}

TEST(SavedActivations, AProfileThatIsNotTheModelsBlocksIsAnError) {
  // BERT-24's profile has 24 blocks of BERT-large's size; bert-48 has 48.
  EXPECT_THAT(declare_error(load_profile_graph(dapple_profile("bert-24-pbs-6.txt")), zoo("bert-48")),
              ::testing::HasSubstr("24 layers of 'bert-24-pbs-6' have the parameters of one 'bert-48' block "
                                   "(50384896 B), which has 48 blocks"));
  // At s = 256 the recorded 2,162,688 B per sequence would be 8.25 B per element of s·h.
  EXPECT_THAT(declare_error(load_profile_graph(dapple_profile("bert-48-pbs-2.txt")), zoo("bert-48", 256)),
              ::testing::HasSubstr("8.25 B per element of bert-48's s·h = 256·1024, not 1, 2 or 4"));
  EXPECT_THAT(declare_error(load_profile_graph(dapple_profile("vgg-19-pbs-32.txt")), zoo("vgg19")),
              ::testing::HasSubstr("'vgg19' is not a transformer of the zoo"));
}

}  // namespace
}  // namespace dnnsim
