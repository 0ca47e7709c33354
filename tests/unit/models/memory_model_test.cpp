#include "models/cost/memory_model.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dnnsim {
namespace {

constexpr double kGB = 1e9;  // the ZeRO paper's figures are decimal gigabytes
constexpr double kMB = 1e6;
constexpr double kGiB = 1073741824.0;

// One layer holding `parameters` parameters (parameter_bytes counts 4 bytes each).
Layer parameter_layer(double parameters) {
  Layer layer;
  layer.name = "all";
  layer.parameter_bytes = Bytes(4.0 * parameters);
  return layer;
}

Layer activation_layer(double activation_bytes) {
  Layer layer;
  layer.name = "block";
  layer.activation_bytes = Bytes(activation_bytes);
  return layer;
}

Bytes model_states(const MemoryBreakdown& m) { return m.weights + m.gradients + m.optimizer_state; }

// Rajbhandari et al., ZeRO (SC'20), Figure 1: Ψ = 7.5B parameters, N_d = 64, mixed-precision Adam
// (K = 12). Derived by hand:
//   baseline   (2 + 2 + K)·Ψ           = 16 · 7.5e9               = 120 GB
//   ZeRO-1     2Ψ + 2Ψ + K·Ψ/N_d       = 30e9 + 90e9/64           = 31.40625 GB  (paper 31.4 GB)
//   ZeRO-2     2Ψ + (2 + K)·Ψ/N_d      = 15e9 + 105e9/64          = 16.640625 GB (paper 16.6 GB)
//   ZeRO-3     (2 + 2 + K)·Ψ/N_d       = 120e9/64                 = 1.875 GB     (paper 1.9 GB)
// The paper prints one decimal: 1.875 is 1.3 % from 1.9, so ZeRO-3 is held to the paper's rounding
// (±0.05 GB) and all four to the exact derivation.
TEST(MemoryModel, ZeroPaperFigure1) {
  const std::vector<Layer> model{parameter_layer(7.5e9)};
  TrainingMemoryConfig config;  // mixed precision, Adam by default
  config.data_parallel = 64;

  struct Row {
    ZeroStage stage;
    double exact_gb;
    double paper_gb;
  };
  for (const Row& row : {Row{ZeroStage::none, 120.0, 120.0}, Row{ZeroStage::optimizer, 31.40625, 31.4},
                         Row{ZeroStage::gradients, 16.640625, 16.6}, Row{ZeroStage::parameters, 1.875, 1.9}}) {
    config.zero = row.stage;
    const MemoryBreakdown memory = training_memory(model, config);
    const double gb = model_states(memory).value() / kGB;
    EXPECT_NEAR(gb, row.exact_gb, 1e-9) << "ZeRO stage " << static_cast<int>(row.stage);
    EXPECT_NEAR(gb, row.paper_gb, 0.05) << "ZeRO stage " << static_cast<int>(row.stage);
    if (row.stage != ZeroStage::parameters) {
      EXPECT_NEAR(gb / row.paper_gb, 1.0, 0.01) << "ZeRO stage " << static_cast<int>(row.stage);
    }
    EXPECT_EQ(memory.activations.value(), 0.0);  // no activation bytes in this model
  }
}

// ZeRO-1 partitions only the optimizer state: weights 2Ψ = 15 GB, gradients 2Ψ = 15 GB,
// optimizer 12Ψ/64 = 1.40625 GB.
TEST(MemoryModel, ZeroStageOnePartitionsOnlyOptimizerState) {
  TrainingMemoryConfig config;
  config.data_parallel = 64;
  config.zero = ZeroStage::optimizer;
  const MemoryBreakdown memory = training_memory({parameter_layer(7.5e9)}, config);
  EXPECT_DOUBLE_EQ(memory.weights.value(), 15e9);
  EXPECT_DOUBLE_EQ(memory.gradients.value(), 15e9);
  EXPECT_DOUBLE_EQ(memory.optimizer_state.value(), 1.40625e9);
}

// fp32 Adam: 4 (weights) + 4 (gradients) + 8 (m, v) = 16 bytes per parameter, the same total as
// mixed precision (2 + 2 + 12) but split differently. 1M parameters → 4 MB + 4 MB + 8 MB.
TEST(MemoryModel, Fp32AdamIsSixteenBytesPerParameter) {
  TrainingMemoryConfig config;
  config.precision = Precision::fp32;
  const MemoryBreakdown memory = training_memory({parameter_layer(1e6)}, config);
  EXPECT_DOUBLE_EQ(memory.weights.value(), 4e6);
  EXPECT_DOUBLE_EQ(memory.gradients.value(), 4e6);
  EXPECT_DOUBLE_EQ(memory.optimizer_state.value(), 8e6);
  EXPECT_DOUBLE_EQ(memory.total().value(), 16e6);
}

// The bytes-per-parameter table of the header and docs/memory.md, entry by entry.
TEST(MemoryModel, BytesPerParameterTable) {
  struct Row {
    Precision precision;
    Optimizer optimizer;
    double w, g, k;
  };
  for (const Row& row :
       {Row{Precision::fp32, Optimizer::sgd, 4, 4, 0}, Row{Precision::fp32, Optimizer::sgd_momentum, 4, 4, 4},
        Row{Precision::fp32, Optimizer::adam, 4, 4, 8}, Row{Precision::mixed, Optimizer::sgd, 2, 2, 4},
        Row{Precision::mixed, Optimizer::sgd_momentum, 2, 2, 8}, Row{Precision::mixed, Optimizer::adam, 2, 2, 12}}) {
    const BytesPerParameter b = bytes_per_parameter(row.precision, row.optimizer);
    EXPECT_EQ(b.weights, row.w);
    EXPECT_EQ(b.gradients, row.g);
    EXPECT_EQ(b.optimizer_state, row.k);
  }
}

// Parameters summed over several layers: 3 layers of 1M, 2M, 5M parameters = 8M; mixed Adam
// 16 B/param → 128 MB.
TEST(MemoryModel, ParametersAreSummedOverLayers) {
  const MemoryBreakdown memory =
      training_memory({parameter_layer(1e6), parameter_layer(2e6), parameter_layer(5e6)}, TrainingMemoryConfig{});
  EXPECT_DOUBLE_EQ(model_states(memory).value(), 128e6);
}

// A uniform 24-layer model whose blocks each stash A = 16 MB per sample for the backward pass (the
// block of docs/scenarios.md) but take an input of only A_in = 2 MB per sample (a transformer
// block keeps ~8× its input in this example). Micro-batch b = 4, one micro-batch in flight:
//   without recomputation  24 · A · b             = 24 · 16 MB · 4 = 1536 MB
//   with recomputation     24 · A_in · b + A · b  = 24 · 2 MB · 4 + 16 MB · 4 = 192 + 64 = 256 MB
TEST(MemoryModel, RecomputationKeepsLayerInputsPlusOneLayer) {
  const std::vector<Layer> model(24, activation_layer(16 * kMB));
  TrainingMemoryConfig config;
  config.micro_batch = 4;
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 1536 * kMB);

