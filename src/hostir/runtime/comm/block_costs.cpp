#include "hostir/runtime/comm/block_costs.h"

namespace hostir {

BlockCost mlpBlockCost(int64_t tokens, int64_t hidden, int64_t ffn, int64_t devices) {
  const int64_t local_rows = tokens / devices;
  // Per rank: gather (devices - 1) shards of x, reduce-scatter (devices - 1)
  // blocks of the partial y; two GEMMs of 2 * S * H * F / D.
  BlockCost block;
  block.cost = {
      .link_bytes = 2.0 * static_cast<double>((devices - 1) * local_rows * hidden) * 4,
      .flops = 4.0 * static_cast<double>(tokens * hidden) * static_cast<double>(ffn / devices),
      .collectives_per_chunk = 2,
      .ops_per_chunk = 6,
      .flops_by_chunks = {},
      .causal_scores = {},
      // Counted in its pipelined program (HOSTIR_DUMP=host_ir, 4 chunks):
      // per chunk, 28 for the MLP, 127 for the layer.
      .host_instructions_per_chunk = 28};
  block.gemm_m = tokens;
  block.gemm_k = hidden;
  block.gemm_n = ffn / devices;
  return block;
}

BlockCost transformerLayerCost(int64_t tokens, int64_t hidden, int64_t ffn, int64_t devices) {
  BlockCost block = mlpBlockCost(tokens, hidden, ffn, devices);
  const auto rows = static_cast<double>(tokens);
  const auto width = static_cast<double>(hidden);
  const double local_width = width / static_cast<double>(devices);  // this rank's heads' columns
  // Q, K, V and the out-projection, then q·kᵀ and p·v over every key.
  const double projections = 4 * 2 * rows * width * local_width;
  const double full_attention = 2 * 2 * rows * rows * local_width;
  PipelineCost& cost = block.cost;
  cost.link_bytes *= 2;
  cost.collectives_per_chunk = 4;
  cost.ops_per_chunk = 16;
  cost.flops += projections;
  cost.flops += full_attention;
  cost.causal_scores = {.flops = full_attention, .tokens = tokens};
  cost.host_instructions_per_chunk = 127;  // counted: see mlpBlockCost
  return block;
}

}  // namespace hostir
