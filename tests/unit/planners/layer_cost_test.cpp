// layer_compute: which tasks carry a GEMM shape for a calibration's shape grid; compute_time_in_calls.
#include "planners/common/layer_cost.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "models/calibration/calibration.hpp"
#include "models/hardware/catalog.hpp"

namespace dnnsim {
namespace {

TEST(LayerCompute, ForwardOfOneGemmCarriesItsShapeWithTheBatchInItsRows) {
  LayerModel model;
  model.name = "two-layer";
  Layer linear;
  linear.name = "fc";
  linear.kind = LayerKind::matmul;
  linear.matmuls = {MatmulShape{128, 4096, 1024}};  // per sample: 128 tokens × 1024 → 4096
  linear.forward_flops = linear.matmuls.front().flops();
  linear.backward_flops = linear.forward_flops * 2.0;
  Layer attention = linear;
  attention.kind = LayerKind::attention;
  attention.matmuls = {MatmulShape{128, 128, 64}, MatmulShape{128, 64, 128}};  // scores, context
  model.layers = {linear, attention};

  // 4 samples: rows 4 · 128 = 512.
  const Compute forward = layer_compute(model, model.layers[0], 0, 4, Dtype::fp16, Pass::forward);
  EXPECT_EQ(forward.gemm.m, 512u);
  EXPECT_EQ(forward.gemm.n, 4096u);
  EXPECT_EQ(forward.gemm.k, 1024u);
  EXPECT_EQ(forward.gemm.op, GemmOp::nn);
  // Backward is the product's two gradients in one task: the same (m, n, k), marked as the pair.
  const Compute backward = layer_compute(model, model.layers[0], 0, 4, Dtype::fp16, Pass::backward);
  EXPECT_EQ(backward.gemm.m, 512u);
  EXPECT_EQ(backward.gemm.n, 4096u);
  EXPECT_EQ(backward.gemm.k, 1024u);
  EXPECT_EQ(backward.gemm.op, GemmOp::backward);
  // Two GEMMs in one layer: no single shape either; nor for a chunk of layers.
  EXPECT_FALSE(layer_compute(model, model.layers[1], 0, 4, Dtype::fp16, Pass::forward).gemm.known());
  EXPECT_FALSE(layers_compute(model, LayerRange{0, 2}, 0, 4, Dtype::fp16, Pass::forward).gemm.known());

  // Weights stored out × in (PyTorch's nn.Linear, Y = X·Wᵀ): the same product runs as the nt GEMM
  // forward and as the gradient pair of an nt product backward; the dimensions do not change.
  model.weight_layout = WeightLayout::out_in;
  const Compute forward_nt = layer_compute(model, model.layers[0], 0, 4, Dtype::fp16, Pass::forward);
  EXPECT_EQ(forward_nt.gemm.m, 512u);
  EXPECT_EQ(forward_nt.gemm.n, 4096u);
  EXPECT_EQ(forward_nt.gemm.k, 1024u);
  EXPECT_EQ(forward_nt.gemm.op, GemmOp::nt);
  EXPECT_EQ(layer_compute(model, model.layers[0], 0, 4, Dtype::fp16, Pass::backward).gemm.op, GemmOp::backward_nt);
}

TEST(LayerCompute, BackwardTrafficIsTwiceTheForwardsUnlessTheLayerSaysOtherwise) {
  // Weights 1 MB read once per task; 4 samples of 3 MB forward traffic: 1 + 12 = 13 MB forward,
  // 1 + 24 = 25 MB backward by default, 1 + 4 · 5 = 21 MB with backward_bytes 5 MB per sample.
  LayerModel model;
  Layer layer;
  layer.forward_flops = Flop(1e9);
  layer.backward_flops = Flop(2e9);
  layer.parameter_bytes = Bytes(1e6);
  layer.forward_bytes = Bytes(3e6);
  model.layers = {layer};
  EXPECT_DOUBLE_EQ(layer_compute(model, model.layers[0], 0, 4, Dtype::fp16, Pass::forward).bytes_accessed.value(),
                   13e6);
  EXPECT_DOUBLE_EQ(layer_compute(model, model.layers[0], 0, 4, Dtype::fp16, Pass::backward).bytes_accessed.value(),
                   25e6);
  model.layers[0].backward_bytes = Bytes(5e6);
  EXPECT_DOUBLE_EQ(layer_compute(model, model.layers[0], 0, 4, Dtype::fp16, Pass::backward).bytes_accessed.value(),
                   21e6);
}

// The compute_time_in_calls tests' fixture: a V100 whose hand-made fp16 matmul curve reads 0.4 at
// 0.25 TFLOP and 0.8 at 1 TFLOP, and a matmul kernel of 1 TFLOP and 1 MB.
struct CurvedV100 {
  std::shared_ptr<CalibrationTable> table = std::make_shared<CalibrationTable>();
  ClusterDevice v100{"node0/gpu0", *HardwareCatalog::builtin().find_gpu("V100-16GB"), 0};
  Compute kernel;
  double peak = 0;

