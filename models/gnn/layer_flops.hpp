// FLOPs of one GNN layer on a sampled message-flow block (D destinations, S sources, E edges,
// F_in → F_out features), forward pass; backward is taken as 2× forward (the usual dense-layer
// ratio: gradients with respect to inputs and to weights). A multiply-add counts as 2 FLOPs.
//
// - GCN (Kipf & Welling, ICLR'17, eq. 2): normalised sum over edges E·F_in·2 (scale + add), then
//   one linear map D·2·F_in·F_out.
// - GraphSAGE-mean (Hamilton et al., NeurIPS'17, Alg. 1): mean over edges E·F_in + D·F_in, then the
//   self and neighbour weights on the concatenation, D·2·(2·F_in)·F_out.
// - GAT, one head (Veličković et al., ICLR'18, eqs. 1–4): W on every source S·2·F_in·F_out; the two
//   halves of the attention vector per node S·2·2·F_out; per edge a sum, LeakyReLU, exp, the
//   softmax division and the weighted sum E·(4 + 2·F_out) (the softmax denominators' sums are the
//   per-edge additions already counted).
#pragma once

#include <cstdint>
#include <string_view>

#include "models/common/units.hpp"
#include "models/gnn/epoch_trace.hpp"

namespace dnnsim::gnn {

enum class GnnLayerKind { gcn, sage, gat };

// @throw std::invalid_argument for an unknown name (the scenario reader reports it located).
[[nodiscard]] GnnLayerKind gnn_layer_kind(std::string_view name);

[[nodiscard]] Flop gnn_layer_forward_flops(GnnLayerKind kind, const LayerCounts& layer, std::uint32_t in_features,
                                           std::uint32_t out_features);

// Bytes one layer's forward moves through GPU memory: every edge reads its source's features (the
// sparse aggregation is memory-bound), sources are read once more for the dense transform, and the
// destinations' outputs are written.
[[nodiscard]] Bytes gnn_layer_forward_bytes(const LayerCounts& layer, std::uint32_t in_features,
                                            std::uint32_t out_features, std::uint32_t dtype_bytes);

// Trainable parameters of one layer (the gradients the data-parallel all-reduce carries): GCN one
// weight matrix and a bias; GraphSAGE-mean the self and neighbour matrices and a bias; GAT (one
// head) the weight matrix, the two halves of the attention vector and a bias.
[[nodiscard]] double gnn_layer_parameters(GnnLayerKind kind, std::uint32_t in_features, std::uint32_t out_features);

// GPU kernels one layer's forward launches in an eager framework (DGL on PyTorch), each a CPU
// dispatch: GCN 4 (normalise, sparse aggregate, matmul, bias+activation), GraphSAGE 6 (mean
// aggregate, two matmuls, add, bias, activation), GAT 10 (matmul, two attention products, edge
// add, LeakyReLU, edge softmax as max/exp/sum/divide, weighted aggregate). A reconstruction from the
// layers' equations above, not a profile: the count of a real framework differs by fusion.
[[nodiscard]] int gnn_layer_forward_kernels(GnnLayerKind kind);

}  // namespace dnnsim::gnn
