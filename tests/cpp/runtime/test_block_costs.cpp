#include <gtest/gtest.h>

#include "hostir/runtime/comm/block_costs.h"

namespace hostir {
namespace {

TEST(BlockCosts, MlpBlockMovesItsRowsBothWaysAndComputesTwoGemms) {
  const BlockCost mlp = mlpBlockCost(/*tokens=*/2048, /*hidden=*/1024, /*ffn=*/4096, /*devices=*/2);
  // One peer's 1024 rows of 1024 floats in (allgather) and out (reduce-scatter).
  EXPECT_DOUBLE_EQ(mlp.cost.link_bytes, 2.0 * 1024 * 1024 * 4);
  EXPECT_DOUBLE_EQ(mlp.cost.flops, 2.0 * 2 * 2048 * 1024 * 2048);
  EXPECT_EQ(mlp.cost.collectives_per_chunk, 2);
  EXPECT_TRUE(mlp.cost.flops_by_chunks.empty());
  EXPECT_EQ(mlp.gemm_m, 2048);
  EXPECT_EQ(mlp.gemm_k, 1024);
  EXPECT_EQ(mlp.gemm_n, 2048);
}

TEST(BlockCosts, LayerAddsTheAttentionHalfAndSkipsTheMaskedScoresInTiles) {
  const BlockCost mlp = mlpBlockCost(2048, 1024, 4096, 2);
  const BlockCost layer = transformerLayerCost(2048, 1024, 4096, 2);
  const double projections = 4.0 * 2 * 2048 * 1024 * 512;
  const double attention = 2.0 * 2 * 2048 * 2048 * 512;
  EXPECT_DOUBLE_EQ(layer.cost.link_bytes, 2 * mlp.cost.link_bytes);
  EXPECT_EQ(layer.cost.collectives_per_chunk, 4);
  // Unchunked: every key of every query.
  EXPECT_DOUBLE_EQ(layer.cost.flops, mlp.cost.flops + projections + attention);
  // 2 and 4 chunks: tiles of 256 rows, 8 of them, (8 + 1) / 16 of the scores;
  // 16 chunks of 128 rows: 16 tiles, 17 / 32.
  for (int64_t chunks : {2, 4, 8}) {
    EXPECT_DOUBLE_EQ(layer.cost.flopsWith(chunks),
                     mlp.cost.flops + projections + attention * 9 / 16)
        << chunks;
  }
  EXPECT_DOUBLE_EQ(layer.cost.flopsWith(16), mlp.cost.flops + projections + attention * 17 / 32);
  EXPECT_EQ(layer.gemm_n, mlp.gemm_n);
}

TEST(BlockCosts, LayerPricesTheCausalSavingAtAnyChunkCount) {
  // Before, only 2, 4, 8 and 16 chunks had their saving: 3, 12 or 32
  // chunks were priced as if every query read every key.
  const BlockCost mlp = mlpBlockCost(2048, 1024, 4096, 2);
  const BlockCost layer = transformerLayerCost(2048, 1024, 4096, 2);
  const double rest = mlp.cost.flops + 4.0 * 2 * 2048 * 1024 * 512;
  const double attention = 2.0 * 2 * 2048 * 2048 * 512;
  // 3 chunks: tiles of 256 rows, 8 of them; 12 chunks: tiles of 170 rows,
  // 13 of them (the last one short); 32 chunks: 32 tiles of 64 rows.
  EXPECT_DOUBLE_EQ(layer.cost.flopsWith(3), rest + attention * 9 / 16);
  EXPECT_DOUBLE_EQ(layer.cost.flopsWith(12), rest + attention * 14 / 26);
  EXPECT_DOUBLE_EQ(layer.cost.flopsWith(32), rest + attention * 33 / 64);
  EXPECT_DOUBLE_EQ(layer.cost.flopsWith(1), layer.cost.flops) << "one chunk reads every key";
  EXPECT_DOUBLE_EQ(mlp.cost.flopsWith(32), mlp.cost.flops) << "no attention, nothing skipped";
}

TEST(BlockCosts, LayerWithFewerTokensThanChunksHasTilesOfOneRow) {
  // hostir sp-layer --tokens 8 --chunks auto prices 16 chunks too: a tile of
  // 0 rows divided by zero before.
  const BlockCost layer = transformerLayerCost(/*tokens=*/8, /*hidden=*/8, /*ffn=*/8, 1);
  const BlockCost mlp = mlpBlockCost(8, 8, 8, 1);
  const double attention = 2.0 * 2 * 8 * 8 * 8;
  const double projections = 4.0 * 2 * 8 * 8 * 8;
  EXPECT_DOUBLE_EQ(layer.cost.flopsWith(16), mlp.cost.flops + projections + attention * 9 / 16);
}

}  // namespace
}  // namespace hostir
