#include <gtest/gtest.h>

#include "models/gnn/layer_flops.hpp"

namespace dnnsim::gnn {
namespace {

// D = 10 destinations, S = 40 sources, E = 100 edges, 100 → 64 features (ogbn-products' input dim).
// GCN:  2·100·100 + 2·10·100·64 = 20,000 + 128,000 = 148,000.
// SAGE: 100·100 + 10·100 + 2·10·200·64 = 10,000 + 1,000 + 256,000 = 267,000.
// GAT:  2·40·100·64 + 4·40·64 + 100·(4 + 128) = 512,000 + 10,240 + 13,200 = 535,440.
TEST(GnnLayerFlops, HandDerivedCounts) {
  const LayerCounts layer{.num_dst = 10, .num_src = 40, .edges = 100};
  EXPECT_DOUBLE_EQ(gnn_layer_forward_flops(GnnLayerKind::gcn, layer, 100, 64).value(), 148000);
  EXPECT_DOUBLE_EQ(gnn_layer_forward_flops(GnnLayerKind::sage, layer, 100, 64).value(), 267000);
  EXPECT_DOUBLE_EQ(gnn_layer_forward_flops(GnnLayerKind::gat, layer, 100, 64).value(), 535440);
  EXPECT_EQ(gnn_layer_kind("gat"), GnnLayerKind::gat);
  EXPECT_THROW((void)gnn_layer_kind("gin"), std::invalid_argument);
}

}  // namespace
}  // namespace dnnsim::gnn
