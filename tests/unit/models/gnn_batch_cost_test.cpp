// The price of one GNN mini-batch (models/gnn/batch_cost.hpp), every number derived by hand from a
// batch whose counts are written out: features of 100 fp32 (400 B), sampling at 1 µs per edge,
// gathering at 1 GB/s, 10 µs per dispatched kernel, a GPU timed at 1 TFLOP/s.
#include <gtest/gtest.h>

#include "models/gnn/batch_cost.hpp"

namespace dnnsim::gnn {
namespace {

// Server 1's GPU 0: a 2-layer block (output layer first: 10 ← 30 nodes over 40 edges, then 30 ← 100
// over 120), 50 of the 160 edges sampled by server 0; inputs: 20 features from the host, 10 from
// server 0, 7 from the cache of the server's GPU 1.
BatchCounts batch() {
  BatchCounts counts;
  counts.server = 1;
  counts.gpu = 0;
  counts.epoch = 2;
  counts.layers = {LayerCounts{10, 30, 40}, LayerCounts{30, 100, 120}};
  counts.remote_edges = 50;
  counts.features.count[static_cast<int>(FeatureSource::host)] = 20;
  counts.features.count[static_cast<int>(FeatureSource::remote)] = 10;
  counts.features.count[static_cast<int>(FeatureSource::peer_gpu)] = 7;
  counts.from_server = {BatchCounts::FromServer{5, 50, 10}, BatchCounts::FromServer{}};
  counts.from_peer_gpu = {0, 7};
  return counts;
}

GnnCpuCosts costs() { return GnnCpuCosts{Seconds(1e-6), BytesPerSecond(1e9), Seconds(1e-5)}; }

const FeatureSpec kFeatures{100, 4};
const GnnModelShape kModel{GnnLayerKind::sage, 16, 2, Dtype::fp32};
const GpuTimeFn kTeraflop = [](const Compute& c) { return Seconds(c.flops.value() / 1e12); };

TEST(GnnBatchCost, CpuWorkAndRemoteRequests) {
  const GnnBatchWork w = price_batch(batch(), kFeatures, kModel, costs(), kTeraflop, 3);
  EXPECT_EQ(w.server, 1u);
  EXPECT_EQ(w.index, 3u);
  EXPECT_EQ(w.epoch, 2u);
  // Local sampling: (160 − 50) edges × 1 µs; local gather: 20 × 400 B at 1 GB/s.
  EXPECT_DOUBLE_EQ(w.sample_core_seconds, 110e-6);
  EXPECT_DOUBLE_EQ(w.gather_core_seconds, 8e-6);
  // Server 0 samples 5 expansions (4 B ids out), 50 edges (50 µs there, 8 B each back) …
  ASSERT_EQ(w.remote_sample.size(), 1u);
  EXPECT_EQ(w.remote_sample[0].server, 0u);
  EXPECT_DOUBLE_EQ(w.remote_sample[0].request_bytes, 20);
  EXPECT_DOUBLE_EQ(w.remote_sample[0].core_seconds, 50e-6);
  EXPECT_DOUBLE_EQ(w.remote_sample[0].response_bytes, 400);
  // … and gathers 10 features (4 B ids out, 10 × 400 B at 1 GB/s there, 4,000 B back).
  ASSERT_EQ(w.remote_gather.size(), 1u);
  EXPECT_DOUBLE_EQ(w.remote_gather[0].request_bytes, 40);
  EXPECT_DOUBLE_EQ(w.remote_gather[0].core_seconds, 4e-6);
  EXPECT_DOUBLE_EQ(w.remote_gather[0].response_bytes, 4000);
  // GPU 1's cache sends 7 × 400 B over NVLink.
  ASSERT_EQ(w.peer_bytes.size(), 1u);
  EXPECT_EQ(w.peer_bytes[0].first, 1u);
  EXPECT_DOUBLE_EQ(w.peer_bytes[0].second, 2800);
  // Host-to-device: (20 host + 10 remote) × 400 B of features, and the blocks at 8 B per edge and
  // 4 B per source node: 8·40 + 4·30 + 8·120 + 4·100 = 1,800 B; 13,800 B in all.
  EXPECT_DOUBLE_EQ(w.h2d_bytes, 13800);
}

TEST(GnnBatchCost, GpuWorkIsThreeForwardPasses) {
  const GnnBatchWork w = price_batch(batch(), kFeatures, kModel, costs(), kTeraflop, 0);
  // GraphSAGE-mean forward E·F_in + D·F_in + D·2·(2·F_in)·F_out (layer_flops.hpp): the output layer
  // (16 → 2) 640 + 160 + 1,280 = 2,080, the input layer (100 → 16) 12,000 + 3,000 + 192,000 =
  // 207,000; forward and backward 3 × 209,080 = 627,240 FLOPs, 0.62724 µs at 1 TFLOP/s.
  EXPECT_DOUBLE_EQ(w.gpu_flops, 627240);
  EXPECT_DOUBLE_EQ(w.gpu_seconds, 627240e-12);
  // 3 × 6 kernels per GraphSAGE layer × 2 layers + 4 (loss, optimizer) = 40 dispatches of 10 µs.
  EXPECT_DOUBLE_EQ(w.dispatch_core_seconds, 400e-6);
}

TEST(GnnBatchCost, ModelParametersOfEachLayer) {
  // GraphSAGE-mean 2·in·out + out: the output layer 2·16·2 + 2 = 66, the input layer
  // 2·100·16 + 16 = 3,216.
  EXPECT_DOUBLE_EQ(model_parameters(kModel, kFeatures, 2), 3282);
  // One layer maps the features straight to the classes: 2·100·2 + 2.
  EXPECT_DOUBLE_EQ(model_parameters(kModel, kFeatures, 1), 402);
}

}  // namespace
}  // namespace dnnsim::gnn
