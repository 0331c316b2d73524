// Issue 11, items 3, 4 and 6: what used to be silently wrong or crash at run
// time — split factors given at run time, operand extents the fusion ties
// together, integer overflow in scalar arithmetic, ATen errors escaping
// without naming the op — now ends in a short hostir::Error, cause first.

#include <cstdint>
#include <limits>
#include <string>

#include "hostir/ir/scalar.h"
#include "hostir/runtime/expression_evaluator.h"
#include "reliability/reliability_test_utils.h"

namespace hostir::test {
namespace {

class RunTimeCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }
  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

// --- item 4a: a split factor given at run time -----------------------------

TEST_F(RunTimeCheckTest, RunTimeSplitFactorMustBePositive) {
  for (bool inner_split : {false, true}) {
    SCOPED_TRACE(inner_split ? "inner split" : "outer split");
    Fusion fusion;
    FusionGuard guard(&fusion);
    TensorView* in = makeContigTensor(2);
    fusion.addInput(in);
    Scalar* factor = scalarInput(DataType::Int64);
    TensorView* out = set(in);
    out->split(0, factor, inner_split);
    out->axis(0)->parallelize(ParallelType::Stream);
    fusion.addOutput(out);

    HostExecutor executor(fusion);
    at::Tensor t0 = at::randn({8, 3});
    for (int64_t good : {1, 2, 3, 8, 11}) {
      std::vector<at::Tensor> outs = executor.run(std::vector<PolymorphicValue>{t0, good});
      EXPECT_TRUE(at::equal(outs[0], t0)) << "factor " << good;
    }
    for (int64_t bad : {0, -1, -4}) {
      std::string message = errorMessage([&] {
        executor.run(std::vector<PolymorphicValue>{t0, bad});
      });
      EXPECT_EQ(message.rfind("split factor", 0), 0u) << message;
      EXPECT_TRUE(containsAll(message, {"evaluates to " + std::to_string(bad), "must be positive",
                                        out->toInlineString()}));
    }
  }
}

// --- item 4b: extents the fusion ties together ------------------------------

TEST_F(RunTimeCheckTest, StreamParallelAddOfMismatchedInputsRaisesNamingTheOp) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* out = add(x, y);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  for (int streams : {1, 4}) {
    HostExecutor executor(fusion_, HostIrEvaluatorParams{.number_of_streams = streams});
    at::Tensor a = at::randn({4, 4});
    at::Tensor b = at::randn({8, 4});
    std::string message = errorMessage([&] { executor.run({a, b}); });
    EXPECT_TRUE(containsAll(message, {"= add(", "[4, 4]", "[8, 4]"})) << message;
    EXPECT_LT(message.size(), 800u) << message;
    // Either order of the operands.
    message = errorMessage([&] { executor.run({b, a}); });
    EXPECT_TRUE(containsAll(message, {"= add(", "[4, 4]", "[8, 4]"})) << message;
    // Matching inputs still work, also after the errors.
    at::Tensor c = at::randn({4, 4});
    EXPECT_TRUE(allClose(executor.run({a, c})[0], a + c));
  }
}

TEST_F(RunTimeCheckTest, StreamParallelMatmulWithMismatchedInnerExtentRaises) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 2, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  HostExecutor executor(fusion_);
  std::string message = errorMessage([&] { executor.run({at::randn({6, 5}), at::randn({4, 3})}); });
  EXPECT_TRUE(containsAll(message, {"= matmul(", "[6, 5]", "[4, 3]"})) << message;
}

TEST_F(RunTimeCheckTest, ChecksRunOncePerInputSignature) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  TensorView* out = relu(x);
  fusion_.addOutput(out);
  HostExecutor executor(fusion_);
  executor.run({at::randn({2, 3})});
  executor.run({at::randn({2, 3})});
  EXPECT_EQ(executor.checks().checkedSignatures(), 1u);
  executor.run({at::randn({3, 3})});
  EXPECT_EQ(executor.checks().checkedSignatures(), 2u);
}

// --- item 6: ATen errors name the op, cause first, short ---------------------

TEST_F(RunTimeCheckTest, RunTimeSliceWithStartAfterStopNamesTheSlice) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* start = scalarInput(DataType::Int64);
  Scalar* stop = scalarInput(DataType::Int64);
  TensorView* out = mul(slice(x, 0, start, stop), 2.0);
  fusion_.addOutput(out);
  HostExecutor executor(fusion_);
  at::Tensor t0 = at::randn({6, 3});
  EXPECT_TRUE(allClose(executor.run(std::vector<PolymorphicValue>{t0, int64_t{1}, int64_t{4}})[0],
                       t0.slice(0, 1, 4) * 2.0));
  std::string message = errorMessage([&] {
    executor.run(std::vector<PolymorphicValue>{t0, int64_t{5}, int64_t{2}});
  });
  EXPECT_EQ(message.rfind("negative extent", 0), 0u) << message;
  EXPECT_TRUE(containsAll(message, {"slice(", "start <= stop"})) << message;
}