  config.recompute = true;
  config.layer_input_bytes.assign(24, Bytes(2 * kMB));
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 256 * kMB);
}

// A layer given all its activations as its input keeps them and is not re-run (Megatron's LM head
// and loss): the same 24 blocks as above plus a loss keeping 40 MB per sample, given 40 MB. b = 4,
// one micro-batch in flight: 24 · 2 MB · 4 + 40 MB · 4 + the largest re-run layer, a block's
// 16 MB · 4 (not the loss's 40 MB) = 192 + 160 + 64 = 416 MB.
TEST(MemoryModel, LayersKeepingAllTheirActivationsAreNotRecomputed) {
  std::vector<Layer> model(24, activation_layer(16 * kMB));
  model.push_back(activation_layer(40 * kMB));
  TrainingMemoryConfig config;
  config.micro_batch = 4;
  config.recompute = true;
  config.layer_input_bytes.assign(24, Bytes(2 * kMB));
  config.layer_input_bytes.push_back(Bytes(40 * kMB));
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 416 * kMB);
}

// Without layer_input_bytes a layer's input is its predecessor's activation_bytes and the first
// layer's input (the stage input) is not counted. Chain A = {2, 16, 8} MB per sample, b = 1,
// 3 micro-batches in flight:
//   without recomputation  (2 + 16 + 8) · 3           = 78 MB
//   with recomputation     (0 + 2 + 16) · 3 + max A   = 54 + 16 = 70 MB
TEST(MemoryModel, RecomputationChainRuleUsesPredecessorOutputs) {
  const std::vector<Layer> model{activation_layer(2 * kMB), activation_layer(16 * kMB), activation_layer(8 * kMB)};
  TrainingMemoryConfig config;
  config.micro_batches_in_flight = 3;
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 78 * kMB);
  config.recompute = true;
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 70 * kMB);
}

