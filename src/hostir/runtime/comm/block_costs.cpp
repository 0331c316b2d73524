#include "hostir/runtime/comm/block_costs.h"

#include <algorithm>

#include "hostir/host_ir/passes/causal_key_ranges.h"

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
      .flops_by_chunks = {}};
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
  const double mlp_and_projections = cost.flops;
  cost.flops += full_attention;
  for (int64_t chunks : {2, 4, 8, 16}) {
    // (A chunk count auto does not try, with fewer tokens than chunks, still
    // gets an entry: at least one row per tile.)
    const int64_t tile_rows = std::max<int64_t>(1, std::min(kCausalQueryTileRows, tokens / chunks));
    const auto tiles = static_cast<double>((tokens + tile_rows - 1) / tile_rows);
    cost.flops_by_chunks[chunks] = mlp_and_projections + full_attention * (tiles + 1) / (2 * tiles);
  }
  return block;
}

}  // namespace hostir