// Found while writing the test above: a HostUnit reading a tensor whose
// extents are expressions of scalar inputs (`i3 - i2` of a run-time slice)
// is not given those scalars, so its FusionExecutor failed with "i2 has no
// value". The segment now takes such an extent from the tensor bound to it.
TEST_F(RunTimeCheckTest, SegmentReadingARunTimeSliceKnowsItsExtents) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* start = scalarInput(DataType::Int64);
  Scalar* stop = scalarInput(DataType::Int64);
  fusion_.addOutput(relu(slice(x, 0, start, stop)));  // relu: a HostUnit
  HostExecutor executor(fusion_);
  at::Tensor t0 = at::randn({6, 3});
  EXPECT_TRUE(allClose(executor.run(std::vector<PolymorphicValue>{t0, int64_t{1}, int64_t{4}})[0],
                       at::relu(t0.slice(0, 1, 4))));
  // Other bounds on the next runs: nothing of the first run's extent stays.
  EXPECT_TRUE(allClose(executor.run(std::vector<PolymorphicValue>{t0, int64_t{0}, int64_t{6}})[0],
                       at::relu(t0)));
  EXPECT_EQ(executor.run(std::vector<PolymorphicValue>{t0, int64_t{2}, int64_t{2}})[0].size(0), 0);
}

TEST_F(RunTimeCheckTest, HugeAllocationNamesTheTensor) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* rows = scalarInput(DataType::Int64);
  // 2^40 x 2^30 floats: more bytes than 64 bits count, caught before any
  // memory is touched.
  TensorView* big = full({rows, IrBuilder::create<Scalar>(int64_t{1} << 30)},
                         IrBuilder::create<Scalar>(1.0), DataType::Float);
  fusion_.addOutput(relu(x));
  fusion_.addOutput(big);
  HostExecutor executor(fusion_);
  std::string message = errorMessage([&] {
    executor.run(std::vector<PolymorphicValue>{at::randn({1, 1}), int64_t{1} << 40});
  });
  EXPECT_EQ(message.rfind("tensor too large", 0), 0u) << message;
  EXPECT_TRUE(containsAll(message, {"full("})) << message;
  // A large allocation that fits in 64 bits but not in memory: ATen's
  // error, without its backtrace, naming the allocation.
  message = errorMessage([&] {
    executor.run(std::vector<PolymorphicValue>{at::randn({1, 1}), int64_t{1} << 28});
  });
  EXPECT_TRUE(containsAll(message, {"T"})) << message;
  EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;
  EXPECT_LT(message.size(), 800u) << message;
}

TEST_F(RunTimeCheckTest, AtenErrorOnAStreamIsShortWithTheCauseFirst) {
  // A host program built by hand (no fusion checks): the ATen error happens
  // on a worker stream inside a loop.
  auto hic = std::make_unique<HostIrContainer>();
  FusionGuard guard(hic.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  hic->addInput(a);
  hic->addInput(b);
  hic->pushBackTopLevelExpr(IrBuilder::create<SetCurrentStream>(
      IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{1}))));
  TensorView* product = matmul(a, b);
  hic->pushBackTopLevelExpr(product->definition());
  hic->addOutput(product);
  HostIrEvaluator evaluator(std::move(hic));
  std::string message = errorMessage([&] {
    evaluator.run({at::randn({2, 3}), at::randn({4, 5})});
  });
  EXPECT_EQ(message.find("mat1 and mat2 shapes cannot be multiplied"), 0u) << message;
  EXPECT_TRUE(containsAll(message, {"stream 2 failed running", "= matmul("})) << message;
  EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;  // no backtrace
  EXPECT_LT(message.size(), 600u) << message;
}

TEST_F(RunTimeCheckTest, AtenErrorOnTheHostNamesTheOp) {
  // A reshape whose target does not fit, bound on the host (a view).
  auto hic = std::make_unique<HostIrContainer>();
  FusionGuard guard(hic.get());
  TensorView* x = makeContigTensor(2);
  hic->addInput(x);
  TensorView* reshaped = reshape(x, {5, 5});
  hic->pushBackTopLevelExpr(reshaped->definition());
  hic->addOutput(reshaped);
  HostIrEvaluator evaluator(std::move(hic));
  std::string message = errorMessage([&] { evaluator.run({at::randn({3, 4})}); });
  EXPECT_TRUE(containsAll(message, {"reshape("})) << message;
  EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;
  EXPECT_LT(message.size(), 600u) << message;
}

// --- item 3: scalar arithmetic overflow --------------------------------------

TEST_F(RunTimeCheckTest, ScalarOverflowAtRunTimeIsAnError) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto* a = IrBuilder::create<Scalar>(DataType::Int64);
  auto* b = IrBuilder::create<Scalar>(DataType::Int64);
  struct Case {
    Val* expr;
    int64_t lhs;
    int64_t rhs;
  };
  for (const Case& c :
       {Case{div(a, b), kMin, -1}, Case{ceilDiv(a, b), kMin, -1}, Case{add(a, b), kMax, 1},
        Case{sub(a, b), kMin, 1}, Case{mul(a, b), kMax / 2 + 1, 2}, Case{ceilDiv(a, b), kMax, 2}}) {
    ExpressionEvaluator ee;
    ee.bind(a, c.lhs);
    ee.bind(b, c.rhs);
    if (c.lhs == kMax && c.rhs == 2 &&
        c.expr->definition()->as<BinaryOp>()->type() == BinaryOpType::CeilDiv) {
      EXPECT_EQ(ee.evaluateInt(c.expr), kMax / 2 + 1);  // no overflow in (a + b - 1)
      continue;
    }
    std::string message = errorMessage([&] { ee.evaluateInt(c.expr); });
    EXPECT_EQ(message.rfind("integer overflow", 0), 0u) << message;
    EXPECT_TRUE(containsAll(message, {c.expr->toInlineString()})) << message;
  }
  ExpressionEvaluator ee;
  ee.bind(a, kMin);
  ee.bind(b, int64_t{-1});
  EXPECT_EQ(ee.evaluateInt(mod(a, b)), 0);  // defined, and no SIGFPE
}

}  // namespace
}  // namespace hostir::test