// A layer that keeps more than it outputs (a profile's saved_bytes, Layer::keep_activations): two
// layers outputting 4 MB and keeping 68 MB per sample, micro-batch 2, 3 micro-batches in flight.
// Without recomputation every stashed sample keeps all 68 MB: 2 · 3 · (68 + 68) = 816 MB. With it,
// the checkpoint of layer 1 is layer 0's output (4 MB), not what layer 0 keeps, plus one layer's
// full 68 MB per sample of the micro-batch being recomputed: 2 · 3 · 4 + 2 · 68 = 160 MB.
TEST(MemoryModel, SavedActivationsAreKeptAndOutputsAreCheckpointed) {
  std::vector<Layer> model{activation_layer(4 * kMB), activation_layer(4 * kMB)};
  for (Layer& layer : model) layer.keep_activations(Bytes(68 * kMB), ActivationSource::saved_bytes);
  TrainingMemoryConfig config;
  config.micro_batch = 2;
  config.micro_batches_in_flight = 3;
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 816 * kMB);
  config.recompute = true;
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 160 * kMB);
}

// Activations scale with the stashed micro-batches: stage 0 of a 4-stage 1F1B pipeline keeps p = 4
// micro-batches, 4× the activations of one (2 layers × 10 MB × b = 2 → 40 MB per micro-batch,
// 160 MB for 4). Model states do not change. With recomputation only the checkpoints scale:
// (0 + 10) · 2 · 4 + 10 · 2 = 100 MB.
TEST(MemoryModel, MicroBatchesInFlightScaleActivations) {
  const std::vector<Layer> model{activation_layer(10 * kMB), activation_layer(10 * kMB)};
  TrainingMemoryConfig config;
  config.micro_batch = 2;
  const MemoryBreakdown one = training_memory(model, config);
  config.micro_batches_in_flight = 4;
  const MemoryBreakdown four = training_memory(model, config);
  EXPECT_DOUBLE_EQ(one.activations.value(), 40 * kMB);
  EXPECT_DOUBLE_EQ(four.activations.value(), 160 * kMB);
  EXPECT_DOUBLE_EQ(model_states(four).value(), model_states(one).value());

  config.recompute = true;
  EXPECT_DOUBLE_EQ(training_memory(model, config).activations.value(), 100 * kMB);
}

// Workspace and framework overhead are added as given: 1M parameters mixed Adam (16 MB) +
// 5 MB activations + 32 MB workspace + 1 GB framework.
TEST(MemoryModel, WorkspaceAndFrameworkAreAdded) {
  Layer layer = parameter_layer(1e6);
  layer.activation_bytes = Bytes(5 * kMB);
  TrainingMemoryConfig config;
  config.workspace = Bytes(32 * kMB);
  config.framework_overhead = Bytes(1 * kGB);
  const MemoryBreakdown memory = training_memory({layer}, config);
  EXPECT_DOUBLE_EQ(memory.workspace.value(), 32 * kMB);
  EXPECT_DOUBLE_EQ(memory.framework.value(), 1 * kGB);
  EXPECT_DOUBLE_EQ(memory.total().value(), 16 * kMB + 5 * kMB + 32 * kMB + 1 * kGB);
}

TEST(MemoryModel, OutOfMemoryIsAMessage) {
  MemoryBreakdown need;
  need.weights = Bytes(41.2 * kGiB);
  const MemoryFit fit = check_fit("gpu3", need, Bytes(40 * kGiB));
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.message, "out of memory on gpu3: needs 41.2 GiB, has 40 GiB");
}

TEST(MemoryModel, FitsWhenEqual) {
  MemoryBreakdown need;
  need.weights = Bytes(30 * kGiB);
  need.activations = Bytes(10 * kGiB);
  const MemoryFit fit = check_fit("gpu3", need, Bytes(40 * kGiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.message, "");
}

// One byte over 40 GiB prints "40 GiB" twice at four digits; the exact counts show the excess.
TEST(MemoryModel, TinyExcessShowsExactBytes) {
  MemoryBreakdown need;
  need.activations = Bytes(40 * kGiB + 1);
  const MemoryFit fit = check_fit("node1/gpu0", need, Bytes(40 * kGiB));
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.message, "out of memory on node1/gpu0: needs 40 GiB (42949672961 B), has 40 GiB (42949672960 B)");
}

TEST(MemoryModel, FormatsOneLinePerComponent) {
  MemoryBreakdown memory;
  memory.weights = Bytes(2 * kGiB);
  memory.gradients = Bytes(2 * kGiB);
  memory.optimizer_state = Bytes(12 * kGiB);
  memory.activations = Bytes(512 * 1048576.0);
  memory.framework = Bytes(1 * kGiB);
  EXPECT_EQ(format_memory_breakdown(memory),
            "weights          2 GiB\n"
            "gradients        2 GiB\n"
            "optimizer state  12 GiB\n"
            "activations      512 MiB\n"
            "workspace        0 B\n"
            "framework        1 GiB\n"
            "total            17.5 GiB\n");
}

}  // namespace
}  // namespace dnnsim
