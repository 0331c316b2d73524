#pragma once

#include <cstdint>
#include <memory>

#include "hostir/ir/device_mesh.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_view.h"

// The blocks of a Megatron-style transformer layer (sequence + tensor
// parallel), written as annotated fusions: the user's math plus the
// shardings of the tensors whose layout matters; sharding propagation and
// the multi-device lowering work out the collectives. Shared by the `hostir
// sp-mlp` and `hostir sp-layer` commands and their tests.
namespace hostir::tools {

// The MLP block on token-sharded x [T, H]: w1 [F, H] column-parallel and
// w2 [H, F] row-parallel (both sharded on F over `mesh`), so
// linear(x, w1) allgathers x's tokens (with chunks > 1, Stream-parallel
// chunks of rows, each chunk's allgather overlapping the previous chunk's
// GEMM) and linear(gelu(.), w2) is reduce-scattered back onto the tokens.
// Returns y [T, H], sharded on tokens. Builds in the current Fusion.
TensorView* sequenceParallelMlp(TensorView* x, TensorView* w1, TensorView* w2,
                                const DeviceMesh& mesh, int64_t chunks);

// The MLP block alone as a fusion of inputs (x, w1, w2) and output y.
std::unique_ptr<Fusion> buildSequenceParallelMlp(int64_t devices, int64_t chunks);

// The inputs of buildTransformerLayer, in order, with their shapes (T
// tokens, H hidden, nh heads of hd = H / nh, F ffn) and shardings:
//   x [T, H] on T; ln1_weight, ln1_bias [H] replicated;
//   wq, wk, wv [nh, H, hd] on heads (a head's columns of the usual [H, H]
//   projection, transposed: q = x @ wq[h]); wo [nh, hd, H] on heads (a
//   head's rows of the usual output projection, transposed);
//   ln2_weight, ln2_bias [H] replicated; w1 [F, H] on F; w2 [H, F] on F.
enum TransformerLayerInput : int64_t {
  kLayerX,
  kLayerLn1Weight,
  kLayerLn1Bias,
  kLayerWq,
  kLayerWk,
  kLayerWv,
  kLayerWo,
  kLayerLn2Weight,
  kLayerLn2Bias,
  kLayerW1,
  kLayerW2,
  kLayerInputCount
};

// The logical axis of each input (in TransformerLayerInput order) sharded
// over the devices, -1 where it is replicated.
inline constexpr int64_t kLayerShardedAxis[kLayerInputCount] = {0, -1, -1, 0, 0, 0,
                                                                0, -1, -1, 0, 1};

// A causal decoder layer, pre-norm:
//   h = x + attention(layer_norm(x)),  y = h + mlp(layer_norm(h)),
// attention = sum over heads of softmax(causal(q kᵀ / sqrt(hd))) v wo.
// Shardings: x, h, y on tokens; the layer norms on each rank's tokens; the
// normalized tokens allgathered once for q, k, v (sharded on heads: each
// rank owns nh / devices heads); the out-projection's partial sums over
// this rank's heads reduce-scattered onto the tokens; the MLP block as in
// sequenceParallelMlp. With `chunks` > 1 both halves are Stream-parallel
// over tokens: the attention's queries in `chunks` chunks (each against
// its causal prefix of keys), the MLP's first GEMM in `chunks` chunks.
std::unique_ptr<Fusion> buildTransformerLayer(int64_t devices, int64_t head_dim, int64_t chunks);

}  // namespace hostir::tools