  CurvedV100() {
    table->device = "V100-16GB";
    table->compute[{"matmul", Dtype::fp16}] = EfficiencyCurve{{{0.25e12, 0.4}, {1e12, 0.8}}};
    v100.calibration = table;
    kernel.kernel = LayerKind::matmul;
    kernel.dtype = Dtype::fp16;
    kernel.flops = Flop(1e12);
    kernel.bytes_accessed = Bytes(1e6);
    peak = v100.gpu.peak(Dtype::fp16)->value();
  }
};

// compute_time_in_calls: a kernel of 1 TFLOP split into 4 calls reads the fixture's curve at 0.25 TFLOP
// each (efficiency 0.4) instead of at 1 TFLOP (0.8): 4 × 0.25e12 / (0.4 × 125e12) = 20 ms against
// 1e12 / (0.8 × 125e12) = 10 ms (the memory term, 1 MB, is negligible). One call, a measured time or a
// GEMM of known shape price the whole as compute_time_on does.
TEST(ComputeTimeInCalls, EachCallReadsTheCurveAtItsOwnSize) {
  const CurvedV100 f;
  EXPECT_NEAR(compute_time_in_calls(f.kernel, 4, f.v100).value(), 1e12 / (0.4 * f.peak), 1e-12);
  EXPECT_NEAR(compute_time_in_calls(f.kernel, 1, f.v100).value(), 1e12 / (0.8 * f.peak), 1e-12);
  EXPECT_EQ(compute_time_in_calls(f.kernel, 1, f.v100), compute_time_on(f.kernel, f.v100));
  Compute measured = f.kernel;
  measured.measured_time = Seconds(0.003);
  measured.measured_on = "V100-16GB";
  EXPECT_DOUBLE_EQ(compute_time_in_calls(measured, 4, f.v100).value(), 0.003);
  Compute gemm = f.kernel;
  gemm.gemm = GemmShape{4096, 4096, 4096, GemmOp::nn};
  EXPECT_EQ(compute_time_in_calls(gemm, 4, f.v100), compute_time_on(gemm, f.v100));
}

// A call of `instances` equal problems (a fused attention's heads × sequences) reads the curve at one
// problem's FLOPs: one call of 4 instances of 0.25 TFLOP takes 1e12 / (0.4 × peak), as 4 calls do. Its
// traffic stays one call's: with a memory curve reading 0.1 at 1 MB and 0.9 at 1 GB, a memory-bound
// call of 1 GB and 1 MFLOP in 1,000 instances takes 1e9 / (0.9 × bandwidth), not 1,000 × 1e6 /
// (0.1 × bandwidth).
TEST(ComputeTimeInCalls, InstancesReadTheCurveAtOneAndKeepTheCallsTraffic) {
  const CurvedV100 f;
  f.table->memory = EfficiencyCurve{{{1e6, 0.1}, {1e9, 0.9}}};
  EXPECT_NEAR(compute_time_in_calls(f.kernel, 1, f.v100, 4).value(), 1e12 / (0.4 * f.peak), 1e-12);
  Compute traffic = f.kernel;
  traffic.flops = Flop(1e6);
  traffic.bytes_accessed = Bytes(1e9);
  const double bandwidth = f.v100.gpu.memory_bandwidth.value();
  EXPECT_NEAR(compute_time_in_calls(traffic, 1, f.v100, 1000).value(), 1e9 / (0.9 * bandwidth), 1e-12);
}

}  // namespace
}  // namespace dnnsim
