// Reader of the per-layer profiles of PipeDream (Narayanan et al., SOSP'19) and DAPPLE (Fan et al.,
// PPoPP'21), the graph files of their artifacts (data/profiles/dapple/README.md):
//
//   node5 -- layer_0 -- forward_compute_time=2.69, backward_compute_time=4.47, activation_size=4325376,
//   parameter_size=50384896 	node4 -- node5
//
// - a node line: `ID -- DESCRIPTION -- key=value, …` with the four keys forward_compute_time and
//   backward_compute_time (milliseconds for one micro-batch of `measured_batch` samples on the
//   profiling GPU), activation_size (bytes of the output for the micro-batch; a list `[a; b; …]` for a
//   layer with several outputs, summed) and parameter_size (bytes, fp32); and optionally dnnsim's
//   saved_bytes (bytes the layer keeps for its backward pass for the micro-batch: every stashed
//   tensor, its output included if kept; a non-negative number like the others);
// - an edge line `A -- B` (usually indented): B consumes A's output;
// - blank lines are ignored. The first " -- " of a node line ends the id and the last one starts the
//   keys; the description is what lies between (so it may contain " -- " itself).
//
// The layers come out in topological order, stable: among the nodes whose inputs are all placed, the
// one whose node line comes first in the file. Each becomes a Layer with forward_time and
// backward_time (measured for `measured_batch` samples), parameter_bytes = parameter_size,
// activation_bytes = activation_size / measured_batch (per sample, ActivationSource::profile_output),
// or saved_bytes / measured_batch when given (ActivationSource::saved_bytes; the output still
// crosses a cut: Layer::keep_activations), forward_bytes 0 (unknown), no
// FLOPs, and a kind read from the description (first word, case-insensitive prefix): Conv →
// convolution; Linear, FC → matmul; ReLU, Dropout, Add, Concat → elementwise; BatchNorm, LayerNorm →
// normalization; MaxPool, AvgPool, AdaptiveAvgPool → pooling; Embed → embedding; else other (LSTM
// blocks, whole transformer layers, AmoebaNet cells).
//
// Pipeline stages are contiguous ranges of this order. Most profiles are chains (VGG-19); BERT,
// XLNet, GNMT and AmoebaNet graphs branch (attention masks, skip inputs, cell inputs from two
// predecessors), so a cut after a layer can carry several tensors: every output produced at or
// before the cut and consumed after it (a tensor consumed several stages later is relayed through
// each cut it crosses). On a branching graph each layer's `cut_bytes` holds that sum per sample,
// and the planners' cut costs and the pipeline lowering use it (Layer::bytes_across_cut);
// `is_chain` reports which kind the file is.
#pragma once

#include <string>
#include <string_view>

#include "models/dnn/layer_model.hpp"

namespace dnnsim {

// Reads a profile graph file. measured_batch 0: the N of "pbs-N" in the file name.
// `is_chain` (optional): set to whether the edges are exactly the consecutive pairs of the order.
// @throw InputError with file:line:col for every problem: unreadable file, malformed line, unknown
//        key or missing key, negative or non-numeric value, duplicate node, edge to an unknown node,
//        a cycle, no node at all, no batch size.
[[nodiscard]] LayerModel load_profile_graph(const std::string& path, const std::string& measured_on = "V100-16GB",
                                            int measured_batch = 0, bool* is_chain = nullptr);

// The same from text; `file_name` is used in diagnostics and for the pbs-N batch.
[[nodiscard]] LayerModel parse_profile_graph(std::string_view text, const std::string& file_name,
                                             const std::string& measured_on = "V100-16GB", int measured_batch = 0,
                                             bool* is_chain = nullptr);

}  // namespace dnnsim
