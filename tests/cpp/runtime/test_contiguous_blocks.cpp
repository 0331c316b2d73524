// A strided view split into contiguous blocks (runtime/contiguous_blocks.h),
// and GELU over a Stream chunk's strided rows computed block by block with
// ATen's vectorized kernel.

#include "hostir/runtime/contiguous_blocks.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

// A chunk of rows of a [ranks, rows, columns] buffer: one block per rank,
// each contiguous, together every element once.
TEST(ContiguousBlocks, AChunksRowsOfARanksBufferAreOneBlockPerRank) {
  at::Tensor buffer = at::zeros({2, 64, 128});
  at::Tensor chunk = buffer.slice(1, 16, 48);
  at::Tensor out = at::empty({2, 32, 128});
  ASSERT_FALSE(chunk.is_contiguous());
  auto blocks = contiguousBlocks(out, chunk);
  ASSERT_EQ(blocks.size(), 2u);
  for (auto& [out_block, in_block] : blocks) {
    EXPECT_TRUE(out_block.is_contiguous());
    EXPECT_TRUE(in_block.is_contiguous());
    EXPECT_EQ(in_block.sizes(), (at::IntArrayRef{32, 128}));
    in_block.fill_(1);
    out_block.fill_(1);
  }
  EXPECT_EQ(buffer.sum().item<float>(), 2 * 32 * 128) << "the chunk's rows, each once";
  EXPECT_TRUE(out.eq(1).all().item<bool>());
}

// Where one call is as good or better, there are no blocks: both contiguous
// already; a transposed view (its pieces are strided vectors); more pieces
// than allowed; pieces under the size where a call pays; sizes that differ.
TEST(ContiguousBlocks, NoneWhereOneCallDoes) {
  at::Tensor contiguous = at::zeros({2, 32, 128});
  EXPECT_TRUE(contiguousBlocks(at::empty_like(contiguous), contiguous).empty());
  at::Tensor transposed = at::zeros({128, 64}).t();
  EXPECT_TRUE(contiguousBlocks(at::empty({64, 128}), transposed).empty());
  at::Tensor many = at::zeros({128, 8, 4096}).slice(1, 0, 4);
  EXPECT_TRUE(contiguousBlocks(at::empty({128, 4, 4096}), many).empty()) << "128 pieces";
  EXPECT_EQ(contiguousBlocks(at::empty({128, 4, 4096}), many, 128).size(), 128u);
  at::Tensor small = at::zeros({2, 64, 16}).slice(1, 0, 8);
  EXPECT_TRUE(contiguousBlocks(at::empty({2, 8, 16}), small).empty()) << "128-element pieces";
  EXPECT_TRUE(contiguousBlocks(at::empty({2, 8, 32}), small).empty()) << "sizes differ";
}

using ContiguousBlocksGeluTest = RuntimeTest;

// gelu and its derivative of a chunk's strided rows equal, bit for bit,
// what ATen's vectorized kernel gives on a contiguous copy; ATen's strided
// loop (what ran before) differs in the last bits and is 4x slower.
TEST_F(ContiguousBlocksGeluTest, GeluOfAChunksStridedRowsIsTheVectorizedKernels) {
  TensorView* rows = makeSymbolicTensor(3);
  TensorView* activation = gelu(rows);
  TensorView* derivative = geluDerivative(rows);
  at::Tensor buffer = at::randn({2, 256, 1024});
  at::Tensor chunk = buffer.slice(1, 64, 128);
  ExpressionEvaluator ee;
  ee.bind(rows, chunk);
  at::Tensor copy = chunk.contiguous();
  EXPECT_TRUE(at::equal(ee.evaluateTensor(activation), at::gelu(copy)));
  EXPECT_TRUE(
      at::equal(ee.evaluateTensor(derivative), at::gelu_backward(at::ones_like(copy), copy)));
}

}  // namespace
}  // namespace hostir::test
