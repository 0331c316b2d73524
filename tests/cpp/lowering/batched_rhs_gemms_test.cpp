// The batched_rhs_gemms pass: a matrix times a batch of matrices (the
// attention's per-head projections) becomes one GEMM against the batch's
// columns side by side, whole or per chunk of a stream loop, with the
// side-by-side copy of a program input made once before the loop. Every
// case runs against ATen, in float and double.

#include <gtest/gtest.h>

#include <optional>

#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/ir/cloner.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

class BatchedRhsGemmsTest : public ::testing::TestWithParam<DataType> {
 protected:
  void SetUp() override {
    at::manual_seed(0);
    const at::ScalarType type = GetParam() == DataType::Double ? at::kDouble : at::kFloat;
    a_ = at::randn({kRows, kInner}, type);
    b_ = at::randn({kBatch, kInner, kCols}, type);
  }

  static constexpr int64_t kBatch = 3;
  static constexpr int64_t kRows = 10;
  static constexpr int64_t kInner = 4;
  static constexpr int64_t kCols = 6;

  // matmul(a, b) over the program inputs (b doubled first when
  // `computed_rhs`), its rows in `chunks` Stream chunks when > 0.
  TensorView* build(int64_t chunks, bool computed_rhs = false) {
    TensorView* a = makeContigTensor(2, GetParam());
    TensorView* b = makeContigTensor(3, GetParam());
    fusion_.addInput(a);
    fusion_.addInput(b);
    TensorView* product = matmul(a, computed_rhs ? mul(b, 2.0) : b);
    if (chunks > 0) {
      product->split(1, chunks, /*inner_split=*/false);
      product->axis(1)->parallelize(ParallelType::Stream);
    }
    fusion_.addOutput(product);
    return product;
  }

  std::unique_ptr<HostIrContainer> lowered() {
    Fusion copy;
    copyFusion(fusion_, copy);
    runPresegmentationPasses(&copy, /*multidevice=*/false);
    return lowerToHostIr(copy);
  }

  // (batched matmuls, 2-D matmuls) anywhere in the program.
  static std::pair<int64_t, int64_t> gemms(const HostIrContainer& program) {
    int64_t batched = 0;
    int64_t merged = 0;
    for (const MatmulOp* op : exprsOfKind<MatmulOp>(program)) {
      (op->b()->rank() == 2 ? merged : batched) += 1;
    }
    return {batched, merged};
  }

  // The side-by-side copies of B ([k, b·n] reshapes) at the top level.
  static int64_t topLevelSideBySide(const HostIrContainer& program) {
    int64_t count = 0;
    for (const Expr* expr : program.topLevel()) {
      if (const auto* reshape = dynamic_cast<const ReshapeOp*>(expr);
          reshape != nullptr && reshape->output(0)->as<TensorView>()->rank() == 2) {
        ++count;
      }
    }
    return count;
  }

  // Lowers the fusion, expects its (batched, 2-D) GEMMs and, when given,
  // its top-level side-by-side copies, runs it against ATen (b scaled by
  // `scale`), and returns the lowered program.
  std::unique_ptr<HostIrContainer> expectLowering(int64_t batched, int64_t merged,
                                                  std::optional<int64_t> side_by_side,
                                                  double scale = 1.0) {
    std::unique_ptr<HostIrContainer> program = lowered();
    EXPECT_EQ(gemms(*program), std::make_pair(batched, merged));
    if (side_by_side) {
      EXPECT_EQ(topLevelSideBySide(*program), *side_by_side);
    }
    expectMatchesAten(fusion_, {a_, b_}, {expected(scale)}, tolerance(), tolerance());
    return program;
  }

  at::Tensor expected(double scale = 1.0) const {
    return at::matmul(a_, b_ * scale);
  }

  double tolerance() const {
    return GetParam() == DataType::Double ? 1e-12 : 1e-5;
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
  at::Tensor a_, b_;
};

TEST_P(BatchedRhsGemmsTest, WholeProductBecomesOneGemm) {
  build(/*chunks=*/0);
  expectLowering(/*batched=*/0, /*merged=*/1, /*side_by_side=*/1);
}

// Per chunk of rows (10 in 4: 3, 3, 3, 1): one GEMM in the loop, the
// columns of B put side by side once, before it.
TEST_P(BatchedRhsGemmsTest, EachChunkBecomesOneGemmOverOneCopyOfB) {
  build(/*chunks=*/4);
  std::unique_ptr<HostIrContainer> program =
      expectLowering(/*batched=*/0, /*merged=*/1, /*side_by_side=*/1);
  for (const Expr* expr : program->topLevel()) {
    EXPECT_FALSE(expr->isA<MatmulOp>()) << "the GEMM runs per chunk, in the loop";
  }
}

// B computed in the program: the copy is made where the GEMM is.
TEST_P(BatchedRhsGemmsTest, ComputedRhsIsMergedInPlace) {
  build(/*chunks=*/0, /*computed_rhs=*/true);
  expectLowering(/*batched=*/0, /*merged=*/1, /*side_by_side=*/std::nullopt, /*scale=*/2.0);
}

TEST_P(BatchedRhsGemmsTest, DisabledPassKeepsTheBatchedProduct) {
  ScopedEnv disable("HOSTIR_DISABLE_PASS", "batched_rhs_gemms");
  build(/*chunks=*/4);
  expectLowering(/*batched=*/1, /*merged=*/0, /*side_by_side=*/0);
}

// A batch of left operands (a [b, m, k]) is already one batched GEMM per
// entry with nothing shared: left alone.
TEST_P(BatchedRhsGemmsTest, BatchedLeftOperandIsLeftAlone) {
  TensorView* a = makeContigTensor(3, GetParam());
  TensorView* b = makeContigTensor(3, GetParam());
  fusion_.addInput(a);
  fusion_.addInput(b);
  fusion_.addOutput(matmul(a, b));
  std::unique_ptr<HostIrContainer> program = lowered();
  EXPECT_EQ(gemms(*program), std::make_pair(int64_t{1}, int64_t{0}));
  at::Tensor batched_a = at::randn({kBatch, kRows, kInner}, a_.scalar_type());
  expectMatchesAten(fusion_, {batched_a, b_}, {at::matmul(batched_a, b_)}, tolerance(),
                    tolerance());
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BatchedRhsGemmsTest,
                         ::testing::Values(DataType::Float, DataType::Double),
                         [](const auto& info) {
                           return info.param == DataType::Double ? "Double" : "Float";
                         });

}  // namespace
}  // namespace hostir::test
