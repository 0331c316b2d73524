#pragma once

#include <cstdint>

#include "hostir/runtime/comm/chunk_choice.h"

// What the chunk-count model (chunk_choice.h) needs to know about the two
// sequence-parallel blocks hostir's main jobs run, `hostir sp-mlp` /
// `sp-layer` and their Python examples alike, so both price one formula.
namespace hostir {

struct BlockCost {
  PipelineCost cost;
  // The GEMM the calibration times per chunk count: [gemm_m / C, gemm_k] x
  // [gemm_k, gemm_n], unchunked here.
  int64_t gemm_m = 0;
  int64_t gemm_k = 0;
  int64_t gemm_n = 0;
};

// The MLP block on `devices` ranks: x [tokens, hidden] allgathered from its
// token shards, linear to ffn / devices columns, GELU, linear back, the
// partial sums reduce-scattered onto the tokens.
BlockCost mlpBlockCost(int64_t tokens, int64_t hidden, int64_t ffn, int64_t devices);

// The sequence + tensor-parallel transformer layer (docs/transformer_layer.md)
// on `devices` ranks: the MLP block's cost plus the attention half's
// allgather and reduce-scatter (as many bytes as the MLP's), its Q/K/V and
// out-projections, and its causal attention as each program computes it:
// with C >= 2 chunks a query loop computes each tile of query rows against
// the keys it sees (a fraction (n + 1) / 2n of the full scores for n
// tiles); the unchunked layer computes them all. Heads do not change it.
BlockCost transformerLayerCost(int64_t tokens, int64_t hidden, int64_t ffn, int64_t devices);

}  // namespace hostir
