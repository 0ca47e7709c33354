// Operator graphs built as graphs (`graph: {zoo: NAME, …}` of an SPMD workload; `dnnsim list graphs`):
// the models of HAP's evaluation at the settings of its code (alibaba/hap models.py and config.py), a
// mixture of experts with an experts operator, and networks that are not chains — branches, skip
// connections, two towers — for the planners that cut DAGs (Rhino's pipeline stages). The layer-chain
// zoo (models/dnn/zoo.hpp) cannot express these: its models are sequences of layers.
//
// Conventions of every generated graph: rows = samples × rows per sample (tokens, pixels); a
// convolution is its implicit GEMM behind an im2col reshape (rows = output pixels, columns =
// C_in·kh·kw), a pooling or an upsampling an element-wise operator whose next reshape carries the
// change of resolution, as build_op_graph does for the zoo's CNNs. FLOPs as the zoo counts them
// (2·m·n·k per product; 1 per element for ReLU, additions, pooling comparisons; 5 for normalizations
// and softmax; 8 for GeLU).
#pragma once

#include <functional>

#include "models/common/registry.hpp"
#include "models/spmd/op_graph.hpp"

namespace dnnsim {

struct GraphRequest {
  int batch = 1;  // samples of one iteration
  Dtype dtype = Dtype::fp32;
  int devices = 1;                   // the cluster's GPUs (HAP's mixture of experts has two experts per GPU)
  const Options* options = nullptr;  // the entry's declared options
};
using GraphGenerator = std::function<OpGraph(const GraphRequest&)>;
using GraphZoo = Registry<GraphGenerator>;

// hap-vgg19, hap-vit, hap-bert-moe, two-tower, inception, unet. @throw InputError for options that do
// not fit (an image the network cannot downsample, a batch of zero samples).
[[nodiscard]] const GraphZoo& builtin_graph_models();

}  // namespace dnnsim
