// The batched_matmul_sums pass: sum over the batch of a batched matmul
// becomes one GEMM over the merged contraction, whole or per chunk of a
// stream loop; left alone when the batched product is read elsewhere.
// Every case runs against ATen.

#include <gtest/gtest.h>

#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/ir/cloner.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

class BatchedMatmulSumsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
    a_ = at::randn({kBatch, kRows, kInner});
    b_ = at::randn({kBatch, kInner, kCols});
  }

  static constexpr int64_t kBatch = 3;
  static constexpr int64_t kRows = 10;
  static constexpr int64_t kInner = 4;
  static constexpr int64_t kCols = 6;

  // sum(matmul(a, b), {0}), its rows in `chunks` Stream chunks when > 0.
  TensorView* build(int64_t chunks) {
    TensorView* a = makeContigTensor(3);
    TensorView* b = makeContigTensor(3);
    fusion_.addInput(a);
    fusion_.addInput(b);
    TensorView* product = matmul(a, b);
    if (chunks > 0) {
      product->split(1, chunks, /*inner_split=*/false);
      product->axis(1)->parallelize(ParallelType::Stream);
    }
    fusion_.addOutput(sum(product, {0}));
    return product;
  }

  // (batched matmuls, 2-D matmuls, sums) in the lowered program; a sum is a
  // reduction op or the kernel (HostUnit) that runs one.
  // The program the executor runs: the Stream split reaches the sum.
  std::tuple<int64_t, int64_t, int64_t> counts() {
    Fusion copy;
    copyFusion(fusion_, copy);
    runPresegmentationPasses(&copy, /*multidevice=*/false);
    std::unique_ptr<HostIrContainer> program = lowerToHostIr(copy);
    int64_t batched = 0;
    int64_t merged = 0;
    for (const MatmulOp* op : exprsOfKind<MatmulOp>(*program)) {
      (op->a()->rank() == 2 ? merged : batched) += 1;
    }
    auto sums = static_cast<int64_t>(exprsOfKind<ReductionOp>(*program).size() +
                                     exprsOfKind<PostOnStream>(*program).size());
    return {batched, merged, sums};
  }

  at::Tensor expected() const {
    return at::matmul(a_, b_).sum(0);
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
  at::Tensor a_, b_;
};

TEST_F(BatchedMatmulSumsTest, WholeProductBecomesOneGemm) {
  build(/*chunks=*/0);
  EXPECT_EQ(counts(), std::make_tuple(0, 1, 0));
  expectMatchesAten(fusion_, {a_, b_}, {expected()}, 1e-5, 1e-5);
}

// Per chunk of rows (10 in 4: 3, 3, 3, 1), in the loop; B (a program
// input) reshaped once, at the start, for every chunk's GEMM.
TEST_F(BatchedMatmulSumsTest, EachChunkBecomesOneGemm) {
  build(/*chunks=*/4);
  EXPECT_EQ(counts(), std::make_tuple(0, 1, 0));
  Fusion copy;
  copyFusion(fusion_, copy);
  runPresegmentationPasses(&copy, /*multidevice=*/false);
  std::unique_ptr<HostIrContainer> program = lowerToHostIr(copy);
  ASSERT_FALSE(program->topLevel().empty());
  const auto* first = dynamic_cast<const ReshapeOp*>(program->topLevel().front());
  ASSERT_NE(first, nullptr) << program->toString();
  EXPECT_EQ(first->input(0), program->inputs()[1]) << program->toString();
  expectMatchesAten(fusion_, {a_, b_}, {expected()}, 1e-5, 1e-5);
}

TEST_F(BatchedMatmulSumsTest, DisabledPassKeepsTheBatchedProduct) {
  ScopedEnv disable("HOSTIR_DISABLE_PASS", "batched_matmul_sums");
  build(/*chunks=*/0);
  EXPECT_EQ(counts(), std::make_tuple(1, 0, 1));
  expectMatchesAten(fusion_, {a_, b_}, {expected()}, 1e-5, 1e-5);
}

// The batched product is also an output: it must be stored, and the sum
// reads it.
TEST_F(BatchedMatmulSumsTest, ProductReadElsewhereStaysBatched) {
  TensorView* product = build(/*chunks=*/0);
  fusion_.addOutput(product);
  EXPECT_EQ(counts(), std::make_tuple(1, 0, 1));
  expectMatchesAten(fusion_, {a_, b_}, {expected(), at::matmul(a_, b_)}, 1e-5, 1e-5);
}

}  // namespace
}  // namespace hostir::test
