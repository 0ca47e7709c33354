// What a transformer block keeps for its backward pass, and the layers of a measured profile declared
// to be a zoo transformer's blocks, so that a profile that records only each layer's output tensor
// (PipeDream/DAPPLE) still stashes what the backward pass really keeps (docs/memory.md, "Where the
// activations come from").
//
// Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", MLSys'23 §4.1,
// count the tensors one block keeps, for s tokens, micro-batch b, hidden h, a heads:
//   attention: the QKV input sbh; Q and K 2sbh; the softmax output as²b, its dropout mask as²b and
//              the dropout output as²b; V sbh; the output projection's input sbh, its dropout mask sbh
//   MLP:       the fc1 input sbh; the GeLU input 4sbh; the fc2 input 4sbh; the dropout mask sbh
//   LayerNorm: both inputs, 2sbh
// i.e. 16·sbh activation elements and 2·sbh mask elements, plus 2·as²b activation elements and as²b
// mask elements. With E bytes per activation element and 1-byte masks (the paper's assumption):
//   saved = sbh·(16E + 2) + as²b·(2E + 1)
// the paper's 34·sbh + 5·as²b for E = 2 (fp16; its Table 2's first row, layer_activation_bytes in
// tensor_parallel.hpp), and 66·sbh + 9·as²b for fp32 activations (E = 4).
#pragma once

#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/dnn/tensor_parallel.hpp"

namespace dnnsim {

// The formula above, bytes per micro-batch of `micro_batch` sequences. Asserts element_bytes ≥ 1.
[[nodiscard]] Bytes transformer_block_saved_bytes(const TransformerShape& shape, int micro_batch, int element_bytes);

// Declares the layers of `profile` with one block's parameters of the zoo transformer `zoo` (both
// counted in fp32 bytes, as the profiles and the zoo count them) to be its blocks. Each such layer
// without saved_bytes of its own then keeps transformer_block_saved_bytes(shape, 1, E) per sample
// (ActivationSource::zoo_block), E = its recorded output per sample / (s·h): the profile's own
// element size, the nearest of 1, 2, 4 within 10% (4 for the fp32 DAPPLE profiles, which record
// 4.125·s·h). The output still crosses a cut after it. Sets
// profile.activation_zoo_model; returns the number of layers that took the zoo's count.
// @throw InputError without a location (the caller places it at its key) when `zoo` is not a
//        transformer, when the number of layers with a block's parameters is not the zoo's number of
//        blocks, or when a block's output is not 1, 2 or 4 bytes (within 10%) per element of s·h
//        (another sequence length or hidden size than the zoo model's).
int declare_zoo_blocks(LayerModel& profile, const LayerModel& zoo);

}  // namespace dnnsim
