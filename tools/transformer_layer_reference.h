#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

// The transformer layer of megatron_blocks.h computed in one process with
// plain ATen ops, written the usual way (2-D projection weights, heads by
// view + transpose, torch.tril for the causal mask), as the reference the
// sharded runs are checked against.
namespace hostir::tools {

struct TransformerLayerSizes {
  int64_t tokens = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn = 0;
};

// The layer's parameters and input in the usual layout: wq, wk, wv, wo
// [H, H] (out, in), w1 [F, H], w2 [H, F].
struct TransformerLayerTensors {
  at::Tensor x, ln1_weight, ln1_bias, wq, wk, wv, wo, ln2_weight, ln2_bias, w1, w2;
};

// Every rank draws the same tensors from `seed`.
TransformerLayerTensors drawTransformerLayer(const TransformerLayerSizes& sizes, uint64_t seed);

// y = h + mlp(layer_norm(h)), h = x + attention(layer_norm(x)), eps 1e-5.
at::Tensor transformerLayerReference(const TransformerLayerTensors& t, int64_t heads);

// The whole (unsharded) inputs of buildTransformerLayer, in
// TransformerLayerInput order: the projections regrouped per head.
std::vector<at::Tensor> transformerLayerFusionInputs(const TransformerLayerTensors& t,
                                                     int64_t heads);

// torch.chunk's piece of `t` along `dim` for `rank` of `devices` (empty
// past the pieces torch.chunk makes: 1 row on 3 ranks is 1 + 0 + 0), as
// the program's shards are cut.
at::Tensor torchChunkPiece(const at::Tensor& t, int64_t dim, int64_t devices, int64_t rank);

// This rank's shards of transformerLayerFusionInputs for `devices` ranks.
std::vector<at::Tensor> transformerLayerLocalInputs(const TransformerLayerTensors& t, int64_t heads,
                                                    int64_t devices, int64_t rank);

}  // namespace hostir::tools
